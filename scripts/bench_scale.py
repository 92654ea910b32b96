"""Memory and speed of a run as the input grows: N distinct rows through the real flow.

    python scripts/bench_scale.py --rows 10000 [--models DIR] [--batch-size 256]
    python scripts/bench_scale.py --rows 200000 --model-free   # everything but the model

Generates N distinct KnowledgeItem rows (the packaged section texts and unlinked controls,
cut to at most 1,200 characters, each made unique by a numbered tail), in documents of
`--per-source` rows (a standard's size; each document is one source, linked as a whole),
then runs the `librarian-link` Prefect flow on them in this process (dry run, a fresh
vector cache, the shipped models), with a progress bar. Prints rows/s over the flow, the
process's peak RSS (the Prefect server is another process) and the share of the flow's
time the source-level step (C.5) took.

`--model-free` swaps the embedder for a hashing one after the models load (vectors of the
same size, no model work), to measure what surrounds the model at sizes whose embedding
would take hours on two cores; its rows/s is not a linking rate.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from librarian.paths import librarian_home, packaged_data

SPAN_CHARS = 1200


def texts() -> list[str]:
    out = []
    for name in ("section_texts.jsonl", "unlinked_controls.jsonl"):
        for line in packaged_data("opencre", name).read_text().splitlines():
            if line.strip():
                text = json.loads(line)["text"][: SPAN_CHARS - 40]
                if text.strip():
                    out.append(text)
    return out


def write_rows(n: int, per_source: int, path: Path) -> None:
    """N distinct rows, streamed to `path` (nothing held)."""
    base = texts()
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            doc = i // per_source
            item = {
                "chunk_id": f"bench-{i:07d}",
                "artifact_id": f"standard-{doc:05d}/{i}",
                "source_type": "github",
                "source_repo": f"bench/standard-{doc:05d}",
                "source_commit_sha": "0" * 40,
                "source_committed_at": "2026-12-01T00:00:00Z",
                "locator_path": f"s{doc}/{i}.md",
                "span_index": 0,
                "span_total": 1,
                "span_heading_path": "[]",
                "text": f"{base[i % len(base)]} (clause {i}, part {doc})",
                "llm_label": "KNOWLEDGE",
            }
            handle.write(json.dumps(item) + "\n")


class HashingEmbedder:
    """Unit vectors from word hashes: the size of the real ones, none of their cost."""

    name = "hashing (bench only)"
    fingerprint = "bench-hashing"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dimension] += 1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-12)
        return out

    def truncated(self, texts: Sequence[str]) -> list[int]:
        return []


class Bar:
    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self.progress = Progress(
            "{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()
        )
        self.task = self.progress.add_task("starting", total=total)
        self.progress.start()
        self.at: dict[str, float] = {}

    def phase(self, name: str) -> None:
        self.at[name] = time.perf_counter()
        self.progress.update(self.task, description=name)

    def advance(self, lines: int) -> None:
        self.progress.advance(self.task, lines)

    def stop(self) -> None:
        self.progress.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--per-source", type=int, default=250)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--models", type=Path, default=librarian_home().models)
    parser.add_argument("--model-free", action="store_true")
    args = parser.parse_args()
    for name, value in (
        ("HF_HUB_OFFLINE", "1"),
        ("DO_NOT_TRACK", "1"),
        ("PREFECT_SERVER_ANALYTICS_ENABLED", "false"),
    ):
        os.environ.setdefault(name, value)
    os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")
    from librarian.factory import pipeline_for
    from librarian.flows.link_flow import Parcel, link_queue
    from librarian.job import HandOff, LinkJob
    from librarian.pipeline.stages import EmbedStage
    from librarian.settings import LinkerSettings

    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.jsonl"
        write_rows(args.rows, args.per_source, rows)
        settings = LinkerSettings(
            models_dir=args.models, cache_dir=Path(tmp) / "cache", batch_size=args.batch_size
        )
        pipeline = pipeline_for(settings)
        if args.model_free:
            hashing = EmbedStage(HashingEmbedder(pipeline.embed.embedder.dimension))
            swapped = [hashing if isinstance(s, EmbedStage) else s for s in pipeline.preparing]
            pipeline.preparing = tuple(swapped)
        bar = Bar(args.rows)
        started = time.perf_counter()
        try:
            job = LinkJob(rows, Path(tmp) / "out", settings, "bench-scale")
            summary = link_queue(job, Parcel(HandOff(None, bar))).value
        finally:
            bar.stop()
        wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    loop = bar.at["writing"] - bar.at["linking"]  # the runner's time: no server start
    source = summary.timings_s.get("source_level", 0.0)
    print(
        f"rows: {args.rows} distinct, {args.rows // args.per_source} sources, "
        f"batch {args.batch_size}{', model-free' if args.model_free else ''}"
    )
    print(f"linked {summary.linked}, review {summary.review}, rejected {summary.rejected}")
    print(f"rows/s: {args.rows / loop:.1f} (linking {loop:.1f} s, wall with Prefect {wall:.1f} s)")
    print(f"peak RSS: {peak:.0f} MiB")
    print(f"source-level step: {source:.1f} s = {source / loop:.1%} of the flow")
    print(
        json.dumps(
            {
                "rows": args.rows,
                "rows_per_s": args.rows / loop,
                "peak_rss_mib": peak,
                "source_level_share": source / loop,
                "model_free": args.model_free,
            }
        ),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
