"""Issue 56, items 4 and 14. `--out DIR` replaced DIR whole: `run data/policy.csv --out
data` deleted the input, `relink --out precious` a file the librarian never wrote, and
`--out .` failed ("Device or resource busy"), leaving a `..XXXX.old/` folder behind. A run
now replaces only an earlier run's files (named in its manifest.json) and refuses a folder
holding anything else. A dry run given --db opened SQLite read-write and failed on a
read-only file system ("unable to open database file"): it opens it read-only."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.cli import app
from librarian.errors import UsageError
from librarian.paths import packaged_data
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.sinks import FileSink
from librarian.schemas.envelopes import Envelope
from librarian.schemas.records import RunSummary
from librarian.store.db import make_engine, upgrade
from librarian.store.tables import DecisionRow
from tests.seeded import store_texts
from tests.stubs import stub_pipeline

runner = CliRunner()
SAMPLE = packaged_data("samples", "queue_sample.jsonl")
RUN_FILES = {
    "proposals.jsonl", "reviews.jsonl", "rejected.jsonl", "skipped.jsonl", "routing.jsonl",
    "summary.json", "summary.md",
}  # fmt: skip


def envelopes() -> list[Envelope]:
    sections = [section_from_text("see CRE 200-001").model_copy(update={"chunk_id": "c0"})]
    return one_shot.link(stub_pipeline(), sections, "r", datetime(2026, 1, 1, tzinfo=UTC)).envelopes


def a_run(out: Path, run_id: str) -> None:
    """A whole run's files written to `out` through the file sink."""
    writer = FileSink(out)
    writer.write_batch(envelopes())
    writer.commit(RunSummary(run_id=run_id, input="i", out_dir=str(out), started_at="t"))


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


# Item 4: --out replaces only what a run wrote -------------------------------------------


def test_an_out_holding_the_input_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    policy = data / "policy.csv"
    policy.write_text("id,text\nR1,Rotate the session token after login.\n")
    result = runner.invoke(app, ["run", str(policy), "--out", str(data)])
    assert result.exit_code == 2, result.output
    assert "holds the input" in result.output and "policy.csv" in result.output
    assert [p.name for p in data.iterdir()] == ["policy.csv"]
    assert policy.read_text().startswith("id,text\nR1,")
    # Named like a run's file, in an earlier run's folder: still the input, still refused.
    a_run(tmp_path / "earlier", "r1")
    from librarian.pipeline.sinks import check_out_dir

    with pytest.raises(UsageError, match="holds the input"):
        check_out_dir(tmp_path / "earlier", [tmp_path / "earlier" / "reviews.jsonl"])


def test_an_out_holding_other_files_is_refused_naming_them(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("mine")
    (precious / "drafts").mkdir()
    for command in (["run", str(SAMPLE)], ["relink", "--source", "s", "--db", "sqlite:///x"]):
        result = runner.invoke(app, [*command, "--out", str(precious)])
        assert result.exit_code == 2, result.output
        said = " ".join(result.output.split())
        assert "holds files no librarian run wrote (drafts/, notes.txt)" in said, said
    assert (precious / "notes.txt").read_text() == "mine" and (precious / "drafts").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]


def test_relink_never_deletes_what_its_out_held(tmp_path: Path) -> None:
    from librarian.review.relink import relink

    engine = make_engine(f"sqlite:///{tmp_path / 's.db'}")
    upgrade(engine)
    store_texts(engine, "r1")
    with Session(engine) as session:
        source = str(session.execute(select(DecisionRow.source_key)).scalars().first())
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match=r"notes\.txt"):
        relink(engine, stub_pipeline(), source, "relink-1", False, out_dir=precious)
    assert contents(precious) == {"notes.txt": b"mine"}
    engine.dispose()


@pytest.fixture
def in_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    yield here


def test_out_dot_is_written_when_empty_and_refused_when_not(in_folder: Path) -> None:
    a_run(Path("."), "r1")  # an empty folder: the run's files go into it
    assert set(contents(in_folder)) == RUN_FILES | {"manifest.json"}
    assert [p.name for p in in_folder.parent.iterdir()] == ["here"]  # no `..XXXX.old`
    a_run(Path("."), "r2")  # an earlier run's: replaced
    assert json.loads((in_folder / "summary.json").read_text())["run_id"] == "r2"
    (in_folder / "policy.csv").write_text("id,text\n")
    before = contents(in_folder)
    result = runner.invoke(app, ["run", str(SAMPLE), "--out", "."])
    assert result.exit_code == 2 and "(policy.csv)" in " ".join(result.output.split())
    assert contents(in_folder) == before
    assert {p.name for p in in_folder.iterdir()} == set(before)  # nothing left behind
    assert [p.name for p in in_folder.parent.iterdir()] == ["here"]


