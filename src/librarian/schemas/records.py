"""Internal records passed between stages, and the run summary."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from librarian.schemas.envelopes import CreId, Envelope, Locator, Source
from librarian.schemas.routing import RoutingDecision


class Closable(Protocol):
    def close(self) -> None: ...


class Section(BaseModel):
    """One validated input row, whichever shape it came in."""

    model_config = ConfigDict(frozen=True)

    line: int = Field(ge=1, description="1-based line number in the input file")
    chunk_id: str
    artifact_id: str
    input_shape: Literal["queue_row", "knowledge_item"]
    text: str
    title_hint: str | None = None
    heading_path: tuple[str, ...] = ()
    source: Source
    locator: Locator
    security_summary: str | None = None
    upstream_run_id: str | None = None
    source_label: Literal["KNOWLEDGE", "UNCERTAIN"] = "KNOWLEDGE"  # the upstream filter's
    content_hash: str = Field(description="sha256 of the text, hex")
    span_index: int | None = Field(default=None, description="which span of the artifact")
    collections: tuple[str, ...] | None = Field(
        default=None, description="hub collections the input pins this section to"
    )

    @property
    def source_key(self) -> str:
        """The standard this section belongs to (`source_key_of`)."""
        return source_key_of(
            self.source.type,
            self.source.repo,
            self.source.url or self.locator.url,
            self.artifact_id,
        )

    @property
    def span_key(self) -> str:
        """Where in which artifact this text sits: equal keys, different text = an update."""
        where = self.locator.path or self.locator.url or self.locator.id or ""
        span = "" if self.span_index is None else str(self.span_index)
        return "\x1f".join((self.artifact_id, self.locator.kind, where, span))


def span_index_of(span_key: str) -> int | None:
    """The span index a `Section.span_key` was built with (None: none), for a section
    rebuilt from its envelope, which does not carry it."""
    span = span_key.rsplit("\x1f", 1)[-1]
    return int(span) if span.isdigit() else None


# The source URL of a plain input's rows (pipeline/plain.py): the file's content hash.
PLAIN_URN = "urn:librarian:plain:"
# A plain row's place beyond its id, at the end of its locator id: "(page 3, line 12)".
_PLACE = re.compile(r"^(?P<row>.*?) \((?P<place>(?:page|paragraph|table) [^()]*)\)$", re.S)


def plain_locator_id(document: str, row: str, place: str | None = None) -> str:
    """A plain input's row as its locator id: `DOCUMENT#ROW`, then its place when the
    shape knows one (`policy.pdf#SEC-01 (page 3, line 12)`)."""
    return f"{document}#{row}" + (f" ({place})" if place else "")


def split_plain_locator_id(locator_id: str) -> tuple[str, str, str | None] | None:
    """(document, row, place) of a plain row's locator id; None when it is not one."""
    if "#" not in locator_id:
        return None
    document, row = locator_id.rsplit("#", 1)
    found = _PLACE.match(row)
    return (document, found["row"], found["place"]) if found else (document, row, None)


def source_key_of(
    kind: str, repo: str | None, url: str | None, artifact_id: str | None = None
) -> str:
    """The standard a section belongs to: the repository of a github item, the feed of an
    rss item, the site of a url; a plain input's document (its artifact, `plain:NAME`:
    every CSV and Markdown file was one source `url:` before, their URN having no site)."""
    if kind == "url" and (url or "").startswith(PLAIN_URN) and artifact_id:
        return artifact_id
    if kind == "github" and repo:
        return f"github:{repo}"
    if kind == "url":
        return "url:" + urlsplit(url or "").netloc.lower()
    return f"{kind}:{url or ''}"


class RejectCode(StrEnum):
    INVALID_ENCODING = "INVALID_ENCODING"
    INVALID_JSON = "INVALID_JSON"
    NOT_AN_OBJECT = "NOT_AN_OBJECT"
    UNKNOWN_SHAPE = "UNKNOWN_SHAPE"
    MALFORMED_ROW = "MALFORMED_ROW"
    MISSING_FIELD = "MISSING_FIELD"
    INVALID_FIELD = "INVALID_FIELD"
    EMPTY_TEXT = "EMPTY_TEXT"
    MISSING_PROVENANCE = "MISSING_PROVENANCE"
    DUPLICATE_CHUNK_CONFLICT = "DUPLICATE_CHUNK_CONFLICT"
    PROCESSING_ERROR = "PROCESSING_ERROR"


