"""C.5, the source-level slot: the rows of one source are linked as a whole.

Rows that are the same section (the same span, or the same normalised text) are one item.
Each source's items choose their CREs jointly (`retrieval.collective`), under the priors
its shape gives (`PriorRule`). What the source's reviewers decided adapts its calibration
(`artifacts.source_model.fit_adaptation`) and sets its own threshold; a source with fewer
than MIN_SOURCE_DECISIONS decisions keeps the global rule.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from librarian.artifacts.source_model import SourceModel, first_order, joint_probabilities
from librarian.artifacts.verifier import Verifier, rescaled
from librarian.catalogue.hub import Hub
from librarian.pipeline import components as ids
from librarian.pipeline.components import Component
from librarian.policy import (
    Adaptation,
    Certified,
    CutEvidence,
    DecisionPolicy,
    Evidence,
    ReviewPlan,
    alone,
    fit_adaptation,
)
from librarian.policy import normalised as normalised  # `pipeline.compact` reads it here
from librarian.retrieval.collective import (
    MIN_SHAPE_ITEMS,
    Claim,
    Collective,
    SourcePriors,
    assign,
    collective_evidence,
)
from librarian.retrieval.flat import ScoredHub
from librarian.schemas.records import History, SourceHistory
from librarian.settings import MIN_SOURCE_DECISIONS


@dataclass(frozen=True)
class SlotRow:
    """One row as the slot sees it: its source, its item key and text, its candidates."""

    source: str
    key: str
    text: str
    hits: list[ScoredHub]
    evidence: list[float] | None
    # The share of each hit's CRE name the text says (`SourceLevelSlot.overlaps`; None:
    # no verifier reads them).
    overlaps: list[float] | None = None


@dataclass(frozen=True)
class SourceStatus:
    """Where one source stands: what the summary, the audit and the workbench show."""

    source: str
    items: int
    priors: SourcePriors | None  # None: too few items to link as a whole
    decisions: int
    threshold: float
    adapted: bool
    certified: Certified | None = None  # how the cut was chosen (None: set by hand)
    policy: DecisionPolicy = field(default_factory=DecisionPolicy)
    plan: ReviewPlan | None = None  # what its reviewers should decide next (None: no plan)
    adaptation: Adaptation | None = None  # its calibration adapted to its decisions
    # What the cut was chosen from (None: not chosen here): stored with it, not summarised.
    evidence: CutEvidence | None = field(default=None, compare=False)

    @property
    def decisions_needed(self) -> int:
        """How many more decisions before its own calibration and threshold apply."""
        return max(0, MIN_SOURCE_DECISIONS - self.decisions)

    def as_json(self) -> dict[str, Any]:
        priors = self.priors
        return {
            "items": self.items,
            "linked_as_whole": priors is not None,
            "reuse_penalty": priors.reuse_penalty if priors else None,
            "inner_penalty": priors.inner_penalty if priors else None,
            "distinct_share": round(priors.distinct_share, 4) if priors else None,
            "leaf_share": round(priors.leaf_share, 4) if priors else None,
            "priors_from": priors.read_from if priors else None,
            "decisions": self.decisions,
            "threshold": round(self.threshold, 4),
            "own_threshold": self.adapted,
            "decisions_needed": self.decisions_needed,
            "cut": self.certified.as_json() if self.certified else None,
            "plan": self.plan.says(self.policy) if self.plan else None,
            "says": self.says_with_plan(),
        }

    def describe(self) -> str:
        if self.priors is None:
            joint = f"alone ({self.items} items < {MIN_SHAPE_ITEMS})"
        else:
            joint = self.priors.describe()
        # No "; ": the audit's parts are separated by it.
        return f"{self.source}: {joint}, {self.says()}".replace(";", ",")

    def says(self) -> str:
        """The cut that decides this source's rows, in words: where it comes from and
        what it risks."""
        if self.certified is None:
            return f"threshold {self.threshold:.3f} set by hand"
        if self.priors is None and self.certified.basis == "none":
            return (
                f"links nothing automatically: a section linked alone (too few items for "
                "its own reviewed items to certify a cut), and the trained models' cut "
                f"does not keep '{self.policy.guarantee()}' by itself"
            )
        if self.certified.basis == "global":
            return (
                f"cut {self.threshold:.3f}, the trained models' cut for a section linked "
                f"alone (too few items for its own reviewed items to certify one under "
                f"'{self.policy.guarantee()}')"
            )
        if self.certified.basis == "none" and not self.decisions:
            return (
                f"links nothing automatically yet: under '{self.policy.guarantee()}' a cut "
                "rests on this source's own reviewed items, and it has none; its reviewers' "
                "decisions (the review plan) can certify one"
            )
        if self.certified.basis == "none":
            return (
                f"links nothing automatically: its {self.decisions} reviewed items certify no "
                f"cut under '{self.policy.guarantee()}' (more decisions in its most "
                "confident band would)"
            )
        return self.certified.describe(self.policy, self.decisions)

    def says_with_plan(self) -> str:
        """`says`, then the review plan's line (where the source has one)."""
        plan = f"; plan: {self.plan.says(self.policy)}" if self.plan else ""
        return self.says() + plan


