"""Tables of the decision store. Schema changes go through Alembic (store/migrations)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ColumnElement,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    and_,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class DecisionRow(Base):
    """One LinkProposal or ReviewItem, whole, with the columns queries need indexed.

    Its columns include the upstream C -> D handoff contract (decision_queue v0.2: id,
    chunk_id, artifact_id, pipeline_run_id, schema_version, source_label, status,
    reason_code, review_id, confidence, envelope, created_at, consumed_at): any review
    tool may read `consumed_at IS NULL AND status = 'review_required'` and set
    consumed_at when its reviewer has decided."""

    __tablename__ = "decision_queue"
    __table_args__ = (
        # Idempotency: a chunk with the same text is decided once, however often it is read.
        UniqueConstraint("chunk_id", "content_hash", name="uq_decision_chunk_content"),
        Index("ix_decision_status_created", "status", "created_at"),
        Index("ix_decision_open", "status", "consumed_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chunk_id: Mapped[str] = mapped_column(String(512), index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    artifact_id: Mapped[str] = mapped_column(String(512), index=True)
    span_key: Mapped[str] = mapped_column(String(2048), index=True)
    # The standard the section belongs to (`Section.source_key`): linking a source as a
    # whole reads what the source already links and what its reviewers decided.
    source_key: Mapped[str | None] = mapped_column(String(1024), index=True, nullable=True)
    pipeline_run_id: Mapped[str] = mapped_column(String(128), index=True)
    schema_version: Mapped[str] = mapped_column(String(16), server_default="0.1.0")
    source_label: Mapped[str] = mapped_column(String(16), server_default="KNOWLEDGE")
    status: Mapped[str] = mapped_column(String(32))  # linked | review_required | withdrawn
    top_cre_id: Mapped[str | None] = mapped_column(String(7), index=True)
    confidence: Mapped[float | None] = mapped_column(Float)
    reason_code: Mapped[str | None] = mapped_column(String(64))
    is_update: Mapped[bool] = mapped_column(default=False)
    prior_chunk_id: Mapped[str | None] = mapped_column(String(512))
    review_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    queue_row_id: Mapped[int | None] = mapped_column(Integer, index=True)
    text: Mapped[str] = mapped_column(Text)
    heading_path: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)  # for reviewers
    envelope: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Which hub collections the section searched and why (schemas/routing.py).
    routing: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Set when a reviewer (ours or another tool) has decided a ReviewItem.
    consumed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # `Pipeline.models_digest` of the models that decided it: an open item decided by
    # other models is decided again.
    models_digest: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # What C.5 needs of the item ({"ids", "scores", "evidence"}): a later claim of the
    # same source is linked with it as a file's rows are (`store.history.earlier_items`).
    candidates: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # How its source was linked when it was decided (`DecisionFacts.linked_as`).
    source_linked: Mapped[str | None] = mapped_column(Text, nullable=True)  # a sentence
    # When its section left its document (a plain document read whole no longer holds
    # it): an open item is closed as `withdrawn`; a decided one keeps its decision.
    withdrawn_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class RejectedRow(Base):
    """A row that could not be processed, with its raw input: a bad row is never lost."""

    __tablename__ = "rejections"
    __table_args__ = (UniqueConstraint("source", "line", "raw_sha256", name="uq_rejection"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(128), index=True)
    source: Mapped[str] = mapped_column(String(1024))  # file name, or "knowledge_queue"
    line: Mapped[int] = mapped_column(Integer)  # line number, or knowledge_queue id
    chunk_id: Mapped[str | None] = mapped_column(String(512))
    reason: Mapped[str] = mapped_column(String(64))
    field: Mapped[str | None] = mapped_column(String(128))
    message: Mapped[str] = mapped_column(Text)
    raw: Mapped[str] = mapped_column(Text)  # undecodable bytes kept as \\x escapes
    raw_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class HumanDecisionRow(Base):
    """A reviewer's decision on a ReviewItem, as the RFC HumanDecision it is (`record`),
    with the columns queries need. Undo stamps `undone_at` (and reopens the item); the
    record stays, so who decided what, and took it back, is never lost. A change is a new
    row superseding the old (`supersedes_id`, `superseded_at`)."""

    __tablename__ = "human_decisions"
    __table_args__ = (
        Index("ix_human_decisions_row", "decision_row_id", "undone_at"),
        Index("ix_human_decisions_by", "decided_by", "decided_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    decision_uuid: Mapped[str] = mapped_column(String(36), unique=True)
    decision_row_id: Mapped[int] = mapped_column(Integer)  # decision_queue.id
    review_id: Mapped[str] = mapped_column(String(64))
    chunk_id: Mapped[str | None] = mapped_column(String(512))
    pipeline_run_id: Mapped[str | None] = mapped_column(String(128))
    action: Mapped[str] = mapped_column(String(16))  # approve | correct | reject
    final_cre_ids: Mapped[str | None] = mapped_column(Text)  # space-separated
    decided_by: Mapped[str] = mapped_column(String(256))
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    note: Mapped[str | None] = mapped_column(Text)
    record: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # the RFC HumanDecision
    text: Mapped[str] = mapped_column(Text)
    source_standard: Mapped[str | None] = mapped_column(String(512))
    imported_from: Mapped[str] = mapped_column(String(1024))  # a sheet, a file, or "workbench"
    undone_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # A changed decision: the new one names the one it supersedes, which is stamped and
    # kept (never edited), so the audit shows every decision an item had.
    superseded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    supersedes_id: Mapped[int | None] = mapped_column(Integer, nullable=True)

    @classmethod
    def standing(cls) -> ColumnElement[bool]:
        """The decision that counts for its item: neither undone nor superseded. Training,
        calibration, agreement and every count read only these."""
        return and_(cls.undone_at.is_(None), cls.superseded_at.is_(None))


class QaCheckRow(Base):
    """A decided item put to a second reviewer, blind: `double` checks the standing decision
    (`first_decision_id`) against one other reviewer's answer; `known` is an item with a
    trusted answer (`known_cre_ids`, space-separated; empty: no CRE fits) that every
    reviewer but its author meets once among their items. A lead's adjudication of a
    disagreement is stamped here; a change it makes is a HumanDecision like any other."""

    __tablename__ = "qa_checks"
    __table_args__ = (Index("ix_qa_checks_row", "decision_row_id", "kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(8))  # double | known
    decision_row_id: Mapped[int] = mapped_column(Integer)  # decision_queue.id
    review_id: Mapped[str] = mapped_column(String(64))
    first_decision_id: Mapped[int | None] = mapped_column(Integer)  # human_decisions.id
    known_cre_ids: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    adjudicated_by: Mapped[str | None] = mapped_column(String(256))
    adjudicated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    outcome: Mapped[str | None] = mapped_column(String(16))  # first | second


class QaAnswerRow(Base):
    """One reviewer's blind answer to a check: the CREs they chose (space-separated; empty
    when they rejected, with the reason)."""

    __tablename__ = "qa_answers"
    __table_args__ = (UniqueConstraint("check_id", "reviewer", name="uq_qa_answer"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    check_id: Mapped[int] = mapped_column(Integer, index=True)
    reviewer: Mapped[str] = mapped_column(String(256))
    cre_ids: Mapped[str] = mapped_column(Text)
    rejection: Mapped[str | None] = mapped_column(String(64))
    note: Mapped[str | None] = mapped_column(Text)
    answered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewAliasRow(Base):
    """An earlier review id of an item that newer models decided again while it was open:
    the address a tab, a bookmark, an export or a decision file still holds."""

    __tablename__ = "review_aliases"

    review_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    decision_row_id: Mapped[int] = mapped_column(Integer, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewerRow(Base):
    """A reviewer who signs in to the workbench: their name, whether they lead, and their
    secret as an scrypt hash (never the secret itself)."""

    __tablename__ = "reviewers"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    lead: Mapped[bool] = mapped_column(default=False)
    secret_hash: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RunPolicyRow(Base):
    """The risk policy a run decided under (`policy.DecisionPolicy.as_json`): the team's budget,
    confidence and guarantee, and the prior of the models it ran. Whatever decides a
    source's items again reads the policy of the run that last decided them."""

    __tablename__ = "run_policies"

    run_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    policy: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SourceCutRow(Base):
    """The cut a source has now: the one the run (or `relink`) that last linked it chose,
    where it stood then (`pipeline.source_level.SourceStatus.as_json`). What reads a
    source's cut without running the models (`queue status`, the workbench, the suggest
    API) reads it here, so that every command says the same."""

    __tablename__ = "source_cuts"

    source_key: Mapped[str] = mapped_column(String(1024), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(128))
    status: Mapped[dict[str, Any]] = mapped_column(JSON)
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class KnowledgeQueueRow(Base):
    """The upstream filter's queue table (the queue-row shape); we only stamp consumed_at."""

    __tablename__ = "knowledge_queue"
    __table_args__ = (Index("ix_knowledge_queue_pending", "consumed_at", "created_at", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    content_hash: Mapped[str | None] = mapped_column(String(64))
    chunk_id: Mapped[str | None] = mapped_column(String(512))
    artifact_id: Mapped[str | None] = mapped_column(String(512))
    pipeline_run_id: Mapped[str | None] = mapped_column(String(128))
    schema_version: Mapped[str | None] = mapped_column(String(32))
    source_type: Mapped[str | None] = mapped_column(String(16))
    source_repo: Mapped[str | None] = mapped_column(String(512))
    source_commit_sha: Mapped[str | None] = mapped_column(String(64))
    source_committed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    feed_url: Mapped[str | None] = mapped_column(String(2048))
    post_guid: Mapped[str | None] = mapped_column(String(2048))
    locator_kind: Mapped[str | None] = mapped_column(String(32))
    locator_path: Mapped[str | None] = mapped_column(String(2048))
    span_index: Mapped[int | None] = mapped_column(Integer)
    span_total: Mapped[int | None] = mapped_column(Integer)
    span_heading_path: Mapped[str | None] = mapped_column(Text)
    text: Mapped[str | None] = mapped_column(Text)
    llm_label: Mapped[str | None] = mapped_column(String(32))
    confidence: Mapped[float | None] = mapped_column(Float)
    llm_reasoning: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    consumed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class QueueAttempt(Base):
    """A knowledge_queue row that errored while processed: attempts so far, the last error,
    and when it was dead-lettered (then no run claims it again)."""

    __tablename__ = "queue_attempts"

    queue_row_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    attempts: Mapped[int] = mapped_column(Integer)
    last_error: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    dead_lettered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
