"""The real MiniLM model through the stages, without Prefect."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from librarian.cli import app
from librarian.factory import build_pipeline
from librarian.paths import DEFAULT_HUB, packaged_data
from librarian.pipeline import components as ids
from librarian.pipeline import one_shot
from librarian.pipeline.components import stage_ids
from librarian.pipeline.pipeline import Pipeline
from librarian.retrieval.index import cache_file
from librarian.settings import LinkerSettings
from tests.stubs import install_stage_plugin

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def linker(cache: Path) -> Pipeline:
    return build_pipeline(LinkerSettings(cache_dir=cache, uncalibrated=True))


def test_minilm_finds_the_obvious_hub(linker: Pipeline) -> None:
    env = one_shot.explain(
        linker, "Use parameterized queries so user input cannot change SQL statements"
    )
    assert (
        env.retrieval.candidates[0].cre_id == "732-873"
    )  # Lock/precompile queries (parameterization)
    assert linker.index.dimension == 384


def test_hub_embeddings_are_cached_on_disk(linker: Pipeline, cache: Path) -> None:
    assert cache_file(cache, linker.embed.embedder, linker.hub).is_file()


def test_explain_command_prints_candidates_and_decision(tmp_path: Path) -> None:
    text = "Rotate the session token after login"
    args = ["explain", text, "--cache-dir", str(tmp_path / "cache"), "--uncalibrated"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "decision: REVIEW (BELOW_THRESHOLD)" in result.output
    assert "002-630" in result.output
    assert f"score={ids.SCORE_RAW_COSINE}" in " ".join(result.output.split())


def test_explain_with_a_prior_text_runs_update_detection(tmp_path: Path) -> None:
    base = ["explain", "Never rotate the session token after login", "--json"]
    base += ["--cache-dir", str(tmp_path / "cache"), "--uncalibrated"]
    plain = json.loads(CliRunner().invoke(app, base).output)
    assert not plain["update_detection"]["is_update"]
    assert ids.UPDATE_NOT_EVALUATED in plain["retrieval"]["retriever"]
    prior = ["--prior-text", "Rotate the session token after login"]
    updated = json.loads(CliRunner().invoke(app, [*base, *prior]).output)
    assert updated["update_detection"]["is_update"]
    assert "NEGATION_MISMATCH" in updated["update_detection"]["adversarial_flags"]
    assert updated["reason_code"] == "ADVERSARIAL_FLAG"
    assert ids.UPDATE_EVALUATED in updated["retrieval"]["retriever"]


def test_run_plan_lists_the_stages_and_reads_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """And a stage from an installed distribution's entry point in its place (issue 49)."""
    install_stage_plugin(tmp_path, "draft_hold_plan")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    args = ["run", str(packaged_data("samples", "queue_sample.jsonl")), "--plan", "--json"]
    args += ["--uncalibrated", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    names = [s["name"] for s in plan["stages"]]
    assert names[:3] == ["ingest", "dedup", "explicit"]
    assert names[-4:] == ["safety", "decide", "draft-hold", "emit"]
    assert names.index("source-level") == names.index("retrieve") + 1
    assert {s["name"]: s["component"] for s in plan["stages"]}["score"] == ids.SCORE_RAW_COSINE
    assert plan["source"]["kind"] == "JsonlFile" and plan["sinks"][0]["kind"] == "FileSink"
    assert not out.exists()


def test_explain_many_texts_says_which_block_is_which(tmp_path: Path) -> None:
    texts = "Rotate the session token after login\nUse parameterized SQL queries\n"
    args = ["explain", "-", "--cache-dir", str(tmp_path / "cache"), "--uncalibrated"]
    result = CliRunner().invoke(app, args, input=texts)
    assert result.exit_code == 0, result.output
    first = result.output.index("text: Rotate the session token after login")
    second = result.output.index("text: Use parameterized SQL queries")
    assert first < second and result.output.count("decision:") == 2
    # The cut each text was decided against (its envelope's): a text alone, uncalibrated,
    # is never linked (the raw cosine's 0.800 keeps no budget), not the global 0.800.
    assert "confidence" in result.output and "threshold 1.000" in result.output
    assert re.search(r"suggest \d{3}-\d{3} confidence \d\.\d{3}", result.output)


def test_explain_without_trained_models_stops_and_says_what_to_run(tmp_path: Path) -> None:
    for models in ([], ["--models", str(tmp_path / "misspelt")]):
        result = CliRunner().invoke(app, ["explain", "Rotate the session token", *models])
        assert result.exit_code == 2, result.output
        said = " ".join(result.output.split())
        assert "run `librarian train`" in said and "--uncalibrated" in said


def test_explain_with_trained_models_says_so(dev_models: Path) -> None:
    text = "Rotate the session token after login"
    result = CliRunner().invoke(app, ["explain", text, "--models", str(dev_models), "--json"])
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.output)
    assert stage_ids(envelope["retrieval"]["retriever"])["score"] == ids.SCORE_JOINT
    card = json.loads((dev_models / "card.json").read_text())
    # A text alone is decided against the trained global cut where that cut itself keeps
    # the team's budget (1 - cut <= budget), else against none (policy.cut.alone).
    from librarian.policy import DecisionPolicy
    from librarian.policy.cut import alone

    expected = alone(card["threshold"], DecisionPolicy()).cut
    assert expected in (card["threshold"], 1.0)
    assert envelope["retrieval"]["threshold"] == expected
    # The evidence is in the envelope: each candidate's dense and evidence-added scores,
    # and each suggestion says what scored it, down to the linked section that did.
    top = envelope["retrieval"]["candidates"][0]
    assert top["score_hybrid"] >= top["score_vector"]
    why = envelope["suggested_links"][0]["rationale"]
    assert why.startswith("similarity to this text, 0-1: its name ")
    assert "its place in the hub " in why and "closest section already linked to it" in why


