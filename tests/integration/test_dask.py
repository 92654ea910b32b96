"""The flow on a local Dask cluster (2 worker processes): the same outputs, row for row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from librarian.paths import packaged_data

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LIBRARIAN = str(Path(sys.executable).with_name("librarian"))
MIXED = packaged_data("samples", "queue_with_bad_rows.jsonl")
OUTPUTS = ("proposals", "reviews", "rejected", "skipped")


def run(tmp_path: Path, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / f"prefect-{out}")
    return subprocess.run(
        [
            LIBRARIAN,
            "run",
            str(MIXED),
            "--batch-size",
            "7",
            "--run-id",
            "same",
            "--out",
            str(tmp_path / out),
            "--uncalibrated",
            "--cache-dir",
            str(tmp_path / "cache"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )


def rows(path: Path) -> list[dict[str, Any]]:
    """Output rows without the wall-clock stamps, which differ between any two runs."""
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        row.pop("classified_at", None)
        row.pop("created_at", None)
        out.append(row)
    return out


def test_dask_run_equals_the_single_process_run(tmp_path: Path) -> None:
    single = run(tmp_path, "single")
    assert single.returncode == 0, single.stderr[-3000:]
    dask = run(tmp_path, "dask", "--task-runner", "dask", "--dask-workers", "2")
    assert dask.returncode == 0, dask.stderr[-3000:]
    assert "started a Prefect server for the Dask workers" in dask.stderr
    assert "a local cluster of 2 worker processes" in dask.stderr
    for name in OUTPUTS:
        assert rows(tmp_path / "dask" / f"{name}.jsonl") == rows(
            tmp_path / "single" / f"{name}.jsonl"
        ), name
    summaries = [
        json.loads((tmp_path / d / "summary.json").read_text()) for d in ("single", "dask")
    ]
    for key in ("read", "linked", "review", "rejected", "skipped", "by_reason", "batches"):
        assert summaries[0][key] == summaries[1][key], key


def test_dask_address_needs_the_dask_runner(tmp_path: Path) -> None:
    result = run(tmp_path, "x", "--dask-address", "tcp://127.0.0.1:8786")
    assert result.returncode == 2 and "--dask-address needs --task-runner dask" in result.stderr
