"""C.7-C.10 as stages over a `Completing` batch, each filling its part of every
`ScoredRow`: score (the candidates, their shown order and confidences), safety (the
guard's verdict), decide (the pure `policy.verdict.decide` against the source's cut) and
emit (the rationale, the audit, the unmappable mark and the envelope).
`factory.assemble` lists them after C.6."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

from librarian.catalogue.hub import Hub
from librarian.models.seams import Vectors
from librarian.pipeline import components as ids
from librarian.pipeline.batches import Completing, ScoredRow
from librarian.pipeline.components import Component
from librarian.pipeline.envelopes import Emitted, envelope, suggestion
from librarian.pipeline.safety import SafetyGuard, SafetyInput
from librarian.pipeline.source_level import SourceStatus
from librarian.pipeline.stages import Scaler, ToScore
from librarian.policy.unmappable import unmappable
from librarian.policy.verdict import decide
from librarian.retrieval.evidence import EvidenceIndex
from librarian.retrieval.flat import ScoredHub
from librarian.retrieval.index import HubIndex
from librarian.retrieval.why import why
from librarian.schemas.envelopes import SOURCE_AUDIT, UNMAPPABLE_AUDIT, Candidate, Retrieval
from librarian.schemas.records import DecisionFacts


class ScoreStage:
    """C.7: a row's hits as candidates (reranked where C.6 scored them), the first
    `top_n` confidences from the `Scaler`, in the order shown."""

    name = "score"
    audited = True

    def __init__(self, scaler: Scaler, hub: Hub, top_n: int) -> None:
        self.scaler, self.hub, self.top_n = scaler, hub, top_n

    def components(self, priors_read: bool) -> list[Component]:
        return [self.scaler.component]

    def run(self, batch: Completing) -> None:
        for row in batch.rows:
            self.score(row)

    def score(self, row: ScoredRow) -> None:
        linked, hits = row.linked, row.linked.hits
        row.candidates = self._candidates(hits, row.rerank)
        if row.rerank is not None:
            reranked = sorted(row.candidates, key=lambda c: (-(c.score_rerank or 0.0), c.cre_id))
            row.reranked = reranked[: self.top_n]
        ranked = (row.reranked or row.candidates)[: self.top_n]
        to_score = ToScore(
            hits, linked.evidence, ranked, linked.collective, linked.adaptation, linked.confidences
        )
        row.confidence = dict(self.scaler.confidences(to_score)) if ranked else {}
        joint = hits if linked.confidences is not None else None
        row.ranked = shown_order(ranked, row.confidence, joint)

    def _candidates(self, hits: list[ScoredHub], rerank: list[float] | None) -> list[Candidate]:
        return [
            Candidate(
                cre_id=h.cre_id,
                cre_name=self.hub.by_id[h.cre_id].name,
                score_vector=round(h.dense_score, 6),
                score_hybrid=round(h.score, 6) if h.dense is not None else None,
                score_rerank=round(rerank[j], 6) if rerank is not None else None,
            )
            for j, h in enumerate(hits)
        ]


class SafetyStage:
    """C.8: the guard's verdict on a row's first suggestion (and its prior decision)."""

    name = "safety"
    audited = True

    def __init__(self, guard: SafetyGuard) -> None:
        self.guard = guard

    def components(self, priors_read: bool) -> list[Component]:
        return [self.guard.component(priors_read)]

    def run(self, batch: Completing) -> None:
        priors = batch.priors
        for row in batch.rows:
            first = row.first
            prior = priors.get(row.section.span_key) if priors is not None else None
            row.verdict = self.guard.check(
                SafetyInput(
                    row.section,
                    first.cre_id if first else None,
                    first.cre_name if first else None,
                    prior,
                    priors is not None,
                )
            )


class DecideStage:
    """C.9: the pure decision, the first suggestion's confidence against its source's cut
    (a row below a source's certified cut is never linked)."""

    name = "decide"
    audited = True

    def components(self, priors_read: bool) -> list[Component]:
        return [Component("decide", ids.DECIDE, settings={"cut": "its source's (C.5)"})]

    def run(self, batch: Completing) -> None:
        for row in batch.rows:
            first = row.first
            row.decision = decide(
                row.confidence[first.cre_id] if first else 0.0,
                [c.cre_id for c in row.ranked],
                row.verdict.flags,
                row.linked.status.threshold,
                row.verdict.update_conflict,
                row.linked.certified is not False,
            )


class EmitStage:
    """C.10: each row's envelope (a LinkProposal or ReviewItem), its audit and why each
    suggestion was made, and the facts the store keeps; below the policy's
    `unmappable_cut` (the best hub cosine) a row going to review is marked unmappable."""

    name = "emit"
    audited = False  # it writes the audit

    def __init__(self, index: HubIndex, evidence: EvidenceIndex | None):
        self.index, self.evidence = index, evidence
        self.column = {c: i for i, c in enumerate(index.ids)}

    def components(self, priors_read: bool) -> list[Component]:
        return [Component("emit", ids.EMIT)]

    def run(self, batch: Completing) -> None:
        for row in batch.rows:
            self.emit(row, batch)

    def emit(self, row: ScoredRow, batch: Completing) -> None:
        decision, first, threshold = row.decision, row.first, row.linked.status.threshold
        assert decision is not None, "C.9 decided the row"
        reasons = {c.cre_id: self._why(row.vector, c.cre_id) for c in row.ranked}
        rationale = None
        if decision.linked and first is not None:
            top = row.confidence[first.cre_id]
            rationale = f"top candidate '{first.cre_name}' at {top:.3f} >= {threshold:.3f}"
            if first.cre_id in reasons:
                rationale += f"; {reasons[first.cre_id]}"
        facts = DecisionFacts(said_of(row.linked.status))
        audit = f"{batch.described}; {SOURCE_AUDIT}{facts.linked_as}"
        best = max((c.score_vector for c in row.candidates), default=0.0)
        cut = batch.ctx.policy.unmappable_cut
        if unmappable(decision, best, cut):
            facts = replace(facts, unmappable=True)
            audit += f"; {UNMAPPABLE_AUDIT}{best:.3f} < {cut:.3f}"
        retrieval = Retrieval(
            retriever=audit, candidates=row.candidates, reranked=row.reranked, threshold=threshold
        )
        links = [suggestion(c.cre_id, row.confidence[c.cre_id], reasons) for c in row.ranked]
        emitted = Emitted(retrieval, links, row.verdict.detection(), rationale)
        row.envelope, row.facts = envelope(row.section, decision, emitted, batch.ctx), facts

    def _why(self, vector: Vectors, cre_id: str) -> str:
        return why(vector, self.index, self.evidence, self.column[cre_id])


@lru_cache(maxsize=256)
def said_of(status: SourceStatus) -> str:
    """A source's status in the audit's words: the same for each of its rows, said once."""
    return status.describe()


def shown_order(
    ranked: Sequence[Candidate],
    confidence: Mapping[str, float],
    joint: Sequence[ScoredHub] | None,
) -> list[Candidate]:
    """The suggestions in the order shown: the first shown is the one linked, at the
    confidence compared with the cut. A row its source linked as a whole keeps C.5's
    order (`joint`: its hits), where the assignment's choice leads unless another
    candidate's confidence beats it by the model's margin; any other row, by confidence."""
    if joint is None:
        return sorted(ranked, key=lambda c: -confidence[c.cre_id])
    position = {h.cre_id: j for j, h in enumerate(joint)}
    return sorted(ranked, key=lambda c: position[c.cre_id])
