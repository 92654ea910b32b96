"""The shipped configuration's speed against the naive torch MiniLM encode, in one run, on
distinct texts and a fresh vector cache (nothing read back from an earlier run).

    python scripts/bench_speed_ratio.py [--models DIR] [--sections 600]

Builds the sections as scripts/bench_throughput.py does (unlinked controls cut into spans
of at most 1,200 characters), links 64 to warm up (models loaded, hub vectors built), then
runs the rest through the runner (as a file: batches of 256, every stage, files written),
then the shipped encoder alone on the same texts, then sentence-transformers' `encode` of
them. Prints the rates, the run's ratio to each, what a row costs outside the encoder (and
what that makes of a faster CPU's encoder), and where a row's milliseconds go, stage by stage.
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
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import parse_line, query_text
from librarian.pipeline.run import RunParts, run_source
from librarian.pipeline.sinks import FileSink
from librarian.pipeline.sources import JsonlFile
from librarian.schemas.records import RunSummary, Section
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
        lines = queue.read_bytes().splitlines()
        timed_file = Path(tmp) / "timed.jsonl"
        timed_file.write_bytes(b"\n".join(lines[64:]) + b"\n")
        sections = []
        for number, raw in enumerate(lines, start=1):
            parsed = parse_line(number, raw)
            assert isinstance(parsed, Section)
            sections.append(parsed)
        pipeline = build_pipeline(LinkerSettings(models_dir=args.models, cache_dir=Path(tmp)))
        one_shot.link(pipeline, sections[:64], "warm-up")
        summary = RunSummary(run_id="bench", input="", out_dir="", started_at="")
        started = time.perf_counter()
        with FileSink(Path(tmp) / "out") as files:
            batches = JsonlFile(timed_file).batches(256)
            run_source(
                pipeline, batches, pipeline.context("bench"), summary, RunParts(sinks=[files])
            )
        shipped = time.perf_counter() - started
        texts = [query_text(s) for s in sections[64:]]
        shipped_encoder = getattr(pipeline.embed.embedder, "inner", pipeline.embed.embedder)
        started = time.perf_counter()
        shipped_encoder.encode(texts)  # the shipped encoder alone: no cache, no stage
        alone = time.perf_counter() - started
        embedder = SentenceTransformerEmbedder()
        embedder.encode(texts[:32])
        started = time.perf_counter()
        embedder.encode(texts)
        naive = time.perf_counter() - started
    n = len(texts)
    print(f"{n} distinct sections, fresh cache, batches of 256 through the runner")
    print(
        f"shipped configuration: {n / shipped:.1f} sections/s ({1000 * shipped / n:.2f} ms a row)"
    )
    print(f"the shipped encoder alone, same texts: {n / alone:.1f} sentences/s")
    print(f"naive torch MiniLM encode: {n / naive:.1f} sentences/s")
    print(f"ratio to the naive torch encode: {naive / shipped:.2f}x")
    print(f"ratio to the shipped encoder alone: {alone / shipped:.2f}x (target >= 0.9)")
    outside = (shipped - alone) / n
    for encoder_ms in (9.0, 4.5):  # a faster CPU's encoder: the rest of the row is the same
        fast = outside + encoder_ms / 1000
        print(
            f"with a {encoder_ms} ms encoder, the same {1000 * outside:.2f} ms outside it: "
            f"{(encoder_ms / 1000) / fast:.2f}x of the encoder alone"
        )
    print("where a row's milliseconds go (the runner's and the pipeline's stages):")
    for stage, seconds in sorted(summary.timings_s.items(), key=lambda kv: -kv[1]):
        if not stage.startswith("wait_for"):  # the in-process executor has nothing to wait on
            print(f"  {stage:<14} {1000 * seconds / n:7.2f} ms")


if __name__ == "__main__":
    main()
