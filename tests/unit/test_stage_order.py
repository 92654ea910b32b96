"""Issue 40: the order `Pipeline.plan()` declares (what `run --plan` and every envelope's
audit say) is the order the stages run in. Each stage's entry point is watched while a
batch is linked; the first call of each, in time, must follow the declared order."""

from __future__ import annotations

from typing import Any

import pytest

from librarian.pipeline.ingest import section_from_text
from librarian.policy.verdict import decide
from tests.stubs import stub_pipeline
from tests.unit.test_workbench import TEXTS

# What each declared stage is, in code: the object's entry point that does its work.
ENTRY_POINTS = {
    "explicit": ("explicit", "find"),
    "embed": ("embed", "run"),
    "retrieve": ("retrieve", "run"),  # routing is its first step
    "source-level": ("source_level", "run"),
    "rerank": ("rerank", "run"),
    "score": ("score", "confidences"),
    "safety": ("safety", "check"),
}


def test_the_declared_stage_order_is_the_order_the_stages_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pipeline = stub_pipeline(threshold=0.99)
    calls: list[str] = []

    def watched(stage: str, work: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(stage)
            return work(*args, **kwargs)

        return call

    for stage, (attribute, method) in ENTRY_POINTS.items():
        owner = getattr(pipeline, attribute)
        monkeypatch.setattr(owner, method, watched(stage, getattr(owner, method)))
    # The pure C.9, where the pipeline module calls it.
    monkeypatch.setattr("librarian.pipeline.pipeline.decide", watched("decide", decide))
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}", "line": i + 1})
        for i, t in enumerate(TEXTS)
    ]
    pipeline.link(sections, "order")
    ran = list(dict.fromkeys(calls))  # each stage at its first call
    declared = [c.stage for c in pipeline.plan(priors_read=False) if c.stage in {*ran}]
    assert ran == declared, (ran, declared)
    assert set(ran) == {*ENTRY_POINTS, "decide"}  # every watched stage ran
