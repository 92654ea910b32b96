"""Linking one source of N sections as a whole (C.5), against the run it sits in.

Builds N synthetic items of one source, each with top-k candidates over the packaged hub
(scores falling from ~0.7 with noise, so many items are within lambda of each other), and
times (1) the exact joint choice at lambda 0.05 and inner penalty 0.05, forced on (the
worst case: the shape rule would switch lambda off for a source that reuses CREs as much
as a random one does), and (2) the whole slot as a run calls it (priors from the shape,
collective evidence). Peak memory is traced over each. The run's time for N sections is
extrapolated from the shipped pipeline linking real sections (`--sample` of them, real
models from the librarian home), and the ratio printed.

Run: python scripts/bench_source_level.py [--items 100000] [--top-k 20] [--sample 300]
"""

from __future__ import annotations

import argparse
import random
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from librarian.artifacts.calibrator import Calibrator
from librarian.artifacts.source_model import JOINT_FEATURES, SourceModel
from librarian.catalogue.hub import load_hub
from librarian.paths import DEFAULT_HUB, packaged_data
from librarian.pipeline import one_shot
from librarian.pipeline.source_level import SlotRow, SourceLevelSlot
from librarian.policy import DecisionPolicy
from librarian.retrieval.collective import Claim, PriorRule, SourcePriors, assign
from librarian.retrieval.flat import ScoredHub


def synthetic(ids: list[str], items: int, k: int, seed: int) -> list[list[ScoredHub]]:
    rng = random.Random(seed)
    out = []
    for _ in range(items):
        chosen = rng.sample(ids, k)
        top = 0.7 + rng.gauss(0, 0.05)
        scores = sorted((top - abs(rng.gauss(0, 0.08)) for _ in chosen), reverse=True)
        out.append([ScoredHub(c, s) for c, s in zip(chosen, scores, strict=True)])
    return out


def traced(work: Callable[[], Any]) -> tuple[float, float]:
    tracemalloc.start()
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak / 2**20


def run_rate(sample: int) -> float:
    """Sections per second of the shipped pipeline on real sections (models loaded)."""
    import json

    from librarian.cli.common import home_of
    from librarian.factory import build_pipeline
    from librarian.pipeline.ingest import section_from_text
    from librarian.settings import LinkerSettings

    home = home_of(None)
    settings = LinkerSettings(models_dir=home.models, cache_dir=None)
    pipeline = build_pipeline(settings)
    controls = packaged_data("opencre", "unlinked_controls.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in controls if line][:sample]
    sections = [section_from_text(t) for t in texts]
    started = time.perf_counter()
    one_shot.link(pipeline, sections, "bench")
    return len(sections) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--top-k", type=int, default=20)
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args()
    hub = load_hub(Path(DEFAULT_HUB))
    hits = synthetic(list(hub.ids), args.items, args.top_k, seed=1)
    claims = [Claim(tuple(h.cre_id for h in r), tuple(h.score for h in r)) for r in hits]
    slot = SourceLevelSlot(None, hub, DecisionPolicy(global_cut=1.0))
    forced = SourcePriors(0.05, 0.05, 1.0, 1.0, args.items)
    t_assign, m_assign = traced(lambda: assign(claims, forced, slot.is_leaf))
    unused = Calibrator(tuple(0.0 for _ in JOINT_FEATURES), 0.0, 0, JOINT_FEATURES)
    joint = SourceLevelSlot(
        SourceModel(PriorRule(0.0, 0.05, 0.0, 0.05), unused, 1.0),
        hub,
        DecisionPolicy(global_cut=1.0),
    )
    rows = [SlotRow("bench", f"k{i}", f"text {i}", h, None) for i, h in enumerate(hits)]
    t_slot, m_slot = traced(lambda: joint.run(rows))
    candidates_mib = args.items * args.top_k * 16 / 2**20  # an id ref and a float each
    rate = run_rate(args.sample)
    run_seconds = args.items / rate
    print(f"items {args.items:,}, top {args.top_k}, hub {len(hub.ids)} CREs")
    print(
        f"pipeline on real sections: {rate:.1f} sections/s -> a run of {args.items:,}: "
        f"{run_seconds:,.0f} s"
    )
    print(f"joint choice (lambda 0.05 forced): {t_assign:.1f} s, peak {m_assign:.0f} MiB")
    print(
        f"whole slot (priors, choice, collective evidence): {t_slot:.1f} s, peak {m_slot:.0f} MiB"
    )
    print(f"candidate lists alone: ~{candidates_mib:.0f} MiB as arrays")
    print(f"slot / run time: {t_slot / run_seconds:.3f}")


if __name__ == "__main__":
    main()
