"""Fitting the source-level model (source.json): the rule from a source's shape to its
priors, and the calibrator over collective evidence, each framework a source.

Every framework's sections are linked as a whole through the run's own slot
(`SourceLevelSlot`), with the evidence of the other frameworks only (as scored by
`scoring.score_sections`). The rule is chosen on a small grid to maximise the rows
whose first candidate is right, a row lost counting twice a row gained (priors must
never harm a source); its leave-one-framework-out effect is reported on the card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product

from sklearn.metrics import log_loss

from librarian.artifacts.calibrator import CalibrationError, Calibrator
from librarian.artifacts.source_model import (
    CHOSEN_MARGINS,
    JOINT_FEATURES,
    SHRINKAGES,
    SourceModel,
    first_order,
    joint_features,
)
from librarian.catalogue.hub import Hub
from librarian.pipeline.api import SlotRow, SourceLevelSlot, item_index, merged_claim
from librarian.policy import DecisionPolicy, fit_adaptation
from librarian.retrieval.collective import (
    MIN_SHAPE_ITEMS,
    Claim,
    PriorRule,
    SourcePriors,
    assign,
    source_shape,
)
from librarian.training.calibrate import fit_calibrator
from librarian.training.scoring import ScoredSection

REUSE_PENALTIES = (0.01, 0.02, 0.05, 0.1)
INNER_PENALTIES = (0.02, 0.05)
SHARE_CUTS = (*(round(0.5 + 0.05 * i, 2) for i in range(10)), 1.01)  # 1.01: never
LOSS_WEIGHT = 2.0


@dataclass(frozen=True)
class FrameworkItems:
    """One framework as a source: its rows (indices into the scored list), its items'
    claims, each item's rows, and its shape."""

    framework: str
    rows: list[int]
    claims: list[Claim]
    item_rows: list[list[int]]
    distinct: float
    leaf: float


def slot_rows(scored: Sequence[ScoredSection], rows: Sequence[int]) -> list[SlotRow]:
    return [
        SlotRow(
            scored[i].section.framework_id,
            scored[i].section.section_id,
            scored[i].section.text,
            list(scored[i].hits),
            list(scored[i].evidence),
        )
        for i in rows
    ]


def framework_items(
    scored: Sequence[ScoredSection], is_leaf: Mapping[str, bool]
) -> list[FrameworkItems]:
    out: list[FrameworkItems] = []
    for framework in sorted({s.section.framework_id for s in scored}):
        rows = [i for i, s in enumerate(scored) if s.section.framework_id == framework]
        as_slot = slot_rows(scored, rows)
        items = item_index(as_slot)
        groups: dict[int, list[int]] = {}
        for r, item in enumerate(items):
            groups.setdefault(item, []).append(r)
        claims = [merged_claim([as_slot[r] for r in groups[g]]) for g in sorted(groups)]
        distinct, leaf = source_shape(claims, is_leaf)
        item_rows = [[rows[r] for r in groups[g]] for g in sorted(groups)]
        out.append(FrameworkItems(framework, rows, claims, item_rows, distinct, leaf))
    return out


def correct_under(
    fw: FrameworkItems, scored: Sequence[ScoredSection], is_leaf: Mapping[str, bool]
) -> dict[tuple[float, float], int]:
    """Rows whose chosen CRE is right, for every (reuse, inner) penalty on the grid."""
    out: dict[tuple[float, float], int] = {}
    for lam, inner in product((0.0, *REUSE_PENALTIES), (0.0, *INNER_PENALTIES)):
        priors = SourcePriors(lam, inner, fw.distinct, fw.leaf, len(fw.claims))
        chosen = assign(fw.claims, priors, is_leaf)
        out[(lam, inner)] = sum(
            claim.ids[j] in scored[i].section.cre_ids
            for claim, j, rows in zip(fw.claims, chosen, fw.item_rows, strict=True)
            if j >= 0
            for i in rows
        )
    return out


def _penalties(rule: PriorRule, fw: FrameworkItems) -> tuple[float, float]:
    if len(fw.claims) < MIN_SHAPE_ITEMS:
        return 0.0, 0.0
    lam = rule.reuse_penalty if fw.distinct >= rule.min_distinct else 0.0
    inner = rule.inner_penalty if fw.leaf >= rule.min_leaf else 0.0
    return lam, inner


