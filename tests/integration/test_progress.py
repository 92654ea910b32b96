"""What `librarian run` shows in a real terminal (a pseudo-terminal from `script`): its
phases, no Prefect log lines over the bar, no shutdown tracebacks; `--quiet` and `--json`
for scripts."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from librarian.paths import packaged_data
from tests.integration.conftest import LIBRARIAN, RawRun, run_librarian

pytestmark = pytest.mark.integration

SAMPLE = str(packaged_data("samples", "queue_sample.jsonl"))
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def in_terminal(raw_run: RawRun, *args: str) -> str:
    tmp_path = raw_run.folder
    words = [
        LIBRARIAN,
        "run",
        SAMPLE,
        "--out",
        str(tmp_path / "out"),
        "--uncalibrated",
        "--embedding-model",
        str(raw_run.embedder),
        "--cache-dir",
        str(tmp_path / "cache"),
        *args,
    ]
    command = shlex.join(words)
    done = subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"},
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    return ANSI.sub("\n", done.stdout)


def test_the_terminal_shows_phases_and_no_prefect_noise(raw_run: RawRun) -> None:
    shown = in_terminal(raw_run)
    for phase in ("starting Prefect", "loading models", "linking"):
        assert phase in shown, shown[-2000:]
    # A JSONL file is read once, as it streams: its lines are counted, its total unknown.
    assert re.search(r"29/\?", shown) and "lines/s" in shown
    assert "read" in shown and "linked" in shown  # the summary table
    for noise in (
        "Beginning flow run",
        "Created task run",
        "Finished in state",
        "Stopping temporary server",
        "Traceback",
        "Error flushing",
        "CancelledError",
    ):
        assert noise not in shown, noise


def test_quiet_and_json_are_for_scripts(tmp_path: Path, raw_run: RawRun) -> None:
    on_int8 = ("--embedding-model", str(raw_run.embedder))
    quiet = run_librarian(
        "run",
        SAMPLE,
        "--out",
        str(tmp_path / "q"),
        "--uncalibrated",
        "--quiet",
        *on_int8,
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert quiet.returncode == 0 and quiet.stdout == "", quiet.stdout
    assert "INFO" not in quiet.stderr, quiet.stderr[-2000:]  # issue 21, item 20
    as_json = run_librarian(
        "run",
        SAMPLE,
        "--out",
        str(tmp_path / "j"),
        "--uncalibrated",
        "--json",
        *on_int8,
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert as_json.returncode == 0, as_json.stderr[-2000:]
    summary = json.loads(as_json.stdout)
    assert summary["read"] == 29 and summary["run_id"]
