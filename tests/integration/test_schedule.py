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


def all_flow_runs(api: str) -> list[Any]:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api}), get_client(sync_client=True) as client:
        return list(client.read_flow_runs())


def test_serve_registers_the_schedule_and_runs_it(
    prefect_api: str, postgres_url: str, tmp_path: Path
) -> None:
    """A committing schedule on a database with a password: the run stores its decisions,
    and the password is nowhere on the Prefect server (deployment or flow-run parameters)."""
    from sqlalchemy.engine import make_url

    secret = "pw-never-on-prefect-7f3"  # the test server trusts local sockets: any password
    url = make_url(postgres_url).set(password=secret).render_as_string(hide_password=False)
    out_root = tmp_path / "out"
    serving = subprocess.Popen(
        [
            str(BIN / "librarian"),
            "serve",
            str(SAMPLE),
            "--cron",
            "0 2 * * *",
            "--name",
            "t",
            "--out-root",
            str(out_root),
            "--uncalibrated",
            "--commit",
            "--db",
            url,
        ],
        env={
            k: v
            for k, v in client_env(prefect_api, tmp_path / "home").items()
            if k != "LIBRARIAN_DB"
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        registered = deployment(prefect_api, "t", wait_s=180)
        crons = [s.schedule.cron for s in registered.schedules]
        assert crons == ["0 2 * * *"]
        assert secret not in json.dumps(registered.parameters)
        assert registered.parameters["database"].startswith("postgresql+psycopg://")
        flow_run = run_once(prefect_api, registered.id, timeout_s=300)
        assert flow_run.state is not None and flow_run.state.is_completed(), flow_run.state
        runs_seen = all_flow_runs(prefect_api)
        assert {r.name for r in runs_seen} and all(
            secret not in json.dumps(r.parameters, default=str) for r in runs_seen
        )
    finally:
        os.killpg(serving.pid, signal.SIGINT)
        try:
            serving.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serving.pid, signal.SIGKILL)
    runs = list(out_root.iterdir())
    assert len(runs) == 1
    summary = json.loads((runs[0] / "summary.json").read_text())
    assert summary["read"] == 29 and summary["mode"] == "commit"
    assert secret not in (runs[0] / "summary.json").read_text()


def test_deploy_registers_for_a_worker(prefect_api: str, tmp_path: Path) -> None:
    env = client_env(prefect_api, tmp_path / "home")
    done = subprocess.run(
        [
            str(BIN / "librarian"),
            "deploy",
            str(SAMPLE),
            "--cron",
            "15 3 * * *",
            "--name",
            "d",
            "--pool",
            "librarian-test",
            "--out-root",
            str(tmp_path / "out"),
            "--uncalibrated",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    registered = deployment(prefect_api, "d")
    assert registered.work_pool_name == "librarian-test"
    assert [s.schedule.cron for s in registered.schedules] == ["15 3 * * *"]
    assert registered.entrypoint == "librarian/flows/scheduled.py:scheduled_run"
    assert registered.parameters["input_path"] == str(SAMPLE)

    flow_run = run_once(prefect_api, registered.id, timeout_s=0)  # scheduled, not awaited
    worker = subprocess.run(
        [str(BIN / "prefect"), "worker", "start", "--pool", "librarian-test", "--run-once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert worker.returncode == 0, worker.stdout[-2000:] + worker.stderr[-2000:]
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: prefect_api}), get_client(sync_client=True) as c:
        state = c.read_flow_run(flow_run.id).state
    assert state is not None and state.is_completed(), state
    runs = list((tmp_path / "out").iterdir())
    assert len(runs) == 1 and json.loads((runs[0] / "summary.json").read_text())["read"] == 29


@pytest.mark.parametrize("command", ["deploy", "serve"])
def test_scheduling_needs_a_persistent_server(tmp_path: Path, command: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    done = subprocess.run(
        [str(BIN / "librarian"), command, str(SAMPLE), "--cron", "* * * * *", "--uncalibrated"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "librarian server start" in done.stderr
    assert "PREFECT_API_URL" in done.stderr and "Traceback" not in done.stderr


def flow_runs(api: str, name: str) -> list[Any]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api}), get_client(sync_client=True) as client:
        only = DeploymentFilter(name=DeploymentFilterName(any_=[name]))
        return list(client.read_flow_runs(deployment_filter=only))


def summary_artifacts(api: str) -> list[Any]:
    """The run-summary artifacts on the server (the linking flow, a subflow of the
    scheduled one, leaves them)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api}), get_client(sync_client=True) as client:
        found = ArtifactFilter(key=ArtifactFilterKey(any_=["librarian-run-summary"]))
        return list(client.read_artifacts(artifact_filter=found))


def started(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def stopped(process: subprocess.Popen[str], sig: int) -> int:
    os.killpg(process.pid, sig)
    try:
        return process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


def test_a_one_minute_schedule_runs_by_itself(tmp_path: Path) -> None:
    """`librarian server start`, then `serve --cron "* * * * *"`: a run the scheduler
    created (nobody asked for it) completes and leaves its summary artifact."""
    from librarian.flows.server import free_port

    port = free_port()
    server = started(
        [
            str(BIN / "librarian"),
            "server",
            "start",
            "--port",
            str(port),
            "--home",
            str(tmp_path / "home"),
        ],
        dict(os.environ),
        tmp_path / "server.log",
    )
    api = f"http://127.0.0.1:{port}/api"
    serving = None
    try:
        deadline = time.monotonic() + 180
        while f"PREFECT_API_URL={api}" not in (tmp_path / "server.log").read_text():
            assert server.poll() is None and time.monotonic() < deadline, (
                tmp_path / "server.log"
            ).read_text()[-2000:]
            time.sleep(0.5)
        serving = started(
            [
                str(BIN / "librarian"),
                "serve",
                str(SAMPLE),
                "--cron",
                "* * * * *",
                "--name",
                "minute",
                "--out-root",
                str(tmp_path / "out"),
                "--uncalibrated",
            ],
            client_env(api, tmp_path / "client"),
            tmp_path / "serve.log",
        )
        deadline = time.monotonic() + 240
        done: list[Any] = []
        while not done and time.monotonic() < deadline and serving.poll() is None:
            done = [r for r in flow_runs(api, "minute") if r.state and r.state.is_completed()]
            time.sleep(3)
        assert done, (tmp_path / "serve.log").read_text()[-3000:]
        (artifact, *_) = summary_artifacts(api)  # a fresh server: this run's
        assert "read" in str(artifact.data)
    finally:
        if serving is not None:
            stopped(serving, signal.SIGINT)
        assert stopped(server, signal.SIGTERM) == 0  # it hung on SIGTERM (issue 21, 16)
    summaries = list((tmp_path / "out").glob("*/summary.json"))
    assert summaries and json.loads(summaries[0].read_text())["read"] == 29
    assert (tmp_path / "home" / "prefect").is_dir()  # the server's database, in the home


def test_server_start_on_a_port_in_use_fails_saying_so(tmp_path: Path) -> None:
    """Issue 21, item 16: the other server answered the health check and `server start`
    reported success."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(BIN / "librarian"), "server", "start", "--port", str(port), "--home", "h"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode != 0 and "PREFECT_API_URL" not in done.stdout
    assert f"cannot bind 127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr
