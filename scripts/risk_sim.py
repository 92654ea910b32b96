"""Does the risk a run states hold? For every dev framework (one source each), K of its
linked rows are drawn at random to stand for its reviewers' decisions, the rest are linked
warm, and what the run said (its estimate and bound for the source) is set against what
came true (the realised share wrong of its auto-links). The same as
`librarian eval GOLDEN --reviewed K --review-order random --draws N`, over every
framework, K and guarantee; the table goes to docs/quality.md.

    python scripts/risk_sim.py --models models-dev [--draws 20] [--k 25 50 100] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from librarian.factory import build_pipeline
from librarian.paths import librarian_home
from librarian.schemas.evaluation import GoldenRow
from librarian.settings import LinkerSettings
from librarian.training.evaluate import draw_of, random_reviewed, run_golden, summarise_draws
from librarian.training.golden import load_golden, source_of

# A draw scores the rows not reviewed: fewer than this, and one wrong auto-link is a
# large share of a handful, whatever the stated risk of the band.
MIN_SCORED = 40


def _mean(values: list[float]) -> str:
    """The mean of what the runs said; "-" when no run linked anything and so said nothing."""
    return f"{sum(values) / len(values):.1%}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--golden", type=Path, default=Path("data/golden/dev.json"))
    parser.add_argument("--models", type=Path, default=Path("models-dev"))
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--k", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = load_golden(args.golden)
    by_source: dict[str, list[GoldenRow]] = {}
    for row in rows:
        if row.id.startswith("gold:"):
            by_source.setdefault(source_of(row), []).append(row)
    home = librarian_home(None)
    results = []
    header = f"{'source':40s} {'rows':>5s} {'K':>4s} {'risk':8s} {'auto':>6s} {'wrong':>6s}"
    print(header + f" {'>budget':>7s} {'>bound':>7s} {'stated':>7s} {'bound':>7s}")
    for risk in ("expected", "bound"):
        settings = LinkerSettings(models_dir=args.models, cache_dir=home.cache, risk=risk)
        pipeline = build_pipeline(settings)
        policy = pipeline.source_level.policy
        for source, source_rows in sorted(by_source.items()):
            linked = sum(r.expected.decision == "linked" for r in source_rows)
            for k in args.k:
                if linked < k + MIN_SCORED:
                    continue
                draws = []
                for d in range(args.draws):
                    reviewed, scored = random_reviewed(source_rows, k, args.seed + d)
                    draws.append(draw_of(args.seed + d, run_golden(pipeline, scored, reviewed)))
                summary = summarise_draws(draws, policy)
                said = [d.stated_bound for d in draws if d.stated_bound is not None]
                est = [d.stated_estimate for d in draws if d.stated_estimate is not None]
                print(
                    f"{source:40s} {len(source_rows):5d} {k:4d} {risk:8s} "
                    f"{summary.mean_auto_linked:6.1%} {summary.mean_wrong:6.1%} "
                    f"{summary.share_over_budget:7.0%} {summary.share_over_bound:7.0%} "
                    f"{_mean(est):>7s} {_mean(said):>7s}",
                    flush=True,
                )
                results.append(
                    {"source": source, "rows": len(source_rows), "k": k, "risk": risk}
                    | summary.model_dump()
                )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
