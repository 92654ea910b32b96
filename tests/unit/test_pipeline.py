"""The pipeline as declared stages: the order, decide's contract, one outcome per row."""

from __future__ import annotations

import json
import math

import pytest

from librarian.pipeline import components as ids
from librarian.policy.verdict import decide
from librarian.schemas.envelopes import AdversarialFlag, ReasonCode
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