def fit_rule(
    frameworks: Sequence[FrameworkItems], table: Mapping[str, Mapping[tuple[float, float], int]]
) -> PriorRule:
    """The grid's best rule over `frameworks`: rows gained, a row lost counting twice;
    on a tie the earlier (smaller, more conservative) rule."""
    best, best_value = PriorRule(1.01, 0.0, 1.01, 0.0), 0.0
    for cut_d, lam, cut_l, inner in product(
        SHARE_CUTS, REUSE_PENALTIES, SHARE_CUTS, INNER_PENALTIES
    ):
        rule = PriorRule(cut_d, lam, cut_l, inner)
        value = 0.0
        for fw in frameworks:
            gain = table[fw.framework][_penalties(rule, fw)] - table[fw.framework][(0.0, 0.0)]
            value += gain if gain >= 0 else LOSS_WEIGHT * gain
        if value > best_value + 1e-9:
            best, best_value = rule, value
    return _capped(best)


def _capped(rule: PriorRule) -> PriorRule:
    """A cut of 1.01 means never: stored as no penalty, with the cut at 1.0."""
    lam = rule.reuse_penalty if rule.min_distinct <= 1.0 else 0.0
    inner = rule.inner_penalty if rule.min_leaf <= 1.0 else 0.0
    return PriorRule(min(rule.min_distinct, 1.0), lam, min(rule.min_leaf, 1.0), inner)


@dataclass(frozen=True)
class JointRow:
    """One row linked with the rest of its framework: the joint features of each of its
    candidates (in the slot's order, its item's chosen CRE first) and whether each is
    right. The calibrator is fitted on every candidate, so that its confidence can order
    them."""

    scored: ScoredSection
    candidates: tuple[tuple[tuple[float, ...], bool], ...]
    ids: tuple[str, ...]
    chosen: str | None  # the CRE the assignment chose for its item

    def decided(self, calibrator: Calibrator, margin: float) -> tuple[float, bool]:
        """The confidence of the candidate the run would show first and link (the
        assignment's choice unless another beats it by `margin`), and whether it is right."""
        first = self.first(calibrator, margin)
        return calibrator.probability(self.candidates[first][0]), self.candidates[first][1]

    def first(self, calibrator: Calibrator, margin: float) -> int:
        """Which candidate the run would show first (`decided`'s)."""
        probabilities = [calibrator.probability(f) for f, _ in self.candidates]
        return first_order(self.ids, probabilities, self.chosen, margin)[0]


def joint_rows(
    fw: FrameworkItems, scored: Sequence[ScoredSection], rule: PriorRule, hub: Hub
) -> list[JointRow]:
    """The framework's rows through the run's own slot, under `rule`."""
    # The slot calibrates only with a source's decisions, and training has none: the
    # calibrator it is handed here gives every candidate one confidence, so each row keeps
    # its item's chosen CRE first.
    unused = Calibrator(tuple(0.0 for _ in JOINT_FEATURES), 0.0, 0, JOINT_FEATURES)
    slot = SourceLevelSlot(SourceModel(rule, unused, 1.0), hub, DecisionPolicy(global_cut=1.0))
    linked = slot.run(slot_rows(scored, fw.rows))
    out: list[JointRow] = []
    for i, row in zip(fw.rows, linked, strict=True):
        if row.collective is None or not row.hits:
            continue
        ids = [h.cre_id for h in row.hits]
        features = joint_features(ids, [h.score for h in row.hits], row.evidence, row.collective)
        right = scored[i].section.cre_ids
        candidates = tuple((f, c in right) for f, c in zip(features, ids, strict=True))
        out.append(JointRow(scored[i], candidates, tuple(ids), row.collective.chosen_id))
    return out


def fit_joint(rows: Sequence[JointRow]) -> Calibrator:
    """The joint calibrator over every candidate of `rows`."""
    fitted = fit_calibrator(
        [f for r in rows for f, _ in r.candidates], [ok for r in rows for _, ok in r.candidates]
    )
    return Calibrator(fitted.weights, fitted.intercept, fitted.fitted_on, JOINT_FEATURES)


# A team reviews a new source's first batch: the shrinkage is chosen for adapting on
# each framework's first this-many rows and scoring the rest.
FIRST_REVIEWED = 50


def fit_shrinkage(
    rows: Sequence[JointRow], oof: Sequence[float], correct: Sequence[bool]
) -> tuple[float, dict[str, float]]:
    """The shrinkage whose adaptation, fitted on each framework's first FIRST_REVIEWED
    rows (out-of-fold confidences), gives the lowest log-loss on the rest of it (mean over
    frameworks); and each candidate's loss."""
    by_framework: dict[str, list[tuple[float, bool]]] = {}
    for row, p, ok in zip(rows, oof, correct, strict=True):
        by_framework.setdefault(row.scored.section.framework_id, []).append((p, ok))
    usable = [v for v in by_framework.values() if len(v) >= FIRST_REVIEWED + 10]
    if not usable:
        return SHRINKAGES[-1], {}
    losses: dict[str, float] = {}
    for shrinkage in SHRINKAGES:
        per_framework = []
        for rows_of in usable:
            first, rest = rows_of[:FIRST_REVIEWED], rows_of[FIRST_REVIEWED:]
            adapted = fit_adaptation([p for p, _ in first], [ok for _, ok in first], shrinkage)
            predicted = [adapted.apply(p) for p, _ in rest]
            per_framework.append(
                float(log_loss([ok for _, ok in rest], predicted, labels=[False, True]))
            )
        losses[f"{shrinkage:g}"] = round(sum(per_framework) / len(per_framework), 5)
    best = min(SHRINKAGES, key=lambda t: (losses[f"{t:g}"], -t))
    return best, losses


