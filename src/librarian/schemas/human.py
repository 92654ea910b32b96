"""HumanDecision: a reviewer's decision on a ReviewItem, as the OpenCRE RFC publishes it
(schemas/rfc/human-decision.json): approve the librarian's link, correct it with
others, or reject (no CRE fits / not security knowledge)."""

from __future__ import annotations

import uuid
from typing import Any, Literal, Self

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from librarian.schemas.envelopes import Link

HUMAN_DECISION_VERSION = "0.1.0"
# The store keeps a reviewer name in 256 characters (both databases): refused past that.
MAX_REVIEWER_CHARS = 256

Action = Literal["approve", "correct", "reject"]
RejectionCode = Literal["NO_CRE_FITS", "NOT_SECURITY_KNOWLEDGE"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rejection(_Strict):
    reason_code: str = Field(min_length=1)
    reason_message: str | None = None


class LossEvent(BaseModel):
    """The librarian was wrong and a person said so: what it saw, said, and should have."""

    model_config = ConfigDict(extra="allow")

    module: Literal["B", "C"] = "C"  # C: the librarian
    input_snapshot: dict[str, Any]
    wrong_prediction: dict[str, Any]
    correct_label: dict[str, Any]
    notes: str | None = None


class Ui(_Strict):
    review_duration_ms: int | None = Field(default=None, ge=0)
    keybind_used: str | None = None


class HumanDecision(_Strict):
    schema_version: str = Field(default=HUMAN_DECISION_VERSION, pattern=r"^0\.\d+\.\d+$")
    decision_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    review_id: str = Field(min_length=1)
    chunk_id: str = Field(min_length=1)
    pipeline_run_id: str = Field(min_length=1)
    decided_at: AwareDatetime
    decided_by: str = Field(min_length=1, max_length=MAX_REVIEWER_CHARS)
    action: Action
    final_links: list[Link] | None = None
    rejection: Rejection | None = None
    loss_event: LossEvent | None = None
    ui: Ui | None = None

    @model_validator(mode="after")
    def _what_the_action_needs(self) -> Self:
        if self.action in ("approve", "correct") and not self.final_links:
            raise ValueError(f"{self.action} needs final_links")
        if self.action == "reject" and self.rejection is None:
            raise ValueError("reject needs a rejection reason")
        return self

    @field_validator("decision_id")
    @classmethod
    def _canonical_uuid(cls, value: str) -> str:
        """`urn:uuid:…`, braces and upper case name the same UUID: kept in one form (the
        store's column holds 36 characters, on SQLite as on PostgreSQL)."""
        try:
            return str(uuid.UUID(value))
        except ValueError as exc:
            raise ValueError(f"decision_id {value!r} is not a UUID") from exc

    @property
    def cre_ids(self) -> tuple[str, ...]:
        return tuple(link.cre_id for link in self.final_links or ())

    def same_decision(self, other: HumanDecision) -> bool:
        """Whether `other` decides the item the same way (whoever and whenever)."""
        return (self.review_id, self.action, sorted(self.cre_ids)) == (
            other.review_id,
            other.action,
            sorted(other.cre_ids),
        )


def dump_decision(decision: HumanDecision) -> dict[str, Any]:
    return decision.model_dump(mode="json", exclude_none=True)
