"""The two input shapes of the knowledge queue."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from librarian.text import has_visible_text

ACCEPTED_LABELS = frozenset({"KNOWLEDGE", "UNCERTAIN"})

# Error types that ingest maps to their own rejection codes.
EMPTY_TEXT_ERROR = "empty_text"
MISSING_PROVENANCE_ERROR = "missing_provenance"


def _not_blank(value: str) -> str:
    if not has_visible_text(value):
        raise PydanticCustomError(
            EMPTY_TEXT_ERROR, "text is empty, or only white space and invisible characters"
        )
    return value


def _as_utc(value: datetime) -> datetime:
    # A timestamp without a zone is read as UTC: every envelope carries an offset.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _absolute_uri(value: str | None) -> str | None:
    if value is not None and not URI.fullmatch(value):
        raise ValueError("must be an absolute URI (scheme:...), with no spaces")
    return value


Timestamp = Annotated[datetime, AfterValidator(_as_utc)]
Uri = Annotated[str, AfterValidator(_absolute_uri)]
# An absolute URI: a scheme, a colon, then no white space or control characters.
URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f]+")


def _require_provenance(model: BaseModel, fields: tuple[str, ...], what: str) -> None:
    missing = [f for f in fields if not getattr(model, f)]
    if missing:
        raise PydanticCustomError(
            MISSING_PROVENANCE_ERROR,
            "{what} needs {missing}",
            {"what": what, "missing": ", ".join(missing)},
        )


# The store's columns hold these (on SQLite as on PostgreSQL): longer is refused on entry.
MAX_ID_CHARS = 512
MAX_RUN_ID_CHARS = 128


class QueueRow(BaseModel):
    """A row as the upstream noise filter writes it; extra columns are tolerated."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=False)

    id: str | int | None = None
    content_hash: str | None = None
    chunk_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    artifact_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    pipeline_run_id: str | None = Field(default=None, max_length=MAX_RUN_ID_CHARS)
    schema_version: str | None = None
    source_type: Literal["github", "rss"]
    source_repo: str | None = None
    source_commit_sha: str | None = None
    source_committed_at: Timestamp | None = None
    feed_url: Uri | None = None
    post_guid: str | None = None
    locator_kind: str | None = None
    locator_path: str | None = None
    span_index: int | None = Field(default=None, ge=0)
    span_total: int | None = Field(default=None, ge=0)
    span_heading_path: str | None = None
    collections: list[str] | None = Field(
        default=None, description="pin: search only these hub collections"
    )
    text: str
    llm_label: str
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    llm_reasoning: str | None = None
    created_at: Timestamp | None = None
    consumed_at: Timestamp | None = None

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        return _not_blank(value)

    @model_validator(mode="after")
    def _provenance_for_source_type(self) -> QueueRow:
        need: tuple[str, ...] = ("source_repo", "source_commit_sha", "locator_path")
        if self.source_type == "rss":
            need = ("feed_url", "post_guid")
        _require_provenance(self, need, f"{self.source_type} row")
        return self


class FilterStage(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    passed: bool


class KnowledgeSource(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["github", "url", "rss"]
    repo: str | None = None
    url: Uri | None = None
    commit_sha: str | None = Field(default=None, min_length=7)
    commit_message: str | None = None
    committed_at: Timestamp | None = None
    author_login: str | None = None

    @model_validator(mode="after")
    def _github_needs_repo_and_sha(self) -> KnowledgeSource:
        if self.type == "github":
            _require_provenance(self, ("repo", "commit_sha"), "github source")
        return self


class KnowledgeLocator(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: Literal["repo_path", "url", "feed_item"]
    id: str | None = None
    path: str | None = None
    url: Uri | None = None
    title: str | None = None

    @model_validator(mode="after")
    def _kind_needs_its_address(self) -> KnowledgeLocator:
        address = ("path",) if self.kind == "repo_path" else ("url",)
        _require_provenance(self, address, f"{self.kind} locator")
        return self


class KnowledgeContent(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        return _not_blank(value)

    title_hint: str | None = None
    keywords: list[str] = Field(default_factory=list)
    language: str | None = None


class KnowledgeFilter(BaseModel):
    model_config = ConfigDict(extra="ignore")

    stages: list[FilterStage] = Field(default_factory=list)
    is_security_knowledge: bool | None = None
    security_summary: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class KnowledgeItem(BaseModel):
    """The upstream filter's envelope for one chunk; a tolerant reader ignores unknown fields."""

    model_config = ConfigDict(extra="ignore")

    schema_version: str = Field(pattern=r"^0\.\d+\.\d+$")
    chunk_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    artifact_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    event_id: str | None = None
    pipeline_run_id: str | None = Field(default=None, max_length=MAX_RUN_ID_CHARS)
    filtered_at: Timestamp
    status: Literal["accepted", "rejected", "deferred"]
    source: KnowledgeSource
    locator: KnowledgeLocator
    content: KnowledgeContent
    filter: KnowledgeFilter | None = None
    collections: list[str] | None = Field(
        default=None, description="pin: search only these hub collections"
    )
    section_path: list[str] | None = Field(
        default=None, description="headings above the section (plain inputs; ours, optional)"
    )
