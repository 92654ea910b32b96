"""The real Prefect flow with the real MiniLM model over a queue of both shapes
mixed with every class of bad row (data/samples/queue_with_bad_rows.jsonl)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from librarian.paths import packaged_data
from librarian.pipeline import components as ids
from librarian.pipeline.components import stage_ids
from librarian.pipeline.sinks import read_jsonl
from librarian.schemas.export import PACKAGED_SCHEMA_DIR
from librarian.settings import LinkerSettings
from tests.rfc import assert_rfc_valid

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MIXED = packaged_data("samples", "queue_with_bad_rows.jsonl")
EXPECTED = json.loads((packaged_data("samples", "queue_with_bad_rows.expected.json")).read_text())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, hub_vectors: Path) -> dict[str, Any]:
    from librarian.flows.link_flow import link_queue
    from librarian.job import LinkJob

    out = tmp_path_factory.mktemp("run")
    cache = tmp_path_factory.mktemp("cache")
    shutil.copytree(hub_vectors, cache, dirs_exist_ok=True)  # the hub, as a second run finds it
    # A small batch size so the run spans several Prefect tasks and batch boundaries.
    settings = LinkerSettings(batch_size=7, cache_dir=cache, uncalibrated=True)
    summary = link_queue(LinkJob(MIXED, out, settings, "it-run")).value
    return {"summary": summary, "out": out}


def test_every_line_is_accounted_for(run: dict[str, Any]) -> None:
    summary = run["summary"]
    by_line = EXPECTED["by_line"]
    assert summary.lines_total == EXPECTED["lines_total"]
    assert summary.read == len(by_line)
    assert summary.read == summary.linked + summary.review + summary.rejected + summary.skipped
    assert summary.batches == -(-summary.read // 7)
    want = Counter(v["outcome"] for v in by_line.values())
    assert summary.rejected == want["rejected"]
    assert summary.skipped == want["skipped"]
    assert summary.linked + summary.review == want["decided"] + want["linked"] + want["review"]


def test_linked_and_review_are_each_what_their_envelopes_say(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    summary = run["summary"]
    proposals = read_jsonl(out / "proposals.jsonl")
    reviews = read_jsonl(out / "reviews.jsonl")
    assert (summary.linked, summary.review) == (len(proposals), len(reviews))
    assert summary.linked >= 1 and summary.review >= 1
    for proposal in proposals:  # a citation, or a confidence at the threshold or above
        link = proposal["links"][0]
        cited = link["link_type"] == "LinkedTo"
        assert cited or link["confidence"] >= proposal["retrieval"]["threshold"]
    for review in reviews:
        if review["reason_code"] == "BELOW_THRESHOLD":
            top = review["suggested_links"][0]["confidence"]
            assert top < review["retrieval"]["threshold"]
    assert sum(summary.by_reason.get("review", {}).values()) == summary.review


def test_bad_rows_get_their_typed_reason_on_their_line(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    got = {
        r["line"]: r for r in read_jsonl(out / "rejected.jsonl") + read_jsonl(out / "skipped.jsonl")
    }
    for line, exp in EXPECTED["by_line"].items():
        if exp["outcome"] in ("rejected", "skipped"):
            assert got[int(line)]["reason"] == exp["reason"], line
            assert got[int(line)]["message"]
    assert len(got) == sum(
        1 for e in EXPECTED["by_line"].values() if e["outcome"] in ("rejected", "skipped")
    )


def test_every_good_row_comes_out_exactly_once_and_valid(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    proposals = read_jsonl(out / "proposals.jsonl")
    reviews = read_jsonl(out / "reviews.jsonl")
    good = [
        json.loads(line)
        for line in (packaged_data("samples", "queue_sample.jsonl")).read_text().splitlines()
    ]
    emitted = Counter(e["chunk_id"] for e in proposals + reviews)
    assert emitted == Counter(r["chunk_id"] for r in good)
    for name, docs in (("LinkProposal", proposals), ("ReviewItem", reviews)):
        schema = json.loads((PACKAGED_SCHEMA_DIR / f"{name}.schema.json").read_text())
        for doc in docs:
            jsonschema.validate(doc, schema)
            assert doc["pipeline_run_id"] == "it-run"
    assert_rfc_valid(proposals + reviews)  # the published OpenCRE RFC schemas, formats checked


def test_explicit_rows_decide_without_models(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    envs = {
        e["chunk_id"]: e
        for e in read_jsonl(out / "proposals.jsonl") + read_jsonl(out / "reviews.jsonl")
    }
    assert envs["chunk-q040"]["links"] == [
        {
            "cre_id": "002-630",
            "link_type": "LinkedTo",
            "confidence": 1.0,
            "rationale": envs["chunk-q040"]["links"][0]["rationale"],
        }
    ]
    assert envs["chunk-q041"]["update_detection"]["adversarial_flags"] == ["UNKNOWN_CRE_REFERENCE"]
    assert envs["chunk-q042"]["update_detection"]["adversarial_flags"] == [
        "CONFLICTING_CRE_REFERENCES"
    ]
    # phone number, date and version: no citation, so the models decided it
    embed = stage_ids(envs["chunk-q043"]["retrieval"]["retriever"])["embed"]
    assert embed.startswith(f"{ids.EMBED}:all-MiniLM-L6-v2")
    assert run["summary"].explicit_fast_path == 3


def test_long_texts_are_kept_whole_and_counted(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    envs = read_jsonl(out / "proposals.jsonl") + read_jsonl(out / "reviews.jsonl")
    longest = max(len(e["knowledge"]["text"]) for e in envs)
    assert longest > 40_000
    assert run["summary"].truncated_for_model >= 1


def test_model_decisions_use_real_retrieval(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    for env in read_jsonl(out / "reviews.jsonl"):
        if env["reason_code"] == "BELOW_THRESHOLD":
            cands = env["retrieval"]["candidates"]
            assert len(cands) == 20
            scores = [c["score_vector"] for c in cands]
            assert scores == sorted(scores, reverse=True)
            assert env["suggested_links"][0]["cre_id"] == cands[0]["cre_id"]


def test_summary_is_written_last_and_complete(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["read"] == run["summary"].read
    assert summary["hub"]["nodes"] == 522
    assert summary["models"]["embedding"] == "all-MiniLM-L6-v2"
    assert {"embed", "retrieve", "load_models"} <= set(summary["timings_s"])
    assert not list(out.parent.glob(f".{out.name}.*.partial"))  # the staging dir swapped in


def test_the_run_leaves_a_markdown_summary_artifact(run: dict[str, Any]) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["librarian-run-summary"]))
        )
    mine = [a for a in artifacts if "# librarian run it-run (" in str(a.data)]
    assert len(mine) == 1 and mine[0].type == "markdown"
    text = str(mine[0].data)
    summary = run["summary"]
    assert f"| rejected | {summary.rejected} |" in text
    assert "| load_models |" in text and "Cut: each source's own" in text
    assert str(run["out"]) in text


def test_each_searched_section_has_its_routing_decision_beside_it(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    summary = run["summary"]
    envelopes = read_jsonl(out / "proposals.jsonl") + read_jsonl(out / "reviews.jsonl")
    routing = read_jsonl(out / "routing.jsonl")
    searched = [e for e in envelopes if "explicit" not in stage_ids(e["retrieval"]["retriever"])]
    assert sorted(r["chunk_id"] for r in routing) == sorted(e["chunk_id"] for e in searched)
    assert len(routing) == len(envelopes) - summary.explicit_fast_path
    # No pins, no rules: the default searched every collection and narrowed nothing.
    assert summary.routing == {"routed": len(routing), "all": len(routing)}
    for decision in routing:
        assert decision["configured"] == "pins" and decision["effective"] == "all"
        assert decision["selected"] == [c["collection"] for c in decision["collections"]]
        assert len(decision["selected"]) == 5


def test_the_flows_executor_runs_every_phase_as_a_named_task() -> None:
    """Each of the runner's phases (`pipeline.run.PHASES`) runs as a Prefect task of its
    own name through the one generic task, on the models the flow was handed."""
    from prefect import flow

    from librarian.flows.link_flow import TASKS, PrefectTasks
    from librarian.pipeline.run import PHASES
    from tests.stubs import Recorder

    @flow(name="every-phase")
    def every_phase() -> list[Any]:
        tasks = PrefectTasks(LinkerSettings(), Recorder())  # type: ignore[arg-type]
        return [tasks.submit(phase, 1, "two").result() for phase in PHASES]

    assert every_phase() == [(phase.method, (1, "two")) for phase in PHASES]
    assert [TASKS[phase].name for phase in PHASES] == [phase.task for phase in PHASES]
