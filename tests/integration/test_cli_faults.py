"""The console script under faults: a run killed mid-way, and a run that fails."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from librarian.paths import packaged_data
from tests.integration.conftest import LIBRARIAN, RawRun, run_librarian, wait_for_batches

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


def test_a_killed_run_leaves_no_output_that_looks_whole(tmp_path: Path, raw_run: RawRun) -> None:
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
            "--embedding-model",
            str(raw_run.embedder),
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
        # Staged inside an existing --out (issue 56, item 4), beside a new one.
        staged = [*out.glob(".librarian.*.partial/reviews.jsonl")]
        staged += tmp_path.glob(".out.*.partial/reviews.jsonl")
        return staged[0] if staged else tmp_path / "none"

    try:
        wait_for_batches(proc, 1)  # written to the staging directory
        assert part().stat().st_size > 0
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its temporary Prefect server
        proc.wait()
    # The killed run's files are in its staging directory; the previous run's stand as
    # they were, and nothing of the killed run looks whole.
    assert {p.name for p in out.iterdir() if p != part().parent} == {"summary.json"}
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


def test_read_commands_read_a_database_on_a_read_only_file_system(tmp_path: Path) -> None:
    """Issue 47, item 16: `queue status` and `review export` could not even read a SQLite
    database on a read-only file system (SQLite could not create its shared-memory file
    beside it). A read-only bind mount (this machine's root, as CI runs) stands for one."""
    from typer.testing import CliRunner

    from librarian.cli import app

    sample = packaged_data("samples", "queue_sample.jsonl")
    source, mounted = tmp_path / "src", tmp_path / "ro"
    source.mkdir()
    mounted.mkdir()
    db = f"sqlite:///{source / 'q.db'}"
    loaded = CliRunner().invoke(app, ["queue", "load", str(sample), "--db", db])
    assert loaded.exit_code == 0, loaded.output
    subprocess.run(["mount", "--bind", str(source), str(mounted)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(mounted)], check=True)
        assert subprocess.run(["touch", str(mounted / "x")], check=False).returncode != 0
        on_ro = f"sqlite:///{mounted / 'q.db'}"
        status = CliRunner().invoke(app, ["queue", "status", "--db", on_ro])
        assert status.exit_code == 0 and "29 rows waiting" in status.output, status.output
        out = tmp_path / "export.csv"
        export = CliRunner().invoke(app, ["review", "export", "--db", on_ro, "--out", str(out)])
        assert export.exit_code == 0 and out.is_file(), export.output
    finally:
        subprocess.run(["umount", str(mounted)], check=False)


def test_a_full_output_disk_is_one_line(tmp_path: Path, raw_run: RawRun) -> None:
    """Issue 47, item 17: a full output disk printed ~38 lines of Prefect's traceback before
    the librarian's one line, when --quiet was not given. A 64 KiB tmpfs stands for it."""
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)], check=True)
    try:
        sample = packaged_data("samples", "queue_sample.jsonl")
        done = run_librarian(
            "run",
            str(sample),
            "--out",
            str(full / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--uncalibrated",
            "--embedding-model",
            str(raw_run.embedder),
        )
    finally:
        subprocess.run(["umount", str(full)], check=False)
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1, done.stderr
    assert len(said) == 1 and said[0].startswith("error: run "), done.stderr
    assert "No space left on device" in said[0]


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is `pid`, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found[int(entry.name)] = cmdline
    return found


def test_a_run_killed_with_sigkill_leaves_no_prefect_server_behind(
    tmp_path: Path, raw_run: RawRun
) -> None:
    """Issue 47, item 19: each `librarian run` killed with SIGKILL left its temporary
    Prefect server running (~220 MB). The server is told to stop when its run dies."""
    import time

    queue = big_queue(tmp_path / "q.jsonl", 3000)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}  # its own server
    args = [LIBRARIAN, "run", str(queue), "--out", str(tmp_path / "out")]
    args += ["--batch-size", "20", "--cache-dir", str(tmp_path / "cache"), "--uncalibrated"]
    args += ["--embedding-model", str(raw_run.embedder)]
    proc = subprocess.Popen(
        [*args, "--verbose"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        wait_for_batches(proc, 1)
        servers = [p for p, cmd in _children(proc.pid).items() if "prefect.server" in cmd]
        assert len(servers) == 1, _children(proc.pid)
    finally:
        proc.kill()  # SIGKILL to the run alone: no exit handler of it runs
        proc.wait()
    deadline = time.monotonic() + 60
    while _alive(servers[0]) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _alive(servers[0]), "the run's Prefect server outlived it"


def _alive(pid: int) -> bool:
    """Running: present, and no zombie (a dead child nobody reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
