"""What the verifier adds to a row: the name overlaps of its candidates and its confidence.

    python scripts/bench_verifier.py [--models DIR] [--golden data/golden/dev.json]

Reads the trained models (default: the librarian home's), and times, one thread, for
every golden text: `Verifier.overlaps` over 20 hub ids drawn at random, then
`Verifier.confidence`. Prints ms a row (docs/benchmarks.md). C.5 computes the confidence
two or three times a row (cold, warm, a decided item's folds), the overlaps once.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from librarian.artifacts.card import load_trained
from librarian.artifacts.verifier import Verifier
from librarian.catalogue.hub import load_hub
from librarian.paths import DEFAULT_HUB, librarian_home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--golden", type=Path, default=Path("data/golden/dev.json"))
    args = parser.parse_args()
    hub = load_hub(DEFAULT_HUB)
    trained = load_trained(args.models or librarian_home(None).models, hub.content_hash)
    model = trained.source_model.verifier if trained.source_model else None
    if model is None:
        raise SystemExit("these models have no verifier: run `librarian train`")
    verifier = Verifier.of(model, trained.calibrator, {n.cre_id: n.name for n in hub.nodes})
    texts = [row["input"]["text"] for row in json.loads(args.golden.read_text())]
    draw = random.Random(0)
    rows = [
        (text, draw.sample(hub.ids, 20), sorted((draw.random() for _ in range(20)), reverse=True))
        for text in texts
    ]
    start = time.perf_counter()
    for text, cres, scores in rows:
        verifier.confidence(verifier.overlaps(text, cres), scores, None, 0.5, 0)
    took = time.perf_counter() - start
    print(f"{len(rows)} rows: {took / len(rows) * 1000:.3f} ms a row (overlaps + confidence)")


if __name__ == "__main__":
    main()
