"""CLI usage errors: all caught before any model or Prefect server starts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from librarian.cli import app
from librarian.paths import DEFAULT_HUB
from librarian.schemas.export import CONTRACTS

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--db", "sqlite:///x.db"], "does not exist"),  # a dry run reads priors, creates none
        (["--from-db"], "not both"),
        (["--commit", "--db", "mysql://x/y"], "only sqlite"),
        (["--commit", "--db", "not a url"], "not a database URL"),
    ],
)
def test_database_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    queue = tmp_path / "q.jsonl"
    queue.write_text("{}\n")
    result = runner.invoke(app, ["run", str(queue), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_input_or_from_db() -> None:
    result = runner.invoke(app, ["run"])
    assert result.exit_code == 2 and "INPUT is missing" in result.output


def test_missing_input_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_bad_hub_is_refused_naming_the_node(tmp_path: Path) -> None:
    queue = tmp_path / "q.jsonl"
    queue.write_text("{}\n")
    hub = tmp_path / "hubs.jsonl"
    hub.write_text(
        json.dumps(
            {
                "cre_id": "100-001",
                "name": "x",
                "parent_id": "999-999",
                "hierarchy_path": ["x"],
                "depth": 1,
                "is_leaf": True,
            }
        )
        + "\n"
    )
    result = runner.invoke(app, ["run", str(queue), "--hub", str(hub)])
    assert result.exit_code == 2
    assert "100-001" in result.output and "999-999" in result.output


def test_bad_model_path_is_a_usage_error(tmp_path: Path) -> None:
    queue = tmp_path / "q.jsonl"
    queue.write_text("{}\n")
    result = runner.invoke(app, ["run", str(queue), "--reranker", str(tmp_path)])
    assert result.exit_code == 2 and "not a model directory" in result.output


def test_out_must_be_a_directory(tmp_path: Path) -> None:
    queue = tmp_path / "q.jsonl"
    queue.write_text("{}\n")
    result = runner.invoke(app, ["run", str(queue), "--out", str(queue)])
    assert result.exit_code == 2 and "not a directory" in result.output


def test_run_id_cannot_escape_the_output_folder(tmp_path: Path) -> None:
    queue = tmp_path / "q.jsonl"
    queue.write_text("{}\n")
    result = runner.invoke(app, ["run", str(queue), "--run-id", "../../etc"])
    assert result.exit_code == 2 and "--run-id" in result.output


def test_error_text_is_not_read_as_markup(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(tmp_path / "[red]x[/red].jsonl")])
    assert result.exit_code == 2 and "[red]x[/red].jsonl" in result.output


def test_out_of_range_threshold_is_a_usage_error(tmp_path: Path) -> None:
    queue = tmp_path / "q.jsonl"
    queue.write_text("{}\n")
    assert runner.invoke(app, ["run", str(queue), "--threshold", "1.5"]).exit_code == 2


def test_schema_export_writes_every_contract(tmp_path: Path) -> None:
    result = runner.invoke(app, ["schema", "export", str(tmp_path / "s")])
    assert result.exit_code == 0
    names = sorted(p.name for p in (tmp_path / "s").iterdir())
    assert names == sorted(f"{n}.schema.json" for n in CONTRACTS)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "IN", "--collections", "nope"], "pinned collection nope: no such collection"),
        (["run", "IN", "--routing", "sometimes"], "'sometimes' is not one of"),
        (["run", "IN", "--routing", "off", "--collections", "technical"], "--routing off"),
        (["run", "IN", "--routing-rules", "missing.yaml"], "missing.yaml does not exist"),
        (["run", "IN", "--search", "deep"], "'deep' is not one of"),
        (["explain", "x", "--routing-rules", "RULES"], "needs `boost` or `exclude`"),
        (["serve", "IN", "--collections", "nope"], "no such collection"),
        (["route", "x", "--hub", "HUB", "--hub", "CAT"], "in both"),
    ],
)
def test_routing_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    queue = tmp_path / "in.jsonl"
    queue.write_text("")
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules: [{name: r, keywords: [x]}]\n")
    hub = DEFAULT_HUB
    clash = tmp_path / "cat.jsonl"
    clash.write_text(json.dumps({"cre_id": "616-305", "name": "Ours"}) + "\n")
    swap = {"IN": str(queue), "RULES": str(rules), "HUB": str(hub), "CAT": str(clash)}
    result = CliRunner().invoke(app, [swap.get(a, a) for a in args])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


@pytest.mark.parametrize(
    ("argv", "heavy"),
    [
        ([], ("numpy", "scipy", "sklearn", "torch", "onnxruntime", "sqlalchemy", "prefect")),
        (["--version"], ("pydantic", "numpy", "onnxruntime", "librarian.cli.run")),
        (["hub", "show", "616-305"], ("numpy", "onnxruntime", "librarian.factory")),
    ],
)
def test_a_command_imports_only_what_it_needs(argv: list[str], heavy: tuple[str, ...]) -> None:
    """Issue 29, item 9: `librarian --version` took 2.6 s, 2.1 s of it importing numpy,
    scipy and the model card for every command. Commands are registered by name and their
    modules imported when they run (scripts/bench_cli_start.py and docs/benchmarks.md have
    the figures)."""
    import subprocess
    import sys

    probe = (
        "import sys\nfrom librarian.cli import app\n"
        f"if {argv!r}:\n"
        "    sys.argv = ['librarian', *" + repr(argv) + "]\n"
        "    try:\n        app()\n    except SystemExit:\n        pass\n"
        f"print('LOADED', sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "LOADED []", done.stdout


def test_train_off_a_terminal_says_a_line_a_phase(capsys: pytest.CaptureFixture[str]) -> None:
    from librarian.cli.learn import phase_lines

    update = phase_lines()
    update("embedding linked sections", 0, 4090)
    update("embedding linked sections", 2000, 4090)
    update("embedding linked sections", 4090, 4090)
    update("fitting", 1, -1)
    update("fitting", 1, -1)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "embedding linked sections (4090) ..."
    assert lines[1].startswith("embedding linked sections: done in ")
    assert lines[2:] == ["fitting ..."]


def test_prefects_info_lines_are_off_unless_verbose(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 41, item 9: Prefect's INFO lines and its link on every run."""
    from librarian.cli.run import quiet_prefect

    level = "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"
    monkeypatch.delenv(level, raising=False)
    quiet_prefect(quiet=False)
    assert os.environ[level] == "WARNING"
    monkeypatch.delenv(level)
    quiet_prefect(quiet=False, verbose=True)
    assert level not in os.environ
    quiet_prefect(quiet=True)
    assert os.environ[level] == "CRITICAL"


