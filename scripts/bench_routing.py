"""Routing and search strategies on the dev set: recall@20, top-1 and time per section.

Embeds the dev set's linkable rows once, then for each strategy times what differs
between them — routing each section and searching the hub — over all rows (best of
three), and scores the candidates against the golden CREs. Uses the models `make
dev-eval` trains (models-dev/, without the dev frameworks) for the branch classifier.

Run: python scripts/bench_routing.py [--golden data/golden/dev.json] [--models models-dev]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from librarian.factory import build_pipeline
from librarian.pipeline.ingest import query_text
from librarian.retrieval.flat import Search
from librarian.settings import LinkerSettings
from librarian.training.golden import load_golden, sections_of

STRATEGIES: list[tuple[str, dict[str, object]]] = [
    ("flat, routing off (all collections)", {"routing": "off"}),
    ("flat, routing pins (default; no pins or rules here)", {"routing": "pins"}),
    ("flat, routing auto (branch classifier)", {"routing": "auto"}),
    ("beam width 4", {"routing": "off", "search": "beam", "beam_width": 4}),
    ("beam width 8", {"routing": "off", "search": "beam", "beam_width": 8}),
    ("beam width 16", {"routing": "off", "search": "beam", "beam_width": 16}),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--golden", type=Path, default=Path("data/golden/dev.json"))
    parser.add_argument("--models", type=Path, default=Path("models-dev"))
    parser.add_argument("--top-k", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    # The rows `librarian eval` ranks: expected linked, not on the explicit fast path.
    rows = [
        r
        for r in load_golden(args.golden)
        if r.slice != "explicit" and r.expected.decision == "linked" and r.expected.cre_ids
    ]
    sections = sections_of(rows)
    base = LinkerSettings(models_dir=args.models, top_k=args.top_k)
    vectors = build_pipeline(base).embed.embedder.encode([query_text(s) for s in sections])
    print(f"{len(rows)} dev rows with a known CRE, top-{args.top_k}")
    print("| strategy | recall@20 | top-1 | µs a section (route + search) |")
    print("|---|---|---|---|")
    for name, options in STRATEGIES:
        linker = build_pipeline(base.model_copy(update=options))
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            decisions = [
                linker.retrieve.router.route(s, vectors[i]) for i, s in enumerate(sections)
            ]
            allowed = [linker.retrieve.router.allowed(d) for d in decisions]
            hits = linker.retrieve.retriever.search(vectors, Search(args.top_k, 0.0, allowed))
            best = min(best, time.perf_counter() - started)
        recall = sum(
            any(h.cre_id in (r.expected.cre_ids or ()) for h in row)
            for r, row in zip(rows, hits, strict=True)
        )
        top1 = sum(
            bool(row) and row[0].cre_id in (r.expected.cre_ids or ())
            for r, row in zip(rows, hits, strict=True)
        )
        n = len(rows)
        print(
            f"| {name} | {recall}/{n} ({recall / n:.1%}) | {top1}/{n} ({top1 / n:.1%}) "
            f"| {best / n * 1e6:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
