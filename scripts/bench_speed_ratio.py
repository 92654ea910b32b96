"""The shipped configuration's speed against the naive torch MiniLM encode, in one run, on
distinct texts and a fresh vector cache (nothing read back from an earlier run).

    python scripts/bench_speed_ratio.py [--models DIR] [--sections 600]

Builds the sections as scripts/bench_throughput.py does (unlinked controls cut into spans
of at most 1,200 characters), links 64 to warm up (models loaded, hub vectors built), then
times `Pipeline.link` over the rest in batches of 256, then sentence-transformers' `encode`
of the same texts. Prints both rates and their ratio (issue 27: it must stay >= 1.0).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench_throughput import build_queue

from librarian.factory import build_pipeline
from librarian.models.transformer import SentenceTransformerEmbedder
from librarian.paths import librarian_home
from librarian.pipeline.ingest import parse_line, query_text
from librarian.schemas.records import Section
from librarian.settings import LinkerSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=Path, default=librarian_home().models)
    parser.add_argument("--sections", type=int, default=600)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        queue = Path(tmp) / "queue.jsonl"
        build_queue(args.sections + 64, queue)
        sections = []
        for number, raw in enumerate(queue.read_bytes().splitlines(), start=1):
            parsed = parse_line(number, raw)
            assert isinstance(parsed, Section)
            sections.append(parsed)
        warm, timed = sections[:64], sections[64:]
        pipeline = build_pipeline(LinkerSettings(models_dir=args.models, cache_dir=Path(tmp)))
        pipeline.link(warm, "warm-up")
        started = time.perf_counter()
        for start in range(0, len(timed), 256):
            pipeline.link(timed[start : start + 256], "bench")
        shipped = time.perf_counter() - started
        texts = [query_text(s) for s in timed]
        embedder = SentenceTransformerEmbedder()
        embedder.encode(texts[:32])
        started = time.perf_counter()
        embedder.encode(texts)
        naive = time.perf_counter() - started
    n = len(timed)
    print(f"{n} distinct sections, fresh cache")
    print(f"shipped configuration: {n / shipped:.1f} sections/s")
    print(f"naive torch MiniLM encode: {n / naive:.1f} sentences/s")
    print(f"ratio: {naive / shipped:.2f}x")


if __name__ == "__main__":
    main()
