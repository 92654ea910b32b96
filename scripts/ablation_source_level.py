"""What each part of linking a source as a whole buys on a golden set: the same trained
models, the source-level rule swapped in memory (nothing is refitted).

    python scripts/ablation_source_level.py [--models models-dev] [--golden data/golden/dev.json]

Rows: each section alone (`--source-level off`); rows of one section merged into one item
with no penalty; the reuse penalty only; the inner-node penalty only; the trained rule.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections import Counter
from pathlib import Path

from librarian.factory import build_pipeline
from librarian.pipeline.emit import ScoreStage
from librarian.pipeline.stages import CalibratedScaler
from librarian.retrieval.collective import PriorRule
from librarian.settings import LinkerSettings
from librarian.training.evaluate import run_golden, style_and_framework
from librarian.training.golden import load_golden


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=Path, default=Path("models-dev"))
    parser.add_argument("--golden", type=Path, default=Path("data") / "golden" / "dev.json")
    args = parser.parse_args()
    rows = load_golden(args.golden)
    alone = build_pipeline(LinkerSettings(models_dir=args.models, source_level="off"))
    pipeline = build_pipeline(LinkerSettings(models_dir=args.models))
    model = pipeline.source_level.model
    scaler = pipeline.stage(ScoreStage).scaler
    assert model is not None and isinstance(scaler, CalibratedScaler)
    variants = {
        "merged items only": PriorRule(1.0, 0.0, 1.0, 0.0),
        "reuse penalty only": dataclasses.replace(model.rule, inner_penalty=0.0),
        "inner penalty only": dataclasses.replace(model.rule, reuse_penalty=0.0),
        "the trained rule": model.rule,
    }
    results: dict[str, Counter[str]] = {}
    outcomes = run_golden(alone, rows).outcomes
    results["each section alone"] = Counter(
        style_and_framework(o) for o in outcomes if o.scored_for_ranking and o.top1_correct
    )
    for name, rule in variants.items():
        swapped = dataclasses.replace(model, rule=rule)
        pipeline.source_level.model = swapped
        scaler.joint = swapped
        outcomes = run_golden(pipeline, rows).outcomes
        results[name] = Counter(
            style_and_framework(o) for o in outcomes if o.scored_for_ranking and o.top1_correct
        )
    total = sum(o.scored_for_ranking for o in outcomes)
    groups = sorted({g for c in results.values() for g in c})
    print(f"trained rule: {model.rule.as_json()}; top-1 right of {total} linkable rows")
    print(f"{'variant':22s} {'all':>5s} " + " ".join(f"{g[:14]:>14s}" for g in groups))
    for name, counts in results.items():
        cells = " ".join(f"{counts[g]:14d}" for g in groups)
        print(f"{name:22s} {sum(counts.values()):5d} {cells}")


if __name__ == "__main__":
    main()