def test_an_earlier_runs_files_alone_are_replaced_named_in_its_manifest(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    a_run(out, "r1")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["written_by"] == "librarian" and manifest["run_id"] == "r1"
    assert set(manifest["files"]) == RUN_FILES
    first = contents(out)
    with pytest.raises(RuntimeError), FileSink(out) as writer:  # a failed run changes nothing
        writer.write_batch(envelopes())
        raise RuntimeError("the run failed half-way")
    assert contents(out) == first and {p.name for p in out.iterdir()} == set(first)
    a_run(out, "r2")
    assert set(contents(out)) == RUN_FILES | {"manifest.json"}
    assert json.loads((out / "manifest.json").read_text())["run_id"] == "r2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging, no `.old`


@pytest.mark.parametrize(
    "plant",
    [
        pytest.param(lambda out: (out / "notes.txt").write_text("mine"), id="manifest-folder"),
        pytest.param(  # a manifest naming what no run writes is not believed
            lambda out: (
                (out / "notes.txt").write_text("mine"),
                (out / "manifest.json").write_text(
                    json.dumps({"written_by": "librarian", "files": ["notes.txt"]})
                ),
            ),
            id="manifest-naming-another-file",
        ),
        pytest.param(  # another program's manifest.json: not the librarian's folder
            lambda out: (out / "manifest.json").write_text('{"files": ["proposals.jsonl"]}'),
            id="foreign-manifest",
        ),
    ],
)
def test_a_run_folder_holding_more_is_refused_and_kept(tmp_path: Path, plant: object) -> None:
    out = tmp_path / "out"
    a_run(out, "r1")
    plant(out)  # type: ignore[operator]
    before = contents(out)
    with pytest.raises(UsageError, match="holds files no librarian run wrote"):
        a_run(out, "r2")
    assert contents(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_older_versions_folder_is_replaced_only_when_it_holds_only_its_files(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text('{"run": "before"}')  # no manifest: an older version
    (out / "reviews.jsonl.part").write_text("left by a failed run of that version\n")
    (out / "policy.docx").write_bytes(b"PK")
    before = contents(out)
    with pytest.raises(UsageError, match=r"\(policy.docx\)"):
        a_run(out, "r1")
    assert contents(out) == before
    (out / "policy.docx").unlink()
    a_run(out, "r1")
    assert set(contents(out)) == RUN_FILES | {"manifest.json"}  # its `.part` file removed


def test_what_appears_in_out_while_the_run_runs_is_kept_and_the_run_refused(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    a_run(out, "r1")
    first = contents(out)
    writer = FileSink(out)
    writer.write_batch(envelopes())
    (out / "notes.txt").write_text("saved meanwhile")
    with pytest.raises(UsageError, match=r"notes\.txt"), writer:
        writer.commit(RunSummary(run_id="r2", input="i", out_dir=str(out), started_at="t"))
    assert contents(out) == first | {"notes.txt": b"saved meanwhile"}
    assert {p.name for p in out.iterdir()} == set(first) | {"notes.txt"}  # no staging left


# Item 14: a dry run opens the database read-only -----------------------------------------


def migrated(path: Path) -> str:
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def test_a_dry_run_opens_the_database_read_only(tmp_path: Path) -> None:
    from librarian.cli.options import LinkerOptions
    from librarian.cli.run import run_database

    url = migrated(tmp_path / "store.db")
    reading = run_database(LinkerOptions({}, db=url), dry_run=True, from_db=False)
    assert reading is not None and "mode=ro" in reading
    engine = make_engine(reading)
    try:
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM decision_queue")).scalar() == 0
        with pytest.raises(OperationalError, match="readonly"), engine.begin() as connection:
            connection.execute(text("DELETE FROM alembic_version"))
    finally:
        engine.dispose()


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A folder and a read-only bind mount of it (a read-only file system: root writes
    through chmod 555); skipped where this user may not mount."""
    source, mounted = tmp_path / "src", tmp_path / "ro"
    source.mkdir()
    mounted.mkdir()
    if subprocess.run(["mount", "--bind", str(source), str(mounted)], check=False).returncode:
        pytest.skip("mount --bind is not permitted here")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(mounted)], check=True)
        yield source, mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=False)


def test_a_dry_run_reads_a_database_on_a_read_only_file_system(
    read_only_mount: tuple[Path, Path],
) -> None:
    from librarian.cli.options import LinkerOptions
    from librarian.cli.run import run_database

    source, mounted = read_only_mount
    migrated(source / "store.db")
    on_ro = f"sqlite:///{mounted / 'store.db'}"
    reading = run_database(LinkerOptions({}, db=on_ro), dry_run=True, from_db=False)
    assert reading is not None
    engine = make_engine(reading)
    try:
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM decision_queue")).scalar() == 0
    finally:
        engine.dispose()