class SkipCode(StrEnum):
    LABEL_NOT_OURS = "LABEL_NOT_OURS"
    STATUS_NOT_ACCEPTED = "STATUS_NOT_ACCEPTED"
    DUPLICATE_CHUNK = "DUPLICATE_CHUNK"
    UNCHANGED = "UNCHANGED"
    # A document's preamble or definitions: before its first rule, no requirement id and
    # no requirement's words (`pipeline.shapes.rows.requirement_shaped`).
    NOT_A_REQUIREMENT = "NOT_A_REQUIREMENT"


class _RowNote(BaseModel):
    """Why an input line produced no envelope."""

    line: int
    chunk_id: str | None = None
    message: str


class Rejection(_RowNote):
    """A row that could not be processed: kept, with why, never dropped."""

    reason: RejectCode
    field: str | None = None


def rejected(
    line: int, code: RejectCode, why: str, chunk_id: str | None = None, field: str | None = None
) -> Rejection:
    """A refused line, its message starting with where it is."""
    message = f"line {line}: {why}"
    return Rejection(line=line, chunk_id=chunk_id, reason=code, field=field, message=message)


class Skip(_RowNote):
    """A well-formed row that is not for the librarian (or already seen in this run)."""

    reason: SkipCode


class HubNode(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    cre_id: CreId
    name: str = Field(min_length=1)
    parent_id: CreId | None = None
    hierarchy_path: tuple[str, ...] = Field(min_length=1)
    depth: int = Field(ge=0)
    is_leaf: bool
    related_ids: tuple[str, ...] = ()


class Outcome(StrEnum):
    LINKED = "linked"
    REVIEW = "review"
    REJECTED = "rejected"
    SKIPPED = "skipped"


class RunSummary(BaseModel):
    """Every non-blank input line lands in exactly one outcome; `check_accounting` enforces it."""

    run_id: str
    mode: Literal["dry-run", "commit"] = "dry-run"
    input: str
    database: str | None = Field(default=None, description="commit mode: where decisions went")
    stored: dict[str, int] = Field(
        default_factory=dict, description="commit mode: decisions and rejections written"
    )
    out_dir: str
    started_at: str
    finished_at: str | None = None
    lines_total: int = 0
    blank_lines: int = 0
    read: int = 0
    linked: int = 0
    review: int = 0
    rejected: int = 0
    skipped: int = 0
    by_reason: dict[str, dict[str, int]] = Field(default_factory=dict)
    explicit_fast_path: int = 0
    truncated_for_model: int = 0
    routing: dict[str, int] = Field(
        default_factory=dict,
        description="sections routed, by effective strategy; narrowed and widened counts",
    )
    timings_s: dict[str, float] = Field(default_factory=dict)
    reading: list[str] = Field(
        default_factory=list,
        description="a document's input: how it was split into items, and any warning",
    )
    withdrawn: list[str] = Field(
        default_factory=list,
        description="commit mode, a document's input: the requirements its new version no "
        "longer holds, withdrawn or marked, and those back in it",
    )
    sources: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="by source key: how it was linked as a whole (items, priors, decisions "
        "seen, its threshold, decisions needed before its own), as of its last batch",
    )
    models: dict[str, str | None] = Field(default_factory=dict)
    retriever: str = ""
    hub: dict[str, str | int] = Field(default_factory=dict)
    threshold: float = 0.0  # the run's settings fill these in
    policy: dict[str, Any] = Field(
        default_factory=dict,
        description="how it decided, whole: its `DecisionPolicy` (a committed run stores it too)",
    )
    top_k: int = 0
    top_n: int = 0
    batch_size: int = 0
    batches: int = 0
    outputs: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True)
class RawBatch:
    """Up to `max_lines` non-blank lines read from a byte offset, for streaming input."""

    lines: list[tuple[int, bytes]]
    blank_lines: int
    next_offset: int
    next_line: int
    eof: bool
    queue_ids: list[int] = field(default_factory=list)  # rows claimed from the queue table
    # Lines their source read into a record itself, each line's record: a plain shape's
    # rows, validated (`ingest.parse_item`: no JSON to parse), its notes skipped
    # (NOT_A_REQUIREMENT), what it could not read as a row (a CSV row with more cells than
    # its header, a queue-table row holding a BLOB) rejected. Every other line is parsed
    # (C.0). Such a line's bytes are what a refused row keeps as its raw input.
    records: dict[int, Section | Rejection | Skip] = field(default_factory=dict)