@dataclass(frozen=True)
class Linked:
    """A row after C.5: its candidates re-ordered (the chosen first), its evidence."""

    hits: list[ScoredHub]
    evidence: list[float] | None
    collective: Collective | None
    adaptation: Adaptation | None
    status: SourceStatus
    confidence: float | None = None  # the first hit's, as the policy decides (None: alone)
    # Each hit's confidence by CRE, as C.5 computed it to order them (C.7 scores with it).
    confidences: Mapping[str, float] | None = None
    # Whether its source's cut certifies it (None: a row decided by the threshold alone).
    certified: bool | None = None


def item_index(rows: Sequence[SlotRow]) -> list[int]:
    """Each row's item: rows with the same key or the same normalised text are one."""
    by_key: dict[str, int] = {}
    by_text: dict[str, int] = {}
    out: list[int] = []
    items = 0
    for row in rows:
        text = normalised(row.text)
        item = by_key.get(row.key, by_text.get(text))
        if item is None:
            item, items = items, items + 1
        by_key.setdefault(row.key, item)
        by_text.setdefault(text, item)
        out.append(item)
    return out


def merged_claim(rows: Sequence[SlotRow]) -> Claim:
    """An item's candidates: each CRE at the mean score its rows give it (a row that did
    not retrieve it gives its own lowest score)."""
    if len(rows) == 1:
        hits = rows[0].hits
        return Claim(tuple(h.cre_id for h in hits), tuple(h.score for h in hits))
    total: dict[str, float] = {}
    for row in rows:
        floor = min((h.score for h in row.hits), default=0.0)
        given = {h.cre_id: h.score for h in row.hits}
        for cre in {h.cre_id for r in rows for h in r.hits}:
            total[cre] = total.get(cre, 0.0) + given.get(cre, floor)
    best = {cre: value / len(rows) for cre, value in total.items()}
    ranked = sorted(best.items(), key=lambda x: (-x[1], x[0]))
    return Claim(tuple(c for c, _ in ranked), tuple(s for _, s in ranked))


@dataclass
class _Source:
    rows: list[int] = field(default_factory=list)  # pending rows (indices into the call)
    reviewed: list[int] = field(default_factory=list)  # reviewed rows


