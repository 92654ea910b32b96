"""Stages as data (issue 49, item 1): the lists a pipeline holds are what runs, in their
order, what `run --plan` lists and what a row's audit names; and a stage from outside the
package (an installed distribution's `librarian.stages` entry point) joins them in the
place it names, with no change to the package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from librarian.errors import UsageError
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.pipeline import Pipeline
from librarian.schemas.envelopes import LinkProposal, ReviewItem
from tests.stubs import install_stage_plugin, stub_pipeline

TEXTS = ["rotate session token after login", "sql injection queries must be parameterized"]


@pytest.fixture
def plugged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    install_stage_plugin(tmp_path, "draft_hold")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path


def watched_order(pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the stages, each time one runs (C.5 as "source-level")."""
    calls: list[str] = []

    def watch(owner: Any, name: str, method: str) -> None:
        work = getattr(owner, method)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return work(*args, **kwargs)

        monkeypatch.setattr(owner, method, call)

    for prepare in pipeline.preparing:
        watch(prepare, prepare.name, "run")
    for complete in pipeline.completing:
        watch(complete, complete.name, "run")
    watch(pipeline.source_level, "source-level", "run")
    return calls


def sections(texts: list[str]) -> list[Any]:
    return [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}", "line": i + 1})
        for i, t in enumerate(texts)
    ]


def test_the_stages_run_in_the_order_the_plan_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = stub_pipeline(threshold=0.99)
    ran = watched_order(pipeline, monkeypatch)
    envelopes = one_shot.link(pipeline, sections(TEXTS), "order").envelopes
    planned = [c.stage for c in pipeline.plan(priors_read=False)]
    runs = [n for n in planned if n not in ("ingest", "dedup", "route")]  # C.4 routes first
    assert ran == runs, (ran, planned)
    audit = envelopes[0].retrieval.retriever
    named = [n for n in planned if n not in ("ingest", "dedup", "explicit", "emit")]
    places = [audit.index(f"{n}=") for n in named]  # each named once, in the plan's order
    assert places == sorted(places) and audit.startswith("embed=")


def test_a_plugged_stage_runs_where_it_says_and_the_plan_and_audit_name_it(
    plugged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = stub_pipeline(threshold=0.0)  # every row links, but for the plug-in
    names = [s.name for s in pipeline.completing]
    assert names == ["rerank", "score", "safety", "decide", "draft-hold", "emit"]
    ran = watched_order(pipeline, monkeypatch)
    result = one_shot.link(pipeline, sections([TEXTS[0], f"DRAFT {TEXTS[1]}"]), "plugged")
    assert ran.index("draft-hold") == ran.index("decide") + 1 < ran.index("emit")
    linked, held = result.envelopes
    assert isinstance(linked, LinkProposal) and isinstance(held, ReviewItem)
    assert "draft-hold=draft-hold@1 (a DRAFT is never linked)" in held.retrieval.retriever
    planned = [c.stage for c in pipeline.plan(priors_read=False)]
    assert planned[planned.index("decide") + 1] == "draft-hold"  # `run --plan`: test_models


def test_a_plugged_stage_naming_no_stage_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_stage_plugin(tmp_path, "draft_hold_misplaced", after="judge")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError, match=r"'judge', which is no stage there .*decide"):
        stub_pipeline()