@dataclass(frozen=True)
class Claimed:
    """A batch the queue table claimed, and the open transaction holding its claim, which
    the database sink stores the batch in and the runner closes. The batch itself is data
    only: it travels to workers and the spill; the claim stays with the runner."""

    raw: RawBatch
    claim: Closable


@dataclass(frozen=True)
class DecisionFacts:
    """What the decision of one model row was, beside its envelope, kept in the store's own
    columns: how its source was linked (`SourceStatus.said`) and whether the unmappable gate
    found no CRE that covers it. Readers use these, never the audit text."""

    linked_as: str | None = None
    unmappable: bool = False


@dataclass
class BatchResult:
    """What the pipeline made of one batch: an envelope per section linked, a rejection per
    row refused or failed, a skip per row not for us, with the batch's counts."""

    envelopes: list[Envelope]
    explicit: int
    truncated: int
    timings_s: dict[str, float] = field(default_factory=dict)
    reranked: int = 0
    routing: list[RoutingDecision] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    # Where each source linked stands (C.5), by source key: what the summary shows.
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What each source's cut was chosen from (a `policy.CutEvidence`, which this layer cannot
    # name), by source key: the database sink stores it with the cut, as JSON; nothing else
    # reads it, so a dry run never converts it.
    cut_evidence: dict[str, Any] = field(default_factory=dict)
    cut_chunks: list[str] = field(default_factory=list)  # texts cut to fit the model
    # What C.5 needs of each model row, by chunk id (the store keeps it: `Candidates`).
    candidates: dict[str, dict[str, Any]] = field(default_factory=dict)
    facts: dict[str, DecisionFacts] = field(default_factory=dict)  # by chunk id, model rows

    def merge(self, one: BatchResult) -> None:
        self.sources.update(one.sources)
        self.cut_evidence.update(one.cut_evidence)
        self.facts.update(one.facts)
        self.cut_chunks.extend(one.cut_chunks)
        self.candidates.update(one.candidates)
        self.envelopes.extend(one.envelopes)
        self.explicit += one.explicit
        self.truncated += one.truncated
        self.reranked += one.reranked
        self.routing.extend(one.routing)
        self.rejections.extend(one.rejections)
        self.skips.extend(one.skips)
        for stage, seconds in one.timings_s.items():
            self.timings_s[stage] = self.timings_s.get(stage, 0.0) + seconds


@dataclass(frozen=True)
class Finished:
    """A batch with every row's outcome, on its way to the sinks."""

    raw: RawBatch
    sections: list[Section]
    result: BatchResult
    claim: Closable | None = None  # the queue claim's transaction (`Claimed`), for the sinks


@dataclass(frozen=True)
class Reviewed:
    """One decided item of a source: its text and the CREs people chose for it.
    `key`: its item key (a later version of the same section is not a rival)."""

    key: str
    text: str
    title: str | None
    cre_ids: tuple[str, ...]


@dataclass(frozen=True)
class SourceHistory:
    """What a source already has: the CREs it links, and its reviewers' decisions."""

    linked: frozenset[str] = frozenset()
    reviewed: tuple[Reviewed, ...] = ()


History = Mapping[str, SourceHistory]  # by source key (`Section.source_key`)


@dataclass(frozen=True)
class EarlierItem:
    """A source's item stored by an earlier window (an earlier queue claim), as C.5 needs
    it: its key and text, its candidates' CRE ids, retrieval scores and evidence."""

    key: str
    text: str
    ids: tuple[str, ...]
    scores: tuple[float, ...]
    evidence: tuple[float, ...] | None


@dataclass(frozen=True)
class Known:
    """What the store knows of one source when a window links it: its history (None:
    nothing) and its earlier items, which C.5 links with the window's rows."""

    history: SourceHistory | None = None
    earlier: tuple[EarlierItem, ...] = ()


@dataclass(frozen=True)
class PriorDecision:
    """What was decided before for a span now read again (the safety stage's input)."""

    chunk_id: str
    text: str
    linked_cre: str | None  # the CRE the prior text was linked to, if it was