def test_the_run_summary_holds_what_a_person_reads(capsys: pytest.CaptureFixture[str]) -> None:
    """The 600-character audit line stays in summary.json and the envelopes."""
    from pathlib import Path

    from librarian.cli import render
    from librarian.schemas.records import RunSummary

    summary = RunSummary(run_id="r", input="", out_dir="", started_at="", retriever="x" * 600)
    summary.models = {"embedding": "all-MiniLM-L6-v2 onnx-int8", "calibrator": "/home/models"}
    render.run_summary(summary, Path("out/r"))
    shown = capsys.readouterr().out
    assert "x" * 100 not in shown and "retriever:" not in shown
    assert "models: all-MiniLM-L6-v2 onnx-int8; calibrated by /home/models" in shown


def test_json_means_one_thing_in_every_command() -> None:
    """Issue 40: `--json` was a flag in five commands and a path in one (eval's report,
    now `--report PATH`). Every command that takes it prints JSON on stdout."""
    import typer.main

    def commands(group: Any, path: str) -> list[tuple[str, Any]]:
        if not hasattr(group, "list_commands"):  # typer's own click: no isinstance here
            return [(path, group)]
        ctx = group.make_context(path, [], resilient_parsing=True)
        found = []
        for name in group.list_commands(ctx):  # a command group loads its module when asked
            sub = group.get_command(ctx, name)
            found += commands(sub, f"{path} {name}") if sub is not None else []
        return found

    taking = [
        (path, param)
        for path, command in commands(typer.main.get_command(app), "librarian")
        for param in command.params
        if "--json" in getattr(param, "opts", [])
    ]
    assert len(taking) >= 7, [p for p, _ in taking]
    assert all(getattr(param, "is_flag", False) for _, param in taking), [
        path for path, param in taking if not getattr(param, "is_flag", False)
    ]
    helps = {getattr(param, "help", "") for _, param in taking}
    assert helps == {"what the command would print, as JSON on stdout (for scripts)"}


def test_source_names_the_standard_in_every_command() -> None:
    """Issue 40: `--source` had three meanings (a document, a source key, a model's
    directory); a model to quantise is `--model-dir` now."""
    helps = {
        command: " ".join(
            runner.invoke(app, [*command.split(), "--help"], terminal_width=400).output.split()
        )
        for command in ("run", "relink", "quantize")
    }
    assert "--source" in helps["run"] and "the standard" in helps["run"]
    assert "--source" in helps["relink"] and "the standard" in helps["relink"]
    assert "--source" not in helps["quantize"] and "--model-dir" in helps["quantize"]


def test_a_dry_run_reads_earlier_decisions_from_librarian_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 48, item 5: a dry run with only LIBRARIAN_DB exported read no earlier
    decisions (`--db` did); every other command reads it."""
    from librarian.cli.options import LinkerOptions
    from librarian.cli.run import run_database
    from librarian.store.db import make_engine, sqlite_file, upgrade

    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(make_engine(url))
    monkeypatch.setenv("LIBRARIAN_DB", url)
    read = run_database(LinkerOptions({}), dry_run=True, from_db=False)
    assert read is not None and sqlite_file(read) == (tmp_path / "store.db").resolve()
    monkeypatch.delenv("LIBRARIAN_DB")
    assert run_database(LinkerOptions({}), dry_run=True, from_db=False) is None
