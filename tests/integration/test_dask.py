"""The flow on a local Dask cluster (2 worker processes): the same outputs, row for row.

The same rows, ids, decisions, reasons, candidates and their order; scores equal within
SCORE_TOLERANCE. Vectors are fp32 sums whose last bits depend on how many threads the
encoder ran on (a worker has one, the single process two): 0.339257 vs 0.339256 was seen.
A number printed inside a text (a rationale's "0.46") may differ by one in its last digit.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from librarian.paths import packaged_data
from tests.integration.conftest import RawRun, run_librarian

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MIXED = packaged_data("samples", "queue_with_bad_rows.jsonl")
OUTPUTS = ("proposals", "reviews", "rejected", "skipped")
SCORE_TOLERANCE = 1e-5
_NUMBER = re.compile(r"-?\d+\.(\d+)")


def run(raw_run: RawRun, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    # The Dask run starts its own Prefect server, as a user's would; the others report to
    # the session's.
    tmp_path = raw_run.folder
    dask = "--task-runner" in extra
    env = {k: v for k, v in os.environ.items() if not (dask and k == "PREFECT_API_URL")}
    env["PREFECT_HOME"] = str(tmp_path / f"prefect-{out}")
    return run_librarian(
        "run",
        str(MIXED),
        "--batch-size",
        "7",
        "--run-id",
        "same",
        "--out",
        str(tmp_path / out),
        "--uncalibrated",
        "--embedding-model",
        str(raw_run.embedder),
        "--cache-dir",
        str(tmp_path / "cache"),
        *extra,
        env=env,
        timeout=900,
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


def numbers_apart(value: Any, found: list[tuple[float, float]]) -> Any:
    """`value` with every float (and every decimal inside a string) replaced by "#",
    each appended to `found` with the tolerance it is compared within."""
    if isinstance(value, dict):
        return {k: numbers_apart(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [numbers_apart(v, found) for v in value]
    if isinstance(value, float):
        found.append((value, SCORE_TOLERANCE))
        return "#"
    if isinstance(value, str):
        for match in _NUMBER.finditer(value):
            found.append((float(match.group(0)), 10.0 ** -len(match.group(1)) + 1e-12))
        return _NUMBER.sub("#", value)
    return value


def assert_same_within_tolerance(one: list[dict[str, Any]], other: list[dict[str, Any]]) -> None:
    left: list[tuple[float, float]] = []
    right: list[tuple[float, float]] = []
    assert numbers_apart(one, left) == numbers_apart(other, right)
    assert len(left) == len(right)
    for (a, tolerance), (b, _) in zip(left, right, strict=True):
        assert abs(a - b) <= tolerance, (a, b)


def test_the_comparison_catches_what_it_should() -> None:
    row = {"cre_id": "616-305", "score_vector": 0.339257, "rationale": "name 0.46"}
    assert_same_within_tolerance([row], [{**row, "score_vector": 0.339256}])
    for changed in ({"cre_id": "616-306"}, {"score_vector": 0.3393}, {"rationale": "name 0.48"}):
        with pytest.raises(AssertionError):
            assert_same_within_tolerance([row], [{**row, **changed}])


def test_dask_run_equals_the_single_process_run(
    tmp_path: Path, raw_run: RawRun, postgres_url: str
) -> None:
    # As scale-out runs: hub vectors searched in PostgreSQL (pgvector), whose URL carries a
    # password the local workers get from the environment, never from Prefect.
    assert ":***@" not in postgres_url and "@" in postgres_url
    pgvector = ("--db", postgres_url, "--vector-backend", "pgvector")
    single = run(raw_run, "single", *pgvector)
    assert single.returncode == 0, single.stderr[-3000:]
    dask_args = ("--task-runner", "dask", "--dask-workers", "2", *pgvector)
    dask = run(raw_run, "dask", *dask_args)
    assert dask.returncode == 0, dask.stderr[-3000:]
    assert "started a Prefect server for the Dask workers" in dask.stderr
    assert "a local cluster of 2 worker processes" in dask.stderr
    for name in OUTPUTS:
        single_rows = rows(tmp_path / "single" / f"{name}.jsonl")
        assert_same_within_tolerance(rows(tmp_path / "dask" / f"{name}.jsonl"), single_rows)
    summaries = [
        json.loads((tmp_path / d / "summary.json").read_text()) for d in ("single", "dask")
    ]
    for key in ("read", "linked", "review", "rejected", "skipped", "by_reason", "batches"):
        assert summaries[0][key] == summaries[1][key], key


def test_dask_address_needs_the_dask_runner(raw_run: RawRun) -> None:
    result = run(raw_run, "x", "--dask-address", "tcp://127.0.0.1:8786")
    assert result.returncode == 2 and "--dask-address needs --task-runner dask" in result.stderr


def test_a_dask_run_killed_mid_run_then_rerun_decides_every_row_once(
    tmp_path: Path, raw_run: RawRun, postgres_url: str
) -> None:
    """Issue 38: `--task-runner dask` killed with -9 while it drains the queue; the rerun
    (in one process) takes what is left, and each row is decided exactly once."""
    import signal

    from librarian.store.db import make_engine, upgrade
    from librarian.store.queue import enqueue
    from tests.integration.conftest import LIBRARIAN, consumed_once, queue_rows, wait_for_batches

    engine = make_engine(postgres_url)
    upgrade(engine)
    enqueue(engine, queue_rows(300))
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-dask")
    common = ["--from-db", "--db", postgres_url, "--batch-size", "10", "--uncalibrated"]
    common += ["--embedding-model", str(raw_run.embedder)]
    common += ["--cache-dir", str(tmp_path / "cache"), "--verbose"]
    dask = ("--task-runner", "dask", "--dask-workers", "2")
    proc = subprocess.Popen(
        [LIBRARIAN, "run", *common, *dask, "--out", str(tmp_path / "killed")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )
    try:
        wait_for_batches(proc, 3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the flow, its Dask workers, its server
    proc.wait()
    rerun = subprocess.run(
        [LIBRARIAN, "run", *common, "--out", str(tmp_path / "rerun")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        # The rerun reports to the session's server: the killed run's own died with it.
        env={**os.environ, "PREFECT_HOME": str(tmp_path / "prefect-rerun")},
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    consumed_once(engine, 300)
    engine.dispose()
