"""Issue 56, items 4 and 14, through the real console script on the raw MiniLM: a run
into its input's folder deleted the input (exit 0); a dry run given a database on a
read-only file system failed ("unable to open database file")."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from librarian.store.db import make_engine, upgrade
from tests.integration.conftest import SAMPLE, RawRun

pytestmark = pytest.mark.integration


def test_a_run_into_its_inputs_folder_is_refused_and_deletes_nothing(
    tmp_path: Path, raw_run: RawRun
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    policy = data / "policy.csv"
    policy.write_text("id,text\nR1,Rotate the session token after login.\n")
    (data / "notes.txt").write_text("mine")
    result = raw_run(str(policy), "--out", str(data))
    assert result.returncode == 2, result.stderr[-3000:]
    assert "holds the input" in result.stderr and "policy.csv" in result.stderr
    assert sorted(p.name for p in data.iterdir()) == ["notes.txt", "policy.csv"]
    assert policy.read_text().startswith("id,text\nR1,")


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A folder and a read-only bind mount of it (root writes through chmod 555)."""
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


def test_a_dry_run_reads_a_read_only_database_and_replaces_its_earlier_output(
    tmp_path: Path, raw_run: RawRun, read_only_mount: tuple[Path, Path]
) -> None:
    source, mounted = read_only_mount
    engine = make_engine(f"sqlite:///{source / 'l.db'}")
    upgrade(engine)
    engine.dispose()
    out = tmp_path / "out"
    on_ro = f"sqlite:///{mounted / 'l.db'}"
    for run_id in ("first", "second"):  # the second replaces the first's files
        dry = raw_run(str(SAMPLE), "--db", on_ro, "--out", str(out), "--run-id", run_id)
        assert dry.returncode == 0, dry.stderr[-3000:]
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["run_id"] == run_id
        assert json.loads((out / "summary.json").read_text())["run_id"] == run_id
    assert {p.name for p in out.iterdir()} == {"manifest.json", *manifest["files"]}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