def test_explain_explicit_citation() -> None:
    result = CliRunner().invoke(app, ["explain", "see CRE 002-630", "--json", "--uncalibrated"])
    assert result.exit_code == 0
    assert '"link_type": "LinkedTo"' in result.output


@pytest.mark.parametrize("text", ["Use [bold]strong[/bold] session tokens", "Tokens [/] rotate"])
def test_explain_json_keeps_text_that_looks_like_markup(tmp_path: Path, text: str) -> None:
    """The JSON is the text as given, never read as rich markup."""
    args = ["explain", text, "--json", "--uncalibrated", "--cache-dir", str(tmp_path / "cache")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["knowledge"]["text"] == text


def test_librarian_run_end_to_end(tmp_path: Path, dev_models: Path) -> None:
    """The console script as a newcomer runs it: its own temporary Prefect server, real files."""
    import json
    import subprocess
    import sys

    out = tmp_path / "out"
    librarian = str(Path(sys.executable).with_name("librarian"))
    queue = str(packaged_data("samples", "queue_sample.jsonl"))
    proc = subprocess.run(
        [
            librarian,
            "run",
            queue,
            "--out",
            str(out),
            "--run-id",
            "cli-run",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--models",
            str(dev_models),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["read"] == 29 and summary["rejected"] == 0
    assert summary["linked"] + summary["review"] == 29
    assert f"outputs: {out}/" in proc.stdout
    assert summary["models"]["calibrator"] == str(dev_models)
    assert summary["threshold"] == json.loads((dev_models / "card.json").read_text())["threshold"]


def test_explain_many_texts_from_stdin_in_one_process() -> None:
    import json

    result = CliRunner().invoke(
        app,
        ["explain", "-", "--json", "--uncalibrated"],
        input="Rotate session tokens after login\nsee CRE 002-630\n",
    )
    assert result.exit_code == 0, result.output
    envelopes = [json.loads(line) for line in result.output.splitlines() if line.strip()]
    assert [e["status"] for e in envelopes] == ["review_required", "linked"]


def test_a_team_catalogue_is_searched_when_pinned(tmp_path: Path) -> None:
    catalogue = packaged_data("catalogues", "example_policies.jsonl")
    text = "Administrator passwords must be rotated every 90 days"
    args = ["explain", text, "--json", "--cache-dir", str(tmp_path / "cache")]
    args += ["--uncalibrated"]
    args += ["--hub", str(DEFAULT_HUB), "--hub", str(catalogue)]
    pinned = CliRunner().invoke(app, [*args, "--collections", "example_policies"])
    assert pinned.exit_code == 0, pinned.output
    ids = [c["cre_id"] for c in json.loads(pinned.output)["retrieval"]["candidates"]]
    assert ids[0] == "901-006"  # "Service account credentials are rotated every 90 days"
    assert all(i.split("-")[0] in ("901", "902", "903") for i in ids)
    wide = CliRunner().invoke(app, args)
    assert wide.exit_code == 0, wide.output
    wide_ids = {c["cre_id"] for c in json.loads(wide.output)["retrieval"]["candidates"]}
    assert wide_ids - set(ids), "without a pin, OpenCRE's hubs compete too"


def test_route_auto_uses_the_trained_branch_classifier(dev_models: Path) -> None:
    assert (dev_models / "router.json").is_file()
    text = "Use parameterized queries so user input cannot change SQL statements"
    args = ["route", text, "--routing", "auto", "--models", str(dev_models), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    decision = json.loads(result.output)
    scores = {c["collection"]: c["score"] for c in decision["collections"]}
    assert set(scores) == {"technical", "development", "governance", "cross-cutting", "operating"}
    assert abs(sum(scores.values()) - 1.0) < 1e-4
    assert max(scores, key=scores.__getitem__) == "technical"
    assert decision["effective"] in ("classifier", "all")
    assert "technical" in decision["selected"]
    off = CliRunner().invoke(app, [*args[:2], "--routing", "off", "--json", "--uncalibrated"])
    assert json.loads(off.output)["effective"] == "all"


def test_hub_search_finds_cres_by_meaning_and_hub_show_names_them() -> None:
    """Issue 22, item 3: "DoS" missed "Denial Of Service protection", "key rotation" found
    nothing, and no command looked a CRE up."""
    runner = CliRunner()
    found = runner.invoke(app, ["hub", "search", "DoS", "--json", "--limit", "3"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.output)[0]["cre_id"] == "623-550"
    rotation = json.loads(runner.invoke(app, ["hub", "search", "key rotation", "--json"]).output)
    assert any("key" in hit["name"].lower() for hit in rotation[:3]), rotation[:3]
    # Issue 41, item 9: the numbers shown are on a stated scale, each in [0, 1].
    assert all(0 <= hit["meaning"] <= 1 and 0 <= hit["words"] <= 1 for hit in rotation)
    plain = runner.invoke(app, ["hub", "search", "key rotation", "--limit", "2"]).output
    assert "meaning: the cosine of TEXT to the CRE's name and path, 0-1" in " ".join(plain.split())
    # Issue 48, item 5: several queries from stdin, the models loaded once.
    many = runner.invoke(
        app, ["hub", "search", "-", "--json", "--limit", "1"], input="DoS\n\nkey rotation\n"
    )
    answers = [json.loads(line) for line in many.output.splitlines()]
    assert [a["query"] for a in answers] == ["DoS", "key rotation"]
    assert answers[0]["hits"][0]["cre_id"] == "623-550"
    shown = runner.invoke(app, ["hub", "show", "616-305", "--json"])
    assert shown.exit_code == 0
    card = json.loads(shown.output)
    assert card["name"] and card["path"][-1] == card["name"] and card["children"]
    missing = runner.invoke(app, ["hub", "show", "999-999"])
    assert missing.exit_code == 2 and "hub search" in missing.output