@dataclass(frozen=True)
class SourceFit:
    rule: PriorRule
    rows: list[JointRow]  # each framework's rows under the rule fitted without it
    oof: list[float]  # the confidence each would be linked at, from folds without it
    correct: list[bool]  # whether what it would be linked to is right
    calibrator: Calibrator
    lofo: dict[str, tuple[int, int, int]]  # framework: (rows, alone, with the LOFO rule)
    chosen_margin: float
    by_margin: dict[str, dict[str, int]]  # framework: {margin: rows right first}
    folds: dict[str, Calibrator]  # the joint calibrator fitted without each framework


def fit_sources(
    scored: Sequence[ScoredSection],
    hub: Hub,
    progress: Callable[[str, int, int], None] | None = None,
) -> SourceFit:
    is_leaf = hub.is_leaf
    frameworks = framework_items(scored, is_leaf)
    table = {fw.framework: correct_under(fw, scored, is_leaf) for fw in frameworks}
    rule = fit_rule(frameworks, table)
    lofo: dict[str, tuple[int, int, int]] = {}
    held_rows: dict[str, list[JointRow]] = {}  # each framework under the rule fitted without it
    for done, fw in enumerate(frameworks, start=1):
        held_rule = fit_rule([f for f in frameworks if f.framework != fw.framework], table)
        chosen = table[fw.framework][_penalties(held_rule, fw)]
        lofo[fw.framework] = (len(fw.rows), table[fw.framework][(0.0, 0.0)], chosen)
        held_rows[fw.framework] = joint_rows(fw, scored, held_rule, hub)
        if progress:
            progress("source-level folds", done, len(frameworks))
    if sum(bool(rs) for rs in held_rows.values()) < 2:
        raise CalibrationError(
            f"linking a source as a whole is calibrated on framework-held-out folds and "
            f"needs two frameworks of at least {MIN_SHAPE_ITEMS} items"
        )
    folds = {
        fw.framework: fit_joint([r for f, rs in held_rows.items() if f != fw.framework for r in rs])
        for fw in frameworks
    }
    margin, by_margin = fit_margin(held_rows, folds)
    rows: list[JointRow] = []
    oof: list[float] = []
    correct: list[bool] = []
    for fw in frameworks:
        for row in held_rows[fw.framework]:
            confidence, right = row.decided(folds[fw.framework], margin)
            rows.append(row)
            oof.append(confidence)
            correct.append(right)
    calibrator = fit_joint([r for fw in frameworks for r in joint_rows(fw, scored, rule, hub)])
    return SourceFit(rule, rows, oof, correct, calibrator, lofo, margin, by_margin, folds)


def fit_margin(
    held_rows: Mapping[str, Sequence[JointRow]], folds: Mapping[str, Calibrator]
) -> tuple[float, dict[str, dict[str, int]]]:
    """The chosen margin (`CHOSEN_MARGINS`) whose first suggestions are right most often,
    each framework's rows scored by the calibrator fitted without it. A framework that
    loses a row against either extreme (0: confidence alone; 1: the assignment always)
    counts it LOSS_WEIGHT times: the combination must lose against neither. Also returns
    each framework's right rows at each margin, for the card."""
    table: dict[str, dict[str, int]] = {}
    for framework, rows in held_rows.items():
        if rows:
            table[framework] = {
                f"{m:g}": sum(r.decided(folds[framework], m)[1] for r in rows)
                for m in CHOSEN_MARGINS
            }

    def value(margin: float) -> float:
        total = 0.0
        for right in table.values():
            at = right[f"{margin:g}"]
            for extreme in (right[f"{CHOSEN_MARGINS[0]:g}"], right[f"{CHOSEN_MARGINS[-1]:g}"]):
                gain = at - extreme
                total += gain if gain >= 0 else LOSS_WEIGHT * gain
        return total

    best = max(CHOSEN_MARGINS, key=lambda m: (value(m), -m))
    return best, table