class SourceLevelSlot:
    """`model` None: the slot is empty (no trained source model, or scores it does not
    calibrate): every row keeps its retrieval order and the policy's global cut."""

    def __init__(
        self,
        model: SourceModel | None,
        hub: Hub,
        policy: DecisionPolicy,
        verifier: Verifier | None = None,
    ) -> None:
        """`policy`: the risk each source's cut is chosen under, or the cut set by hand
        that holds everywhere (`DecisionPolicy.fixed_cut`); its global cut, for a source
        too small to be linked as a whole; its margin, for the order shown. `verifier`:
        what gives a first suggestion its confidence (None: the joint calibrator)."""
        self.model, self.policy, self.verifier = model, policy, verifier
        self.cuts: Mapping[str, Certified] = {}  # sources whose cut is given, not chosen
        self.is_leaf = hub.is_leaf

    def overlaps(self, text: str, hits: Sequence[ScoredHub]) -> list[float] | None:
        """What the verifier reads of a row's text: the share of each hit's CRE name it
        says (None: no verifier). Read where the text is, before the row waits for C.5."""
        if self.verifier is None:
            return None
        return self.verifier.overlaps(text, [h.cre_id for h in hits])

    def with_policy(self, policy: DecisionPolicy) -> SourceLevelSlot:
        """The same slot deciding its sources' cuts under `policy`."""
        slot = copy.copy(self)
        slot.policy = policy
        return slot

    def with_cuts(self, cuts: Mapping[str, Certified]) -> SourceLevelSlot:
        """The same slot, the sources of `cuts` decided at the cut a run chose for them
        (the store's), not at one chosen again from the rows given here: a text the
        suggest API links as a source's is decided at the cut `run` and `relink` said."""
        slot = copy.copy(self)
        slot.cuts = {**self.cuts, **cuts}
        return slot

    @property
    def component(self) -> Component:
        if self.model is None:
            return Component("source-level", ids.SOURCE_LEVEL_NONE, note="none configured")
        rule = self.model.rule
        return Component(
            "source-level",
            ids.SOURCE_LEVEL_JOINT,
            settings={
                "min_distinct": rule.min_distinct,
                "reuse_penalty": rule.reuse_penalty,
                "min_leaf": rule.min_leaf,
                "inner_penalty": rule.inner_penalty,
                "joint_threshold": self.model.threshold,
            },
            note="each source linked as a whole; its reviewers' decisions set its threshold",
        )

    def run(
        self,
        rows: Sequence[SlotRow],
        reviewed: Sequence[tuple[SlotRow, tuple[str, ...]]] = (),
        history: History | None = None,
    ) -> list[Linked]:
        """Every pending row, linked with the rest of its source. `reviewed`: the
        source's decided items as retrieved now, with the CREs people chose."""
        out: list[Linked | None] = [None] * len(rows)
        sources: dict[str, _Source] = {}
        for i, row in enumerate(rows):
            sources.setdefault(row.source, _Source()).rows.append(i)
        for j, (row, _) in enumerate(reviewed):
            if row.source in sources:
                sources[row.source].reviewed.append(j)
        for name, source in sources.items():
            known = history.get(name) if history is not None else None
            pending = [rows[i] for i in source.rows]
            decided = [reviewed[j] for j in source.reviewed]
            linked = self._source(name, pending, decided, known or SourceHistory())
            for i, result in zip(source.rows, linked, strict=True):
                out[i] = result
        return [r for r in out if r is not None]

    def _source(
        self,
        name: str,
        pending: list[SlotRow],
        decided: list[tuple[SlotRow, tuple[str, ...]]],
        known: SourceHistory,
    ) -> list[Linked]:
        all_rows = pending + [r for r, _ in decided]
        items = item_index(all_rows)
        groups: dict[int, list[int]] = {}
        for r, item in enumerate(items):
            groups.setdefault(item, []).append(r)
        if self.model is None or len(groups) < MIN_SHAPE_ITEMS:
            status = self._status(name, len(groups), None, len(known.reviewed), None)
            return [Linked(r.hits, r.evidence, None, None, status) for r in pending]
        claims = {g: merged_claim([all_rows[r] for r in rows]) for g, rows in groups.items()}
        priors = self._priors(list(claims.values()), decided)
        decided_items = [items[len(pending) + r] for r in range(len(decided))]
        waiting = {items[i] for i in range(len(pending))}
        fit = self._adapt(decided, decided_items, claims, priors, known, waiting)
        # Pending items choose with the decided ones' CREs taken (their own excepted).
        evidence = self._evidence(claims, waiting, decided, decided_items, priors, known.linked)
        adaptation = fit.adaptation if fit is not None else None
        ordered = [
            self.ordered(row, evidence[items[i]], adaptation) for i, row in enumerate(pending)
        ]
        cold = self._cold(claims, (pending, decided), items)
        status = self._status(name, len(groups), priors, len(cold.decided), fit, cold)
        return [
            self._linked(warm, cold.pending[i], evidence[items[i]], cold.evidence[items[i]], status)
            for i, warm in enumerate(ordered)
        ]

    def _linked(
        self,
        warm: Ordered,
        cold: Ordered,
        warm_evidence: Collective,
        cold_evidence: Collective,
        status: SourceStatus,
    ) -> Linked:
        """A pending row as C.7 and C.9 see it. Its cold suggestion and confidence (read
        from no decision: `_cold`) are what its source's cut certifies; at or above the cut
        the row is linked with them. Below it, it goes to review in the order its source's
        decisions teach (warm: their CREs taken, its calibration adapted), never linked."""
        if cold[0] and cold[2] >= status.threshold:
            hits, ev, confidence, chances = cold
            return Linked(hits, ev, cold_evidence, None, status, confidence, chances, True)
        hits, ev, confidence, chances = warm
        adaptation = status.adaptation
        return Linked(hits, ev, warm_evidence, adaptation, status, confidence, chances, False)

    def _cold(
        self,
        claims: Mapping[int, Claim],
        rows: tuple[list[SlotRow], list[Decided]],
        items: list[int],
    ) -> _Cold:
        """Every item of the source, pending and decided, linked as if nothing were
        decided: its priors from its shape, no CRE taken, no adaptation. A decision moves
        none of these confidences or first suggestions, so the decided items are a fair
        sample of the items above any cut (random, or the calibration sample, which is
        drawn on the same confidences), and the exact test of `choose_cut` is valid. A
        decided item counts once (its first row: its latest standing decision), however
        many of its versions or duplicate texts were decided: a requirement approved
        twenty times is one reviewed item."""
        assert self.model is not None
        pending, decided = rows
        priors = self.model.rule.priors(list(claims.values()), self.is_leaf)
        everyone = set(claims)
        evidence = self._evidence(claims, everyone, [], [], priors, ())
        mine = [self.ordered(row, evidence[items[i]], None) for i, row in enumerate(pending)]
        correct, entries, texts = [], [], []
        counted: set[int] = set()
        for r, (row, cres) in enumerate(decided):
            item = items[len(pending) + r]
            if item in counted:
                continue  # another version or a duplicate of a decided item: counted once
            counted.add(item)
            hits, _, confidence, _ = self.ordered(row, evidence[item], None)
            correct.append((confidence, bool(hits) and hits[0].cre_id in cres))
            entries.append((row.key, confidence, hits[0].cre_id if hits else ""))
            texts.append(row.text)
        linkable = [(row, m) for row, m in zip(pending, mine, strict=True) if m[0]]
        seen = CutEvidence(
            tuple(
                (row.key, confidence, hits[0].cre_id) for row, (hits, _, confidence, _) in linkable
            ),
            tuple(entries),
            tuple(row.text for row, _ in linkable),
            tuple(texts),
        )
        return _Cold(mine, correct, evidence, seen)

    def _status(
        self,
        name: str,
        items: int,
        priors: SourcePriors | None,
        decisions: int,
        fit: _Fit | None,
        cold: _Cold | None = None,
    ) -> SourceStatus:
        """Where the source stands, with the cut the policy chose from its evidence (the
        cold confidences of its pending and decided items: `_cold`)."""
        adaptation = fit.adaptation if fit is not None else None
        fixed = self.policy.fixed_cut
        if fixed is not None:
            return SourceStatus(
                source=name, items=items, priors=priors, decisions=decisions,
                threshold=fixed, adapted=False, policy=self.policy, adaptation=adaptation,
            )  # fmt: skip
        cut, plan, seen = self.cuts.get(name), None, None
        if cut is None and priors is None:
            cut = alone(self.policy.global_cut, self.policy)
        elif cut is None:
            # The same numbers, read the same way, as a reader of the stored evidence
            # (`CutEvidence.now`): the cut and the plan it chooses are these.
            evidence = cold.evidence_now() if cold else Evidence([], [], [])
            cut, plan = evidence.cut(self.policy), evidence.plan(self.policy)
            seen = cold.evidence_seen if cold else None
        return SourceStatus(
            source=name, items=items, priors=priors, decisions=decisions, threshold=cut.cut,
            adapted=adaptation is not None, certified=cut, policy=self.policy, plan=plan,
            adaptation=adaptation, evidence=seen,
        )  # fmt: skip

    def _priors(
        self, claims: list[Claim], decided: list[tuple[SlotRow, tuple[str, ...]]]
    ) -> SourcePriors:
        """The source's priors from its shape: the CREs people chose once there are
        MIN_SOURCE_DECISIONS of them, else its items' top candidates."""
        assert self.model is not None
        chosen = [Claim((cres[0],), (1.0,)) for _, cres in decided if cres]
        if len(chosen) < MIN_SOURCE_DECISIONS:
            return self.model.rule.priors(claims, self.is_leaf)
        return replace(self.model.rule.priors(chosen, self.is_leaf), read_from="decisions")

    def ordered(
        self,
        row: SlotRow,
        collective: Collective,
        adaptation: Adaptation | None,
    ) -> Ordered:
        """The row's hits and evidence in the order shown (the item's chosen CRE first
        unless another's confidence beats it by the policy's margin: `first_order`), and
        the first one's confidence: the suggestion shown first is the one the policy
        would link, at the confidence compared with the cut (the verifier's where there is
        one: `artifacts.verifier`; then the source's adaptation)."""
        assert self.model is not None
        hits = list(row.hits)
        evidence = list(row.evidence) if row.evidence is not None else None
        if not hits:
            return hits, evidence, 0.0, {}
        cres, scores = [h.cre_id for h in hits], [h.score for h in hits]
        joint = joint_probabilities(self.model, cres, scores, evidence, collective)
        probabilities = [adaptation.apply(p) for p in joint] if adaptation else joint
        order = first_order(cres, probabilities, collective.chosen_id, self.policy.margin)
        if self.verifier is not None:
            if row.overlaps is None:
                raise ValueError(f"row {row.key} reached the verifier without its name overlaps")
            first = order[0]
            shown = self.verifier.confidence(row.overlaps, scores, evidence, joint[first], first)
            shown = adaptation.apply(shown) if adaptation else shown
            probabilities = rescaled(probabilities, first, shown)
        ranked_evidence = [evidence[j] for j in order] if evidence is not None else None
        chances = {h.cre_id: p for h, p in zip(hits, probabilities, strict=True)}
        return [hits[j] for j in order], ranked_evidence, probabilities[order[0]], chances

    def _evidence(
        self,
        claims: Mapping[int, Claim],
        waiting: set[int],
        decided: Sequence[tuple[SlotRow, tuple[str, ...]]],
        decided_items: Sequence[int],
        priors: SourcePriors,
        linked: Collection[str],
    ) -> dict[int, Collective]:
        """The collective evidence of the `waiting` items, chosen together with the CREs of
        the `decided` items taken (an item's own decided CREs excepted) and those the store
        links for the source (`linked`); a CRE people chose for two items or more is one
        this source shares, and is taken from none (a company's policy reuses CREs)."""
        own: dict[int, set[str]] = {}
        for g, (_, cres) in zip(decided_items, decided, strict=True):
            own.setdefault(g, set()).update(cres)
        uses = Counter(cre for cres in own.values() for cre in cres)
        taken = set(linked).union(*own.values()) - {cre for cre, n in uses.items() if n > 1}
        order = sorted(waiting)
        sub = [claims[g] for g in order]
        chosen = assign(
            sub, priors, self.is_leaf, taken, [frozenset(own.get(g, ())) for g in order]
        )
        return dict(zip(order, collective_evidence(sub, chosen, priors), strict=True))

    def _adapt(
        self,
        decided: list[tuple[SlotRow, tuple[str, ...]]],
        decided_items: list[int],
        claims: Mapping[int, Claim],
        priors: SourcePriors,
        known: SourceHistory,
        waiting: set[int],
    ) -> _Fit | None:
        """The source's decided items, each linked exactly as a pending item is: in a fold
        of them (CROSS_FOLDS), chosen with the pending items and with the other folds' CREs
        taken, so that the confidences that certify a cut are computed as the ones it is
        applied to. They are the evidence for its cut, and from MIN_SOURCE_DECISIONS on
        they teach its recalibration."""
        if not decided or self.model is None:
            return None
        probabilities, correct = [0.0] * len(decided), [False] * len(decided)
        for fold in range(min(CROSS_FOLDS, len(decided))):
            held = range(fold, len(decided), CROSS_FOLDS)
            freed = {c for r in held for c in decided[r][1]}
            rest = [r for r in range(len(decided)) if r % CROSS_FOLDS != fold]
            evidence = self._evidence(
                claims,
                waiting | {decided_items[r] for r in held},
                [decided[r] for r in rest],
                [decided_items[r] for r in rest],
                priors,
                set(known.linked) - freed,
            )
            for r in held:
                row, cres = decided[r]
                hits, _, probabilities[r], _ = self.ordered(row, evidence[decided_items[r]], None)
                correct[r] = bool(hits) and hits[0].cre_id in cres
        if len(decided) < MIN_SOURCE_DECISIONS:
            return _Fit(None, probabilities, correct)
        adaptation = fit_adaptation(probabilities, correct, self.model.shrinkage)
        return _Fit(adaptation, probabilities, correct, self.model.shrinkage)


