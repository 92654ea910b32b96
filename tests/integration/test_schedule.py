"""Scheduled runs against a real local Prefect server (`prefect server start`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from librarian.paths import packaged_data

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = packaged_data("samples", "queue_sample.jsonl")


@pytest.fixture(scope="module")
def prefect_api() -> Iterator[str]:
    """A real `prefect server start` (own PREFECT_HOME, free port), stopped afterwards."""
    from librarian.flows.server import local_prefect_server

    with local_prefect_server() as api:
        yield api


def client_env(api: str, home: Path) -> dict[str, str]:
    return {**os.environ, "PREFECT_API_URL": api, "PREFECT_HOME": str(home)}


def deployment(api: str, name: str, wait_s: float = 0) -> Any:
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound
    from prefect.settings import PREFECT_API_URL, temporary_settings

    deadline = time.monotonic() + wait_s
    with temporary_settings({PREFECT_API_URL: api}):
        while True:
            try:
                with get_client(sync_client=True) as client:
                    return client.read_deployment_by_name(f"librarian-scheduled/{name}")
            except ObjectNotFound:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)


def run_once(api: str, deployment_id: Any, timeout_s: float) -> Any:
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api}):
        return run_deployment(deployment_id, timeout=timeout_s, poll_interval=2)


def test_serve_registers_the_schedule_and_runs_it(prefect_api: str, tmp_path: Path) -> None:
    out_root = tmp_path / "out"
    serving = subprocess.Popen(
        [str(BIN / "librarian"), "serve", str(SAMPLE), "--cron", "0 2 * * *", "--name", "t",
         "--out-root", str(out_root), "--uncalibrated"],
        env=client_env(prefect_api, tmp_path / "home"), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        registered = deployment(prefect_api, "t", wait_s=180)
        crons = [s.schedule.cron for s in registered.schedules]
        assert crons == ["0 2 * * *"]
        flow_run = run_once(prefect_api, registered.id, timeout_s=300)
        assert flow_run.state is not None and flow_run.state.is_completed(), flow_run.state
    finally:
        os.killpg(serving.pid, signal.SIGINT)
        try:
            serving.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serving.pid, signal.SIGKILL)
    runs = list(out_root.iterdir())
    assert len(runs) == 1
    summary = json.loads((runs[0] / "summary.json").read_text())
    assert summary["read"] == 29 and summary["mode"] == "dry-run"


def test_deploy_registers_for_a_worker(prefect_api: str, tmp_path: Path) -> None:
    env = client_env(prefect_api, tmp_path / "home")
    done = subprocess.run(
        [str(BIN / "librarian"), "deploy", str(SAMPLE), "--cron", "15 3 * * *", "--name", "d",
         "--pool", "librarian-test", "--out-root", str(tmp_path / "out"),
         "--uncalibrated"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    registered = deployment(prefect_api, "d")
    assert registered.work_pool_name == "librarian-test"
    assert [s.schedule.cron for s in registered.schedules] == ["15 3 * * *"]
    assert registered.entrypoint == "librarian/flows/scheduled.py:scheduled_run"
    assert registered.parameters["input_path"] == str(SAMPLE)

    flow_run = run_once(prefect_api, registered.id, timeout_s=0)  # scheduled, not awaited
    worker = subprocess.run(
        [str(BIN / "prefect"), "worker", "start", "--pool", "librarian-test", "--run-once"],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert worker.returncode == 0, worker.stdout[-2000:] + worker.stderr[-2000:]
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: prefect_api}), get_client(sync_client=True) as c:
        state = c.read_flow_run(flow_run.id).state
    assert state is not None and state.is_completed(), state
    runs = list((tmp_path / "out").iterdir())
    assert len(runs) == 1 and json.loads((runs[0] / "summary.json").read_text())["read"] == 29


def test_deploy_needs_a_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    done = subprocess.run(
        [str(BIN / "librarian"), "deploy", str(SAMPLE)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "PREFECT_API_URL" in done.stderr
