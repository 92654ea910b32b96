"""What following the plan certifies on a source like the held-out standard, by its size.

The held-out standard is one large, easy, one-to-one source (277 items, about 89% right
first); on dev only owasp_ai_exchange is like it (81%), and it has 64 items. This probe
reads owasp_ai_exchange's items cold, as models trained without it see them (each item's
confidence, whether its first suggestion is right, and its rows' confidences), draws
sources of N items from them (with replacement, seeded), and has a team follow the plan
for K decisions (`training/following.follow_plan`, re-planned after each). The cut the
run would choose then (`policy.choose_cut` on the open rows and the decisions, the cold
confidences a run's cut reads) gives the share of the open rows linked automatically and
the share wrong of what the guarantee bounds, set against the answers. Policy arithmetic
only: the run's warm adaptation does not move a cut (it reads cold confidences).

    python scripts/plan_by_size.py [--models models-lofo/owasp_ai_exchange]
        [--sizes 64 277 1000] [--k 50 100 150] [--draws 20] [--unit row|item]
        [--order plan|random] [--one-row 0|1] [--band plan|once|once-forecast|two-stages]
        [--test exact|anytime]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import plan_designs
from risk_check import framework_rows

import librarian.policy.decision as decision
from librarian.factory import build_pipeline
from librarian.paths import librarian_home
from librarian.policy import DecisionPolicy, choose_cut
from librarian.policy.guarantees import GUARANTEES
from librarian.settings import LinkerSettings
from librarian.training.evaluate import model_rows, run_golden
from librarian.training.following import follow_plan, items_of
from librarian.training.golden import sections_of


@dataclass(frozen=True)
class Item:
    confidence: float
    right: bool
    rows: tuple[tuple[float, bool], ...]  # each row's cold confidence, and right or not


def cold_items(models: Path, framework: str) -> tuple[list[Item], DecisionPolicy]:
    rows = framework_rows(1)[framework]
    settings = LinkerSettings(models_dir=models, cache_dir=librarian_home(None).cache)
    pipeline = build_pipeline(settings)
    cold = run_golden(pipeline, rows)
    sections = sections_of(rows)
    out = []
    for _, indices in model_rows(cold).items():
        for group in items_of([sections[i] for i in indices]):
            first = cold.outcomes[indices[group[0]]]
            each = tuple(
                (cold.outcomes[indices[j]].confidence, cold.outcomes[indices[j]].top1_correct)
                for j in group
            )
            out.append(Item(first.confidence, first.top1_correct, each))
    return out, pipeline.policy


def as_units(items: list[Item]) -> list[Item]:
    """Each item one unit end to end (`--unit item`): as sure as its least sure row, right
    only where every row of it is, and all its rows linked together or none."""
    return [Item(min(c for c, _ in i.rows), all(ok for _, ok in i.rows), i.rows) for i in items]


def one_unit_draw(
    items: list[Item], k: int, policy: DecisionPolicy, seed: str, order: str = "plan"
) -> tuple[float, float]:
    """`one_draw` with each item one unit: the cut counts items, an open item at or above
    the cut links all its rows, and the realised share counts rows. `order`: "plan" (the
    plan followed, re-planned after each decision) or "random" (K items drawn at random
    from the source before any decision: a sample no outcome steers)."""
    units = as_units(items)
    if order == "random":
        chosen = random.Random(seed).sample(range(len(units)), k)
    else:
        confidences, right = [u.confidence for u in units], [u.right for u in units]
        chosen = follow_plan(confidences, right, k, policy, seed).decided
    decided = set(chosen)
    open_items = [n for n in range(len(items)) if n not in decided]
    cut = choose_cut(
        [units[n].confidence for n in open_items],
        [units[n].confidence for n in chosen],
        [units[n].right for n in chosen],
        policy,
    )
    linked = [n for n in open_items if cut.auto_links and units[n].confidence >= cut.cut]
    auto = [ok for n in linked for _, ok in items[n].rows]
    people = sum(len(items[n].rows) for n in chosen)
    share = GUARANTEES[policy.risk].realised(len(auto), sum(not ok for ok in auto), people)
    open_rows = sum(len(items[n].rows) for n in open_items)
    return len(auto) / max(1, open_rows), share or 0.0


def one_draw(
    items: list[Item],
    k: int,
    policy: DecisionPolicy,
    seed: str,
    band: str = "plan",
) -> tuple[float, float]:
    """(share of the open rows auto-linked, realised share wrong under the guarantee).
    `band`: "plan" (the plan followed as shipped) or a band drawn once
    (`plan_designs.follow_once`: "once", or "once-forecast"), or two
    (`plan_designs.follow_two_stages`: "two-stages")."""
    confidences, right = [i.confidence for i in items], [i.right for i in items]
    if band == "plan":
        rows = [[c for c, _ in i.rows] for i in items]
        followed = follow_plan(confidences, right, k, policy, seed, rows)
    elif band == "two-stages":
        followed = plan_designs.follow_two_stages(confidences, right, k, policy, seed)
    else:
        forecast = band == "once-forecast"
        followed = plan_designs.follow_once(confidences, right, k, policy, seed, forecast)
    decided = set(followed.decided)
    open_rows = [row for n, i in enumerate(items) if n not in decided for row in i.rows]
    cut = choose_cut(
        [c for c, _ in open_rows],
        [items[n].confidence for n in followed.decided],
        [items[n].right for n in followed.decided],
        policy,
    )
    auto = [ok for c, ok in open_rows if cut.auto_links and c >= cut.cut]
    wrong = sum(not ok for ok in auto)
    people = sum(len(items[n].rows) for n in followed.decided)  # the links they made
    share = GUARANTEES[policy.risk].realised(len(auto), wrong, people) or 0.0
    return len(auto) / max(1, len(open_rows)), share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=Path("models-lofo/owasp_ai_exchange"))
    parser.add_argument("--framework", default="owasp_ai_exchange")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 277, 1000])
    parser.add_argument("--k", type=int, nargs="+", default=[50, 100, 150])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument(
        "--unit",
        choices=["row", "item"],
        default="row",
        help="row: as shipped (a run's cut counts open rows); item: each item one unit end "
        "to end (`one_unit_draw`), measured, not shipped",
    )
    parser.add_argument(
        "--order",
        choices=["plan", "random"],
        default="plan",
        help="with --unit item: the plan followed, or K items drawn at random before any",
    )
    parser.add_argument(
        "--one-row",
        type=int,
        choices=[0, 1],
        help="each item read at one of its rows only (0: its title, 1: its prose): a source "
        "of one row an item, as a queue's sections are (the held-out standard: 1.05)",
    )
    parser.add_argument(
        "--band",
        choices=["plan", "once", "once-forecast", "two-stages"],
        default="plan",
        help="with --unit row: the plan as shipped (its band drawn once since 2026-12-08), or a "
        "band drawn once before any decision (`plan_designs.follow_once`), measured, not shipped",
    )
    parser.add_argument(
        "--test",
        choices=["exact", "anytime"],
        default="exact",
        help="the cut's test: the fixed-sample exact test (as shipped) or a confidence "
        "sequence valid under optional stopping (`plan_designs.anytime_certifies`, put in "
        "the policy's place for this run), measured, not shipped",
    )
    args = parser.parse_args()
    if args.test == "anytime":
        decision.certifies = plan_designs.anytime_certifies  # type: ignore[attr-defined]
    if args.unit == "item":
        draw = partial(one_unit_draw, order=args.order)
    else:
        draw = partial(one_draw, band=args.band)
    items, policy = cold_items(args.models, args.framework)
    if args.one_row is not None:
        rows = [i.rows[args.one_row] for i in items]
        items = [Item(confidence, right, ((confidence, right),)) for confidence, right in rows]
    right = sum(i.right for i in items)
    print(f"{args.framework}: {len(items)} items, {right} right first; '{policy.guarantee()}'")
    print(
        "| items | K | linked (mean share of open rows) | draws that linked | mean wrong | worst "
        "| draws over the bound |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        for k in args.k:
            if k >= size:
                continue
            found = []
            for d in range(args.draws):
                rng = random.Random(f"{size}-{d}")
                source = [rng.choice(items) for _ in range(size)]
                found.append(draw(source, k, policy, f"{size}-{k}-{d}"))
            linked = [s for s, _ in found if s > 0]
            wrongs = [w for s, w in found if s > 0]
            mean_wrong = f"{sum(wrongs) / len(wrongs):.1%}" if wrongs else "-"
            worst = f"{max(wrongs):.1%}" if wrongs else "-"
            mean = sum(s for s, _ in found) / len(found)
            drew = f"{len(linked)} of {len(found)}"
            over = sum(w > policy.budget + 1e-9 for w in wrongs)  # a 90% promise allows 10%
            row = f"| {size} | {k} | {mean:.1%} | {drew} | {mean_wrong} | {worst} | {over} |"
            print(row)


if __name__ == "__main__":
    main()
