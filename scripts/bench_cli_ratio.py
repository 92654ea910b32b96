"""The command a user runs against the shipped encoder alone, on the same texts: the
marginal rate of `librarian run INPUT --dry-run` (what one more row costs it, the start
and the models' loading taken out) over the encoder's own rate.

    python scripts/bench_cli_ratio.py [--rows 4800] [--small 400] [--repeat 3] [--per-source 1]

Builds the rows as scripts/bench_throughput.py does (the unlinked controls cut into spans
of at most 1,200 characters, each made a distinct text by its row number, so that none is
read from the vector cache), `--per-source` rows a source (1: each row a source of its
own, as a queue drain of many repositories has them; 0: one source for all),
runs the console script on the first `--small` rows and on all `--rows`, each time with a
fresh vector cache (the hub's vectors copied in, as a warm home has them), and takes the
marginal rate from the difference. Then the shipped encoder alone (one text a call, as the
stage calls it) on the texts the extra rows add. Prints the rates, the ratio, what a row
costs outside the encoder, and the sizes of what the run wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_throughput import build_queue

from librarian.factory import build_pipeline
from librarian.paths import librarian_home
from librarian.pipeline.ingest import parse_line, query_text
from librarian.schemas.records import Section
from librarian.settings import LinkerSettings

CLI = Path(sys.executable).with_name("librarian")


def timed_run(queue: Path, home_cache: Path, work: Path, name: str) -> tuple[float, Path]:
    """Seconds `librarian run` took on `queue`, with a fresh cache holding the hub vectors."""
    cache = work / f"cache-{name}"
    cache.mkdir()
    for hub_vectors in home_cache.glob("hub-*.npz"):
        shutil.copy(hub_vectors, cache)
    out = work / f"out-{name}"
    command = [str(CLI), "run", str(queue), "--dry-run", "--quiet", "--out", str(out)]
    command += ["--cache-dir", str(cache), "--run-id", f"bench-{name}"]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started, out


def distinct(queue: Path, per_source: int) -> None:
    """`queue`'s rows made distinct texts (the controls give ~1,050 spans; a repeated text
    would be read from the vector cache, not encoded) and put in sources of `per_source`
    rows each (0: leave them in one)."""
    rows = [json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines()]
    for i, row in enumerate(rows):
        row["text"] += f" (row {i})"
        if per_source > 0:
            row["source_repo"] = f"bench/standard-{i // per_source:05d}"
    queue.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def encoder_alone(queue: Path, skip: int, models: Path, cache: Path) -> tuple[int, float]:
    """(texts, seconds) of the shipped encoder alone on the rows after the first `skip`."""
    sections = []
    for number, raw in enumerate(queue.read_bytes().splitlines(), start=1):
        parsed = parse_line(number, raw)
        assert isinstance(parsed, Section)
        sections.append(parsed)
    texts = [query_text(s) for s in sections[skip:]]
    pipeline = build_pipeline(LinkerSettings(models_dir=models, cache_dir=cache))
    encoder = getattr(pipeline.embed.embedder, "inner", pipeline.embed.embedder)
    encoder.encode(texts[:16])  # its session warmed, as the run's is by then
    started = time.perf_counter()
    encoder.encode(texts)
    return len(texts), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=4800)
    parser.add_argument("--small", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-source", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    home = librarian_home()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        big, small = work / "big.jsonl", work / "small.jsonl"
        build_queue(args.rows, big)
        distinct(big, args.per_source)
        small.write_bytes(b"".join(big.read_bytes().splitlines(keepends=True)[: args.small]))
        # The encoder alone before and after the runs: the machine's pace drifts.
        n, before = encoder_alone(big, args.small, home.models, work / "cache-encoder-0")
        marginal: list[float] = []
        for attempt in range(args.repeat):
            t_small, _ = timed_run(small, home.cache, work, f"small{attempt}")
            t_big, out = timed_run(big, home.cache, work, f"big{attempt}")
            rate = (args.rows - args.small) / (t_big - t_small)
            marginal.append(rate)
            print(
                f"run {attempt + 1}: {args.small} rows {t_small:.1f} s, {args.rows} rows "
                f"{t_big:.1f} s: marginal {rate:.1f} rows/s"
            )
        n, after = encoder_alone(big, args.small, home.models, work / "cache-encoder-1")
        encoder_rate = 2 * n / (before + after)
        print(f"encoder alone: {n / before:.1f} texts/s before the runs, {n / after:.1f} after")
        best = statistics.median(marginal)
        print(f"the shipped encoder alone, one text a call (mean): {encoder_rate:.1f} texts/s")
        print(f"librarian run --dry-run, marginal (median of {args.repeat}): {best:.1f} rows/s")
        print(f"ratio to the encoder alone: {best / encoder_rate:.2f}x (target >= 0.9)")
        print(f"outside the encoder: {1000 * (1 / best - 1 / encoder_rate):.2f} ms a row")
        for path in sorted(out.iterdir()):
            if path.is_file():
                lines = path.read_bytes().count(b"\n")
                print(f"  {path.name:<22} {path.stat().st_size / 1e6:8.2f} MB {lines:7d} lines")


if __name__ == "__main__":
    main()
