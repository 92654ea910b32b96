"""A team that follows the review plan (`eval --review-order plan`, `make risk-check`).

Its reviewers decide one item at a time, the one the workbench asks for next
(`policy.review_next`: a draw from the plan's band, drawn once; the decisions it still
needs re-counted after every decision), each decision the expected link, K decisions in
all (fewer where every open item is left linking itself). Once a cut is certified, they
decide the items it leaves to people, most confident first. The plan reads the cold
confidences (what a run's cut reads, moved by no decision) and the decisions made; each
decision says whether the item's cold first suggestion was right, read from the golden
answer as the person would have decided it. No other label is read to choose.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from librarian.pipeline.api import SlotRow, item_index
from librarian.pipeline.pipeline import Pipeline
from librarian.policy import DecisionPolicy, review_next, review_plan
from librarian.schemas.evaluation import GoldenRow
from librarian.schemas.records import Section
from librarian.training.evaluate import model_rows, run_golden
from librarian.training.golden import sections_of


@dataclass(frozen=True)
class Followed:
    """What following the plan asked for: the items decided (indices, in the order
    decided) and after how many decisions a cut was first certified (None: not within
    them)."""

    decided: list[int]
    certified_after: int | None


def follow_plan(
    confidences: Sequence[float],
    right: Sequence[bool],
    k: int,
    policy: DecisionPolicy,
    seed: str,
    rows: Sequence[Sequence[float]] | None = None,
) -> Followed:
    """`k` decisions on a source whose items have these cold `confidences` and whose cold
    first suggestions are `right` or not, each the item the plan asks for next (one of
    its band drawn at random: the order the workbench lists them in is no choice).
    `rows`: each item's rows, at their own cold confidences (default: one, at the
    item's). A run's cut counts an open item once for each of its rows (each is a link it
    would make) and a decided item once, so the plan here reads them as the run will."""
    draw = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    each = list(rows) if rows is not None else [[c] for c in confidences]
    pending = list(range(len(confidences)))
    decided: list[int] = []
    certified_after: int | None = None
    for step in range(min(k, len(pending)) + 1):
        open_rows = [(i, c) for i in pending for c in each[i]]
        open_confidences = [c for _, c in open_rows]
        plan = review_plan(
            open_confidences,
            [confidences[i] for i in decided],
            [right[i] for i in decided],
            policy,
        )
        if plan.certified and certified_after is None:
            certified_after = step
        if step == k or not pending:
            break
        asked = review_next(open_confidences, plan, len(decided), seed)
        if not asked:
            asked = _outside_the_band(open_confidences, plan.certified)
        if not asked:  # every open item links itself: nothing is left for a person
            break
        item = open_rows[draw.choice(asked)][0]
        decided.append(pending.pop(pending.index(item)))
    return Followed(decided, certified_after)


def _outside_the_band(pending: Sequence[float], certified: int) -> list[int]:
    """With nothing more to certify, the next item a person decides: the most confident
    open item the certified cut leaves to people (the `certified` most confident link
    themselves at the next run; deciding one of them would spend a decision on a link the
    cut already makes, and take it from the links the guarantee counts)."""
    ranked = sorted(range(len(pending)), key=lambda j: -pending[j])
    return ranked[certified : certified + 1]


def items_of(sections: Sequence[Section]) -> list[list[int]]:
    """The items among a source's rows, as C.5 counts them (`item_index`: the rows of one
    span key or one normalised text are one requirement), each as its rows' indices: a
    decision is on an item, all its rows at once."""
    slots = [SlotRow(s.source_key, s.span_key, s.text, [], None) for s in sections]
    groups: dict[int, list[int]] = {}
    for row, item in enumerate(item_index(slots)):
        groups.setdefault(item, []).append(row)
    return [groups[item] for item in sorted(groups)]


def plan_reviewed(
    pipeline: Pipeline,
    rows: Sequence[GoldenRow],
    k: int,
    progress: Callable[[int], None] | None = None,
    salt: str = "",
) -> tuple[list[GoldenRow], list[GoldenRow], dict[str, int | None]]:
    """The rows of the `k` items of each source its reviewers decide following the plan,
    the rest, and after how many decisions each source's cut was first certified. Chosen
    on a cold run (the confidences a run's cut reads); `salt`: another draw of the same
    design."""
    cold = run_golden(pipeline, rows, progress=progress)
    sections = sections_of(rows)
    chosen: set[int] = set()
    until: dict[str, int | None] = {}
    for source, indices in model_rows(cold).items():
        items = items_of([sections[i] for i in indices])
        firsts = [indices[group[0]] for group in items]  # an item's first row speaks for it
        followed = follow_plan(
            [cold.outcomes[i].confidence for i in firsts],
            [cold.outcomes[i].top1_correct for i in firsts],
            k,
            pipeline.policy,
            source + salt,
            [[cold.outcomes[indices[j]].confidence for j in item] for item in items],
        )
        chosen.update(indices[j] for item in followed.decided for j in items[item])
        until[source] = followed.certified_after
    reviewed = [rows[i] for i in sorted(chosen)]
    return reviewed, [row for i, row in enumerate(rows) if i not in chosen], until
