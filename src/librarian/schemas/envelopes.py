"""The pipeline's output contract: LinkProposal and ReviewItem.

Every model forbids additional properties, so the exported JSON Schemas say
`additionalProperties: false` at every level, as consumers require.
Optional fields are omitted from the JSON when unset (see `dump_envelope`).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from librarian.schemas import SCHEMA_VERSION

CreId = Annotated[str, Field(pattern=r"^\d{3}-\d{3}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReasonCode(StrEnum):
    BELOW_THRESHOLD = "BELOW_THRESHOLD"
    NO_CANDIDATES = "NO_CANDIDATES"
    ADVERSARIAL_FLAG = "ADVERSARIAL_FLAG"
    UPDATE_AMBIGUOUS = "UPDATE_AMBIGUOUS"


# Our reason beside the RFC's four: no CRE covers the section (the unmappable gate). The
# RFC's ReviewItem has no such code, so its envelope says BELOW_THRESHOLD and, in its
# retrieval audit, why; the store, the run summary and the workbench say UNMAPPABLE.
UNMAPPABLE = "UNMAPPABLE"
UNMAPPABLE_AUDIT = "unmappable: best hub cosine "
SOURCE_AUDIT = "source="  # the audit's part saying how the section's source was linked


class AdversarialFlag(StrEnum):
    UNKNOWN_CRE_REFERENCE = "UNKNOWN_CRE_REFERENCE"
    CONFLICTING_CRE_REFERENCES = "CONFLICTING_CRE_REFERENCES"
    NEGATION_MISMATCH = "NEGATION_MISMATCH"
    NEGATED_CRE_REFERENCE = "NEGATED_CRE_REFERENCE"  # "does not satisfy CRE 616-305"
    HIDDEN_CHARACTERS = "HIDDEN_CHARACTERS"  # bidi or zero-width characters in a citation


class Source(_Strict):
    type: Literal["github", "url", "rss"]
    repo: str | None = None
    url: str | None = None
    commit_sha: str | None = Field(default=None, min_length=7)
    commit_message: str | None = None
    committed_at: datetime
    author_login: str | None = None


class Locator(_Strict):
    kind: Literal["repo_path", "url", "feed_item"]
    # The RFC requires it: the path for repo_path, the post guid (else the url) for
    # feed_item, the url for url locators.
    id: str = Field(min_length=1)
    path: str | None = None
    url: str | None = None
    title: str | None = None


class Knowledge(_Strict):
    text: str = Field(min_length=1)
    source: Source
    locator: Locator
    security_summary: str | None = None


class Candidate(_Strict):
    cre_id: CreId
    cre_name: str
    score_vector: float
    score_rerank: float | None = None
    score_hybrid: float | None = None


class Retrieval(_Strict):
    retriever: str = Field(min_length=1, description="names every model that actually ran")
    candidates: list[Candidate]
    reranked: list[Candidate]
    threshold: float = Field(ge=0.0, le=1.0)


class Link(_Strict):
    cre_id: CreId
    link_type: Literal["LinkedTo", "AutomaticallyLinkedTo"]
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str | None = None


class UpdateDetection(_Strict):
    is_update: bool = False
    prior_chunk_id: str | None = None
    prior_document_ref: str | None = None
    adversarial_flags: list[AdversarialFlag] = Field(default_factory=list)


class _Envelope(_Strict):
    """What every output envelope carries: which section, from which run, and why."""

    schema_version: str = SCHEMA_VERSION
    chunk_id: str = Field(min_length=1)
    artifact_id: str = Field(min_length=1)
    pipeline_run_id: str = Field(min_length=1)
    knowledge: Knowledge
    retrieval: Retrieval
    update_detection: UpdateDetection = Field(default_factory=UpdateDetection)


class LinkProposal(_Envelope):
    classified_at: datetime
    status: Literal["linked"] = "linked"
    links: list[Link] = Field(min_length=1)


class ReviewItem(_Envelope):
    review_id: str = Field(min_length=1)
    created_at: datetime
    status: Literal["review_required"] = "review_required"
    reason_code: ReasonCode
    suggested_links: list[Link] | None = None


Envelope = LinkProposal | ReviewItem


def dump_envelope(envelope: Envelope) -> dict[str, Any]:
    """JSON-ready dict, unset optionals omitted (consumers refuse unknown keys, not absent ones)."""
    return envelope.model_dump(mode="json", exclude_none=True)


def envelope_line(envelope: Envelope) -> str:
    """The envelope as one JSONL line, what `dump_envelope` holds: serialised by pydantic's
    own encoder in one call (a third of the time of the dict through `json.dumps`, the
    largest part of writing a run's files)."""
    return envelope.model_dump_json(exclude_none=True) + "\n"


def review_reason(envelope: ReviewItem, unmappable: bool) -> str:
    """Why a person must look, in our words: the RFC's code, or UNMAPPABLE."""
    return UNMAPPABLE if unmappable else envelope.reason_code.value
