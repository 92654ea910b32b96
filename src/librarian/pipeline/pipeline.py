"""The row -> envelope path, in order. Follow one row from top to bottom:

    C.0 ingest      raw line -> Section, or a typed Rejection / Skip   (ingest.py)
    C.1 dedup       a chunk or span read twice in a run: once           (dedup.py)
        (priors)    a store says what was decided before: skip the unchanged, keep
                    the prior decision of each span for C.8             (PriorLookup)
    C.2 explicit    a cited CRE id decides without a model              (stages.py)
    C.3 embed       the section's query text -> a vector                (stages.py)
    C.4 route +     which collections it may search; top-k candidates   (stages.py)
        retrieve
    C.5 source      one source's items choose their CREs jointly; its   (source_level.py)
                    reviewers' decisions set its calibration
    C.6 rerank      the cross-encoder, when one is configured           (stages.py)
    C.7 score       a calibrated confidence per candidate (`Scaler`)    (stages.py)
    C.8 safety      negation and update detection (`SafetyGuard`)       (safety.py)
    C.9 decide      pure and total: link, or why a person must look     (policy/verdict.py)
    C.10 emit       a LinkProposal or ReviewItem                        (envelopes.py)

The stages are methods here; the one place they run in order is the runner (`run.py`):
it takes raw batches from a source (`sources.py`, `store/source.py`), admits and prepares
each (C.0-C.4), links each source as a whole (C.5, `link_rows`), completes each batch
(C.6-C.10) and hands it to the sinks (`sinks.py`, `store/sink.py`). `Pipeline.link` (eval,
explain, training) is the runner over one batch in this process; the flow is the runner
with Prefect tasks. `factory.py` builds a Pipeline from settings (construction only: no
rows read).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from librarian.catalogue.hub import Hub
from librarian.models.seams import Vectors
from librarian.pipeline import components as ids
from librarian.pipeline.batches import (
    NOTHING,
    Admitted,
    Prepared,
    PriorLookup,
    Priors,
    ReviewedRow,
    Timer,
)
from librarian.pipeline.compact import compared
from librarian.pipeline.components import Component, describe
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.envelopes import Emitted, RunContext, envelope, suggestion
from librarian.pipeline.explicit import ExplicitReference
from librarian.pipeline.ingest import parse_line, section_from_text
from librarian.pipeline.run import link_sections
from librarian.pipeline.safety import SafetyGuard, SafetyInput
from librarian.pipeline.source_level import Linked, SlotRow, SourceLevelSlot, SourceStatus
from librarian.pipeline.stages import (
    EmbedStage,
    ExplicitStage,
    RerankStage,
    Retrieved,
    RetrieveStage,
    Scaler,
    ToScore,
)
from librarian.policy import Certified, RiskPolicy
from librarian.policy.unmappable import unmappable
from librarian.policy.verdict import decide
from librarian.retrieval.flat import ScoredHub
from librarian.retrieval.index import HubIndex
from librarian.retrieval.why import why
from librarian.schemas.envelopes import (
    SOURCE_AUDIT,
    UNMAPPABLE_AUDIT,
    Candidate,
    Envelope,
    Link,
    Retrieval,
)
from librarian.schemas.records import (
    PLAIN_URN,
    BatchResult,
    DecisionFacts,
    EarlierItem,
    History,
    PriorDecision,
    RawBatch,
    RejectCode,
    Rejection,
    Reviewed,
    Section,
    Skip,
    SkipCode,
    rejected,
)

EXPLAIN_RUN_ID = "explain"


@dataclass
class _Row:
    """What the model stages found for one section."""

    section: Section
    linked: Linked
    rerank: list[float] | None
    vector: Vectors


@dataclass
class Pipeline:
    hub: Hub
    index: HubIndex
    explicit: ExplicitStage
    embed: EmbedStage
    retrieve: RetrieveStage
    source_level: SourceLevelSlot
    rerank: RerankStage
    score: Scaler
    safety: SafetyGuard
    threshold: float
    top_n: int
    models: dict[str, str | None] = field(default_factory=dict)
    # Below this best hub cosine a section going to review is unmappable (0: no gate).
    unmappable_cut: float = 0.0

    def with_policy(
        self, policy: RiskPolicy, cuts: Mapping[str, Certified] | None = None
    ) -> Pipeline:
        """The same stages, each source's cut chosen under `policy` (a stored one); the
        sources of `cuts` decided at the cut a run chose for them (the store's)."""
        slot = self.source_level.with_policy(policy).with_cuts(cuts or {})
        return replace(self, source_level=slot)

    @property
    def models_digest(self) -> str:
        """What decided a row: the embedder, the reranker and the trained models' card
        (not where they lie). The store re-decides open items decided by others."""
        keys = ("embedding_fingerprint", "reranker", "card")
        material = json.dumps({k: self.models.get(k) for k in keys}, sort_keys=True)
        return hashlib.sha256(material.encode()).hexdigest()

    @property
    def hub_ids(self) -> tuple[str, ...]:
        return self.index.ids

    def __post_init__(self) -> None:
        if self.index.ids != self.hub.ids:
            raise ValueError("hub index was built for a different hub")
        self.column = {c: i for i, c in enumerate(self.index.ids)}

    # -- what runs -------------------------------------------------------------------

    def components(self, priors_read: bool) -> list[Component]:
        """The stages a model-scored row goes through, in order (not C.0/C.1/C.2)."""
        route, retrieve = self.retrieve.components
        return [
            self.embed.component,
            route,
            retrieve,
            self.source_level.component,
            self.rerank.component,
            self.score.component,
            self.safety.component(priors_read),
            Component("decide", ids.DECIDE, settings={"threshold": self.threshold}),
        ]

    def plan(self, priors_read: bool) -> list[Component]:
        """Every stage, for `run --plan`."""
        return [
            Component("ingest", ids.INGEST),
            Component("dedup", ids.DEDUP),
            self.explicit.component,
            *self.components(priors_read),
            Component("emit", ids.EMIT),
        ]

    def description(self, priors_read: bool = False) -> str:
        """`retrieval.retriever` of a model-scored row; the run summary's `retriever`."""
        return describe(self.components(priors_read))

    # -- the row path ----------------------------------------------------------------

    def admit(self, raw: RawBatch, registry: ChunkRegistry, lookup: PriorLookup | None) -> Admitted:
        """C.0 ingest, C.1 dedup, and the prior lookup (in the flow's process: it reads
        the store); what it returns can be linked anywhere (a Dask worker)."""
        parsed = [registry.admit(_read_line(raw, line, data)) for line, data in raw.lines]
        sections = [p for p in parsed if isinstance(p, Section)]
        rejections = [p for p in parsed if isinstance(p, Rejection)]
        skips = [p for p in parsed if isinstance(p, Skip)]
        priors = None
        if lookup is not None:
            already = lookup.unchanged(sections)
            done = {skip.line for skip in already}
            sections = [s for s in sections if s.line not in done]
            skips.extend(already)
            priors = lookup.priors(sections)
        return Admitted(raw, sections, rejections, skips, priors)

    def link(
        self,
        sections: Sequence[Section],
        run_id: str,
        now: datetime | None = None,
        priors: Priors | None = None,
        history: History | None = None,
    ) -> BatchResult:
        """C.2-C.10 over validated sections, each source's linked as a whole. `priors`
        None: update detection not evaluated. `history`: what each source already links
        and its reviewers decided (None: nothing known)."""
        ctx = self.context(run_id, now)
        return link_sections(self, sections, ctx, priors, history)

    def context(self, run_id: str, now: datetime | None = None) -> RunContext:
        return RunContext(run_id=run_id, threshold=self.threshold, now=now or datetime.now(UTC))

    def prepare(
        self, sections: Sequence[Section], ctx: RunContext, priors: Priors | None = None
    ) -> Prepared:
        """C.2-C.4: cited CREs decided, the rest embedded and retrieved. What C.5 needs
        of a batch (a run links every batch of a source together, then completes each)."""
        timer = Timer()
        explicit: dict[int, Envelope] = {}
        to_model: list[tuple[int, Section]] = []
        with timer.stage("explicit"):
            for pos, section in enumerate(sections):
                ref = self.explicit.find(section)
                if ref is None:
                    to_model.append((pos, section))
                else:
                    explicit[pos] = self._explicit(section, ref, ctx, priors)
        modelled = [s for _, s in to_model]
        if not modelled:
            return Prepared(list(sections), ctx, priors, explicit, to_model, NOTHING, None, timer)
        with timer.stage("embed"):
            embedded = self.embed.run(modelled)
        with timer.stage("retrieve"):
            retrieved = self.retrieve.run(modelled, embedded.vectors)
        return Prepared(list(sections), ctx, priors, explicit, to_model, embedded, retrieved, timer)

    def link_rows(
        self,
        rows: Sequence[SlotRow],
        reviewed: Sequence[ReviewedRow] = (),
        history: History | None = None,
        earlier: Mapping[str, Sequence[EarlierItem]] | None = None,
    ) -> list[Linked]:
        """C.5: `rows` (each source's whole, as the runner keeps them: `CompactRows`)
        linked with what the store knows of their sources: their reviewed items as they
        are retrieved now (`reviewed_rows`), their history, and the items earlier windows
        stored (linked with them as a file's rows are, their own outcomes not returned).
        No model runs here: it is the runner's work between its passes."""
        context = [
            compared(source, e.key, e.text, _hits(e), list(e.evidence) if e.evidence else None)
            for source, items in (earlier or {}).items()
            for e in items
        ]
        every = [*context, *rows]
        linked = self.source_level.run(every, list(reviewed), history)
        return linked[len(context) :]

    def complete(self, prepared: Prepared, linked: Sequence[Linked]) -> BatchResult:
        """C.6-C.10 of one prepared batch, with what C.5 made of its rows."""
        timer, ctx, priors = prepared.timer, prepared.ctx, prepared.priors
        out = dict(prepared.explicit)
        result = BatchResult(
            envelopes=[], explicit=len(prepared.explicit), truncated=prepared.embedded.truncated
        )
        result.cut_chunks = [prepared.to_model[i][1].chunk_id for i in prepared.embedded.cut]
        if prepared.retrieved is not None:
            hits = prepared.retrieved.hits
            linked = [_with_hits(one, own) for one, own in zip(linked, hits, strict=True)]
            with timer.stage("rerank"):
                rerank = self.rerank.run(prepared.embedded.queries, [r.hits for r in linked])
            with timer.stage("decide"):
                described = self.description(priors is not None)
                for row, (pos, section) in enumerate(prepared.to_model):
                    vector = prepared.embedded.vectors[row]
                    scored = _Row(section, linked[row], rerank[row], vector)
                    out[pos], result.facts[section.chunk_id] = self._decide(
                        scored, ctx, priors, described
                    )
            result.reranked = sum(r is not None for r in rerank)
            result.routing = prepared.retrieved.routing
            result.candidates = self._stored_candidates(prepared)
            statuses = {r.status.source: r.status for r in linked}  # one a source
            result.sources = {name: status.as_json() for name, status in statuses.items()}
        result.envelopes = [out[i] for i in range(len(prepared.sections))]
        result.timings_s = dict(timer.seconds)
        return result

    def slot_rows(self, prepared: Prepared) -> list[SlotRow]:
        """What C.5 needs of a prepared batch's model rows."""
        retrieved = prepared.retrieved
        if retrieved is None:
            return []
        return [
            SlotRow(
                s.source_key, s.span_key, s.text, retrieved.hits[i], self._evidence(retrieved, i)
            )
            for i, (_, s) in enumerate(prepared.to_model)
        ]

    def _stored_candidates(self, prepared: Prepared) -> dict[str, dict[str, Any]]:
        """What C.5 needs of each model row, for the store: a later window of the same
        source links its rows with these (`link_rows`'s `earlier`)."""
        retrieved = prepared.retrieved
        assert retrieved is not None
        return {
            section.chunk_id: {
                "ids": [h.cre_id for h in retrieved.hits[i]],
                "scores": [h.score for h in retrieved.hits[i]],
                "evidence": self._evidence(retrieved, i),
            }
            for i, (_, section) in enumerate(prepared.to_model)
        }

    def _evidence(self, retrieved: Retrieved, row: int) -> list[float] | None:
        if retrieved.best is None:
            return None
        return [float(retrieved.best[row, self.column[h.cre_id]]) for h in retrieved.hits[row]]

    def reviewed_rows(self, sources: Sequence[str], history: History) -> list[ReviewedRow]:
        """C.5's model work: the decided items of `sources`, embedded and retrieved as they
        are now (their key and text as digests, as `CompactRows` gives the pending rows'),
        each with the CREs its reviewers chose. The runner runs it on its executor."""
        if self.source_level.model is None:
            return []
        decided: list[tuple[str, Reviewed]] = [
            (source, r)
            for source in sorted(set(sources))
            if source in history
            for r in history[source].reviewed
        ]
        if not decided:
            return []
        as_sections = [section_from_text(r.text, r.title) for _, r in decided]
        embedded = self.embed.run(as_sections)
        retrieved = self.retrieve.run(as_sections, embedded.vectors)
        return [
            (
                compared(source, r.key, r.text, retrieved.hits[j], self._evidence(retrieved, j)),
                r.cre_ids,
            )
            for j, (source, r) in enumerate(decided)
        ]

    def _decide(
        self, row: _Row, ctx: RunContext, priors: Priors | None, described: str
    ) -> tuple[Envelope, DecisionFacts]:
        hits, status = row.linked.hits, row.linked.status
        threshold = status.threshold
        candidates = self._candidates(hits, row.rerank)
        reranked: list[Candidate] = []
        if row.rerank is not None:
            reranked = sorted(candidates, key=lambda c: (-(c.score_rerank or 0.0), c.cre_id))
            reranked = reranked[: self.top_n]
        ranked = (reranked or candidates)[: self.top_n]
        linked = row.linked
        to_score = ToScore(
            hits, linked.evidence, ranked, linked.collective, linked.adaptation, linked.confidences
        )
        confidence = self.score.confidences(to_score) if ranked else {}
        ranked = shown_order(ranked, confidence, hits if linked.confidences is not None else None)
        reasons = {c.cre_id: self._why(row.vector, c.cre_id) for c in ranked}
        first = ranked[0] if ranked else None
        prior = priors.get(row.section.span_key) if priors is not None else None
        verdict = self.safety.check(
            SafetyInput(
                row.section,
                first.cre_id if first else None,
                first.cre_name if first else None,
                prior,
                priors is not None,
            )
        )
        top = confidence[first.cre_id] if first else 0.0
        decision = decide(
            top,
            [c.cre_id for c in ranked],
            verdict.flags,
            threshold,
            verdict.update_conflict,
            linked.certified is not False,
        )
        rationale = None
        if decision.linked and first is not None:
            rationale = f"top candidate '{first.cre_name}' at {top:.3f} >= {threshold:.3f}"
            if first.cre_id in reasons:
                rationale += f"; {reasons[first.cre_id]}"
        facts = DecisionFacts(said_of(status))
        audit = f"{described}; {SOURCE_AUDIT}{facts.linked_as}"
        best = max((c.score_vector for c in candidates), default=0.0)
        if unmappable(decision, best, self.unmappable_cut):
            facts = replace(facts, unmappable=True)
            audit += f"; {UNMAPPABLE_AUDIT}{best:.3f} < {self.unmappable_cut:.3f}"
        retrieval = Retrieval(
            retriever=audit,
            candidates=candidates,
            reranked=reranked,
            threshold=threshold,
        )
        links = [suggestion(c.cre_id, confidence[c.cre_id], reasons) for c in ranked]
        emitted = Emitted(retrieval, links, verdict.detection(), rationale)
        decided = envelope(row.section, decision, emitted, replace(ctx, threshold=threshold))
        return decided, facts

    def _explicit(
        self, section: Section, ref: ExplicitReference, ctx: RunContext, priors: Priors | None
    ) -> Envelope:
        """A cited CRE id decides without any model: one known id, cited plainly, links;
        anything else goes to a person, flagged with what made it doubtful."""
        described = describe([self.explicit.component, self.safety.component(priors is not None)])
        retrieval = Retrieval(
            retriever=described, candidates=[], reranked=[], threshold=ctx.threshold
        )
        plain = ref.is_single_known and not ref.doubtful
        first = ref.known[0] if ref.known else None
        prior = priors.get(section.span_key) if priors is not None else None
        verdict = self.safety.check(SafetyInput(section, first, None, prior, priors is not None))
        verdict = replace(verdict, flags=(*ref.flags(), *verdict.flags))
        if plain and first is not None:
            why_ = f"the text cites CRE {first} ({self.hub.by_id[first].name})"
            links = [Link(cre_id=first, link_type="LinkedTo", confidence=1.0, rationale=why_)]
        else:
            why_ = "cited in the text; " + ", ".join(ref.doubts())
            links = [
                Link(cre_id=c, link_type="LinkedTo", confidence=0.0, rationale=why_)
                for c in ref.known
            ]
        decision = decide(
            1.0 if plain else 0.0,
            list(ref.known),
            verdict.flags,
            ctx.threshold,
            verdict.update_conflict,
        )
        return envelope(section, decision, Emitted(retrieval, links, verdict.detection()), ctx)

    def _why(self, vector: Vectors, cre_id: str) -> str:
        return why(vector, self.index, self.retrieve.evidence, self.column[cre_id])

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

    def explain(
        self, text: str, title: str | None = None, prior_text: str | None = None
    ) -> Envelope:
        """One text through the same stages as a run, for `librarian explain`; with
        `prior_text`, as a new version of that text (update detection evaluated)."""
        section = section_from_text(text, title)
        priors = None
        if prior_text is not None:
            priors = {section.span_key: PriorDecision("explain-prior", prior_text, None)}
        return self.link([section], EXPLAIN_RUN_ID, priors=priors).envelopes[0]

    def suggest(self, text: str, title: str | None, source: str, history: History) -> Envelope:
        """One text as a new section of `source` (a source key): linked with what its
        reviewers decided (`history`: its reviewed items, what it links), so that its
        adaptation and its cut apply, as the next run's would."""
        section = as_of_source(section_from_text(text, title), source)
        return self.link([section], EXPLAIN_RUN_ID, history=history).envelopes[0]


def _read_line(raw: RawBatch, line: int, data: bytes) -> Section | Rejection | Skip:
    """C.0 for one line: what its source could not read is rejected, what it read as no
    requirement (a document's preamble) skipped, the rest parsed."""
    if line in raw.unreadable:
        return rejected(line, RejectCode.MALFORMED_ROW, raw.unreadable[line])
    if line in raw.not_requirements:
        why = raw.not_requirements[line]
        return Skip(line=line, reason=SkipCode.NOT_A_REQUIREMENT, message=f"line {line}: {why}")
    return parse_line(line, data, raw.knowledge_items)


def as_of_source(section: Section, source: str) -> Section:
    """`section` as a section of the source whose key is `source`: a document of that
    name (`schemas.records.source_key_of` reads a plain input's artifact as its source)."""
    moved = section.source.model_copy(update={"type": "url", "url": f"{PLAIN_URN}api"})
    return section.model_copy(update={"source": moved, "artifact_id": source})


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


def _with_hits(linked: Linked, retrieved: Sequence[ScoredHub]) -> Linked:
    """`linked` with the row's own hits (each with its dense score) in C.5's order: C.5
    saw only what `CompactRows` keeps of them."""
    own = {h.cre_id: h for h in retrieved}
    return replace(linked, hits=[own[h.cre_id] for h in linked.hits])


def _hits(item: EarlierItem) -> list[ScoredHub]:
    return [ScoredHub(c, s) for c, s in zip(item.ids, item.scores, strict=True)]
