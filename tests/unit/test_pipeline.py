"""The pipeline as declared stages: the order, decide's contract, one outcome per row."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import pytest

from librarian.pipeline import components as ids
from librarian.policy.verdict import decide
from librarian.schemas.envelopes import AdversarialFlag, ReasonCode
from librarian.schemas.records import PriorDecision, Section, Skip, SkipCode
from tests.stubs import stub_pipeline

ORDER = [
    "ingest",
    "dedup",
    "explicit",
    "embed",
    "route",
    "retrieve",
    "source-level",
    "rerank",
    "score",
    "safety",
    "decide",
    "emit",
]


def test_the_plan_lists_every_stage_in_order_with_its_component() -> None:
    plan = stub_pipeline().plan(priors_read=False)
    assert [c.stage for c in plan] == ORDER
    by_stage = {c.stage: c.id for c in plan}
    assert by_stage["source-level"] == ids.SOURCE_LEVEL_NONE
    assert by_stage["safety"] == ids.SAFETY and by_stage["decide"] == ids.DECIDE
    assert json.dumps([c.as_plan() for c in plan])  # --plan --json can print it


@pytest.mark.parametrize(
    ("confidence", "threshold"), [(-0.01, 0.5), (1.01, 0.5), (math.nan, 0.5), (0.5, 1.5)]
)
def test_decide_refuses_out_of_range_input(confidence: float, threshold: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        decide(confidence, ["200-001"], [], threshold)


def test_decide_is_total_and_flags_come_first() -> None:
    flag = [AdversarialFlag.NEGATION_MISMATCH]
    assert decide(1.0, ["a"], flag, 0.5).reason == ReasonCode.ADVERSARIAL_FLAG
    assert decide(1.0, ["a"], [], 0.5, update_conflict=True).reason == ReasonCode.UPDATE_AMBIGUOUS
    assert decide(0.0, [], [], 0.5).reason == ReasonCode.NO_CANDIDATES
    assert decide(0.4, ["a"], [], 0.5).reason == ReasonCode.BELOW_THRESHOLD
    assert decide(0.5, ["a"], [], 0.5).linked


class Priors:
    """A store that knows one span decided before and one row already decided as it is."""

    def __init__(self, done_chunk: str, prior: PriorDecision, span: str) -> None:
        self.done_chunk, self.prior, self.span = done_chunk, prior, span

    def unchanged(self, sections: Sequence[Section]) -> list[Skip]:
        return [
            Skip(line=s.line, chunk_id=s.chunk_id, reason=SkipCode.UNCHANGED, message="x")
            for s in sections
            if s.chunk_id == self.done_chunk
        ]

    def priors(self, sections: Sequence[Section]) -> dict[str, PriorDecision]:
        return {s.span_key: self.prior for s in sections if s.span_key == self.span}


def row(chunk: str, path: str, text: str) -> str:
    return json.dumps(
        {
            "chunk_id": chunk,
            "artifact_id": "a",
            "source_type": "github",
            "source_repo": "o/r",
            "source_commit_sha": "abcdef0",
            "source_committed_at": "2026-11-30T00:00:00Z",
            "locator_kind": "repo_path",
            "locator_path": path,
            "span_heading_path": "[]",
            "text": text,
            "llm_label": "KNOWLEDGE",
        }
    )