Ordered = tuple[list[ScoredHub], list[float] | None, float, dict[str, float]]
Decided = tuple[SlotRow, tuple[str, ...]]  # a decided row, with the CREs people chose


# The reviewed items' adapted confidences are cross-fitted over this many folds.
CROSS_FOLDS = 5


@dataclass(frozen=True)
class _Cold:
    """A source's items linked as if nothing were decided (`SourceLevelSlot._cold`)."""

    pending: list[Ordered]  # each pending row's hits, evidence, confidence and chances
    decided: list[tuple[float, bool]]  # each decided row's confidence, and if it was right
    evidence: dict[int, Collective]  # by item
    evidence_seen: CutEvidence  # what the cut is chosen from, for the store

    def evidence_now(self) -> Evidence:
        """The confidences the cut is chosen from: each pending row with a suggestion,
        each decided item with whether its first suggestion was right."""
        return Evidence(
            [confidence for hits, _, confidence, _ in self.pending if hits],
            [confidence for confidence, _ in self.decided],
            [right for _, right in self.decided],
        )


@dataclass(frozen=True)
class _Fit:
    adaptation: Adaptation | None  # None: too few decisions to adapt the calibration
    probabilities: list[float]  # the decided items' global confidences
    correct: list[bool]
    shrinkage: float = 10.0
