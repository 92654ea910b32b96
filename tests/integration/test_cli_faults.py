"""The console script under faults: a run killed mid-way, and a run that fails."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from librarian.paths import packaged_data
from tests.integration.conftest import LIBRARIAN, run_librarian, wait_for_batches

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def big_queue(path: Path, rows: int) -> Path:
    sample = (packaged_data("samples", "queue_sample.jsonl")).read_text().splitlines()
    with path.open("w") as handle:
        for i in range(rows):
            row = json.loads(sample[i % len(sample)])
            row["chunk_id"] = f"kill-{i}"
            handle.write(json.dumps(row) + "\n")
    return path


def test_a_killed_run_leaves_no_output_that_looks_whole(tmp_path: Path) -> None:
    queue = big_queue(tmp_path / "q.jsonl", 3000)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            LIBRARIAN,
            "run",
            str(queue),
            "--out",
            str(out),
            "--batch-size",
            "20",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--uncalibrated",
            "--verbose",  # its log says each batch
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out.mkdir()
    (out / "summary.json").write_text('{"run": "the previous one"}')

    def part() -> Path:
        staged = list(tmp_path.glob(".out.*.partial/reviews.jsonl"))
        return staged[0] if staged else tmp_path / "none"

    try:
        wait_for_batches(proc, 1)  # written to the staging directory
        assert part().stat().st_size > 0
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its temporary Prefect server
        proc.wait()
    # The killed run's files are in its staging directory; the previous run's stand as
    # they were, and nothing of the killed run looks whole.
    assert {p.name for p in out.iterdir()} == {"summary.json"}
    assert (out / "summary.json").read_text() == '{"run": "the previous one"}'
    assert not (part().parent / "summary.json").exists()


def test_a_run_that_fails_exits_1_and_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    queue = big_queue(tmp_path / "q.jsonl", 3)
    out = tmp_path / "out"
    proc = run_librarian(
        "run", str(queue), "--out", str(out), "--embedding-model", str(broken), "--uncalibrated"
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "failed:" in proc.stderr
    assert not (out / "summary.json").exists()
