"""The models' own speed (the ceiling) against the pipeline's, measured in one run.

Ceiling: the embedding model's `encode` over all section texts in one call, in a tight
loop after a warm-up (sentences/s); the cross-encoder's `predict` over (section, hub
path) pairs (pairs/s). Pipeline: `Linker.link` over the same sections in batches as the
flow makes them (sections/s), and the naive loop that links one section at a time.
Prints each and the ratio pipeline / ceiling. No Prefect: the flow adds ~30 ms a batch
(measured end to end by scripts/bench_throughput.py).

The cross-encoder is built from the packaged MiniLM weights with an untrained head: it
measures speed only.

Run: python scripts/bench_models.py [--sections 1000] [--batch-size 256] [--pairs 400]
     [--int8 DIR] [--models DIR]   (ratios of the int8 and shipped rows are to the torch
     ceiling; --models: the shipped configuration, int8 embedder + linked-section evidence
     + calibrator, as `librarian train` built it)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from bench_throughput import build_queue, untrained_cross_encoder

from librarian.factory import build_pipeline
from librarian.models.onnx_embedder import OnnxEmbedder
from librarian.models.transformer import CrossEncoderScorer, SentenceTransformerEmbedder
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import parse_line, query_text
from librarian.schemas.records import Section
from librarian.settings import LinkerSettings


def best_of(repeats: int, work: object) -> float:
    """The fastest of `repeats` timings of `work()`: the least disturbed by the machine."""
    assert callable(work)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--int8", type=Path, default=None, help="also measure this `librarian quantize` build"
    )
    parser.add_argument(
        "--models", type=Path, default=None, help="also the shipped configuration (trained models)"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    with tempfile.TemporaryDirectory() as tmp:
        queue = Path(tmp) / "queue.jsonl"
        build_queue(args.sections, queue)
        sections = []
        for number, raw in enumerate(queue.read_bytes().splitlines(), start=1):
            parsed = parse_line(number, raw)
            assert isinstance(parsed, Section)
            sections.append(parsed)
        texts = [query_text(s) for s in sections]

        embedder = SentenceTransformerEmbedder()
        # No section-vector cache: every timed repeat embeds every section (a cache filled
        # by the first repeat made the second read 280 sections/s: no rate a new source sees).
        settings = LinkerSettings(cache_dir=None, uncalibrated=True)
        linker = build_pipeline(settings)
        embedder.encode(texts[:64])  # warm-up
        encode_s = best_of(args.repeats, lambda: embedder.encode(texts))

        def pipeline() -> None:
            for start in range(0, len(sections), args.batch_size):
                one_shot.link(linker, sections[start : start + args.batch_size], "bench")

        pipeline_s = best_of(args.repeats, pipeline)
        naive_n = min(200, len(sections))
        naive_s = best_of(
            1, lambda: [one_shot.link(linker, [s], "bench") for s in sections[:naive_n]]
        ) * (len(sections) / naive_n)

        int8_rows: list[tuple[str, str, str]] = []
        if args.int8 is not None:
            int8 = OnnxEmbedder(args.int8)
            int8.encode(texts[:64])
            int8_encode_s = best_of(args.repeats, lambda: int8.encode(texts))
            int8_settings = settings.model_copy(update={"embedding_model": args.int8})
            int8_linker = build_pipeline(int8_settings)

            def int8_pipeline() -> None:
                for start in range(0, len(sections), args.batch_size):
                    one_shot.link(int8_linker, sections[start : start + args.batch_size], "bench")

            int8_pipeline_s = best_of(args.repeats, int8_pipeline)
            n = len(sections)
            int8_rows = [
                (
                    "int8 ONNX embedding (encode, one call)",
                    f"{n / int8_encode_s:.1f} sentences/s",
                    f"{encode_s / int8_encode_s:.2f}",
                ),
                (
                    "pipeline on int8 ONNX, batches of " + str(args.batch_size),
                    f"{n / int8_pipeline_s:.1f} sections/s",
                    f"{encode_s / int8_pipeline_s:.2f}",
                ),
            ]

        if args.models is not None:
            shipped = build_pipeline(LinkerSettings(models_dir=args.models, cache_dir=None))

            def shipped_pipeline() -> None:
                for start in range(0, len(sections), args.batch_size):
                    one_shot.link(shipped, sections[start : start + args.batch_size], "bench")

            one_shot.link(shipped, sections[:64], "warm-up")
            shipped_s = best_of(args.repeats, shipped_pipeline)
            int8_rows.append(
                (
                    "shipped: int8 + linked-section evidence + calibrator, batches of "
                    + str(args.batch_size),
                    f"{len(sections) / shipped_s:.1f} sections/s",
                    f"{encode_s / shipped_s:.2f}",
                )
            )

        scorer = CrossEncoderScorer(untrained_cross_encoder(Path(tmp) / "ce"))
        hub_texts = [" > ".join(n.hierarchy_path) for n in linker.hub.nodes]
        pairs = [(texts[i % len(texts)], hub_texts[i % len(hub_texts)]) for i in range(args.pairs)]
        scorer.predict(pairs[:32])  # warm-up
        pairs_s = best_of(args.repeats, lambda: scorer.predict(pairs))

    n = len(sections)
    ceiling = n / encode_s
    rows = [
        ("embedding ceiling (encode, one call)", f"{ceiling:.1f} sentences/s", "1.00"),
        (
            "pipeline, batches of " + str(args.batch_size),
            f"{n / pipeline_s:.1f} sections/s",
            f"{(n / pipeline_s) / ceiling:.2f}",
        ),
        (
            "naive loop, one section a call",
            f"{n / naive_s:.1f} sections/s",
            f"{(n / naive_s) / ceiling:.2f}",
        ),
        *int8_rows,
        (
            "cross-encoder ceiling (predict)",
            f"{args.pairs / pairs_s:.1f} pairs/s",
            f"→ rerank of 20 ≤ {args.pairs / pairs_s / 20:.2f} sections/s",
        ),
    ]
    print(
        f"{n} sections, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    print("| what | speed | ratio to the ceiling |")
    print("|---|---|---|")
    for what, speed, ratio in rows:
        print(f"| {what} | {speed} | {ratio} |")
    print(
        json.dumps(
            {
                "sections": n,
                "encode_s": round(encode_s, 2),
                "pipeline_s": round(pipeline_s, 2),
                "naive_s": round(naive_s, 2),
                "pairs_per_s": round(args.pairs / pairs_s, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
