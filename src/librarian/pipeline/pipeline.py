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
    C.7 score       a calibrated confidence per candidate (`Scaler`)    (emit.py)
    C.8 safety      negation and update detection (`SafetyGuard`)       (emit.py, safety.py)
    C.9 decide      pure and total: link, or why a person must look     (emit.py, policy/verdict.py)
    C.10 emit       a LinkProposal or ReviewItem                        (emit.py, envelopes.py)

The stages are data: two ordered lists of stage objects (`preparing`: C.2-C.4;
`completing`: C.6-C.10), each with its components and one `run` over a batch record
(`batches.py`), which `prepare` and `complete` fold over and `plan`/`components` read.
`factory.assemble` makes the lists (a plug-in's stage joins them there); C.5 sits between
them, run by the runner. The one place the phases run in order is the runner (`run.py`):
it takes raw batches from a source (`sources.py`, `store/source.py`), admits and prepares
each (C.0-C.4), links each source as a whole (C.5, `link_rows`), completes each batch
(C.6-C.10) and hands it to the sinks (`sinks.py`, `store/sink.py`); C.5's glue between
the batches and the joint assignment is `source_phase.py`. `one_shot.link` (eval,
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
from typing import TypeVar

from librarian.catalogue.hub import Hub
from librarian.pipeline import components as ids
from librarian.pipeline.batches import (
    Admitted,
    CompleteStage,
    Completing,
    Prepared,
    PrepareStage,
    PriorLookup,
    Priors,
    Retrieved,
    ScoredRow,
)
from librarian.pipeline.components import Component, describe
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.emit import ScoreStage
from librarian.pipeline.envelopes import RunContext
from librarian.pipeline.ingest import parse_line
from librarian.pipeline.source_level import Linked, SourceLevelSlot
from librarian.pipeline.source_phase import SourcePhase
from librarian.pipeline.stages import EmbedStage, RetrieveStage
from librarian.policy import Certified, DecisionPolicy
from librarian.retrieval.flat import ScoredHub
from librarian.retrieval.index import HubIndex
from librarian.schemas.records import (
    BatchResult,
    RawBatch,
    Rejection,
    Section,
    Skip,
)

EXPLAIN_RUN_ID = "explain"
S = TypeVar("S")


@dataclass
class Pipeline:
    hub: Hub
    index: HubIndex
    preparing: tuple[PrepareStage, ...]  # C.2-C.4, in order
    source_level: SourceLevelSlot  # C.5: the runner runs it between the two lists
    completing: tuple[CompleteStage, ...]  # C.6-C.10, in order
    models: dict[str, str | None] = field(default_factory=dict)

    @property
    def policy(self) -> DecisionPolicy:
        """How this pipeline decides (C.5 chooses each source's cut under it)."""
        return self.source_level.policy

    def with_policy(
        self, policy: DecisionPolicy, cuts: Mapping[str, Certified] | None = None
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

    @property
    def linking(self) -> SourcePhase:
        """C.5 as the runner runs it, over this pipeline's slot and stages."""
        return SourcePhase(self.source_level, self.embed, self.retrieve, self.column)

    def stage(self, kind: type[S]) -> S:
        """The stage of type `kind` (its settings, its model: `stage(EmbedStage).embedder`)."""
        for stage in (*self.preparing, *self.completing):
            if isinstance(stage, kind):
                return stage
        raise LookupError(f"no {kind.__name__} in this pipeline")

    @property
    def top_n(self) -> int:
        """The suggestions a row keeps (C.4's)."""
        return self.stage(ScoreStage).top_n

    def with_top_n(self, top_n: int) -> Pipeline:
        """The same stages, `top_n` suggestions a row (a suggest request's own)."""
        score = self.stage(ScoreStage)
        shown = ScoreStage(score.scaler, score.hub, top_n)
        return replace(self, completing=tuple(shown if s is score else s for s in self.completing))

    @property
    def embed(self) -> EmbedStage:
        """C.3, which C.5's model work (`SourcePhase.reviewed_rows`) runs again."""
        return self.stage(EmbedStage)

    @property
    def retrieve(self) -> RetrieveStage:
        """C.4, which C.5's model work (`SourcePhase.reviewed_rows`) runs again."""
        return self.stage(RetrieveStage)

    # -- what runs -------------------------------------------------------------------

    def components(self, priors_read: bool) -> list[Component]:
        """The stages a model-scored row goes through, in order (its audit: not C.0-C.2,
        nor C.10, which writes it)."""
        return [
            *(c for s in self.preparing if s.audited for c in s.components(priors_read)),
            self.source_level.component,
            *(c for s in self.completing if s.audited for c in s.components(priors_read)),
        ]

    def plan(self, priors_read: bool) -> list[Component]:
        """Every stage, for `run --plan`."""
        return [
            Component("ingest", ids.INGEST),
            Component("dedup", ids.DEDUP),
            *(c for s in self.preparing for c in s.components(priors_read)),
            self.source_level.component,
            *(c for s in self.completing for c in s.components(priors_read)),
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

    def context(self, run_id: str, now: datetime | None = None) -> RunContext:
        return RunContext(run_id=run_id, policy=self.policy, now=now or datetime.now(UTC))

    def prepare(
        self, sections: Sequence[Section], ctx: RunContext, priors: Priors | None = None
    ) -> Prepared:
        """C.2-C.4: cited CREs decided, the rest embedded and retrieved. What C.5 needs
        of a batch (a run links every batch of a source together, then completes each)."""
        batch = Prepared(list(sections), ctx, priors)
        for stage in self.preparing:
            with batch.timer.stage(stage.name):
                stage.run(batch)
        return batch

    def complete(self, prepared: Prepared, linked: Sequence[Linked]) -> BatchResult:
        """C.6-C.10 of one prepared batch, with what C.5 made of its rows."""
        timer = prepared.timer
        out = dict(prepared.explicit)
        result = BatchResult(
            envelopes=[], explicit=len(prepared.explicit), truncated=prepared.embedded.truncated
        )
        result.cut_chunks = [prepared.to_model[i][1].chunk_id for i in prepared.embedded.cut]
        if prepared.retrieved is not None:
            batch = self._completing(prepared, linked, prepared.retrieved)
            for stage in self.completing:
                with timer.stage(stage.name):
                    stage.run(batch)
            for (pos, section), row in zip(prepared.to_model, batch.rows, strict=True):
                assert row.envelope is not None and row.facts is not None, "C.10 emitted"
                out[pos], result.facts[section.chunk_id] = row.envelope, row.facts
            result.reranked = sum(r.rerank is not None for r in batch.rows)
            result.routing = prepared.retrieved.routing
            result.candidates = self.linking.stored_candidates(prepared)
            statuses = {r.status.source: r.status for r in linked}  # one a source
            result.sources = {name: status.as_json() for name, status in statuses.items()}
            result.cut_evidence = {
                name: status.evidence
                for name, status in statuses.items()
                if status.evidence is not None
            }
        result.envelopes = [out[i] for i in range(len(prepared.sections))]
        result.timings_s = dict(timer.seconds)
        return result

    def _completing(
        self, prepared: Prepared, linked: Sequence[Linked], retrieved: Retrieved
    ) -> Completing:
        """The model rows as C.6-C.10 take them: each with its own hits in C.5's order."""
        embedded = prepared.embedded
        rows = [
            ScoredRow(section, _with_hits(one, own), embedded.vectors[i], embedded.queries[i])
            for i, ((_, section), one, own) in enumerate(
                zip(prepared.to_model, linked, retrieved.hits, strict=True)
            )
        ]
        described = self.description(prepared.priors is not None)
        return Completing(prepared.ctx, prepared.priors, described, rows)


def _read_line(raw: RawBatch, line: int, data: bytes) -> Section | Rejection | Skip:
    """C.0 for one line: the record its source read it into, else the line parsed."""
    record = raw.records.get(line)
    return record if record is not None else parse_line(line, data)


def _with_hits(linked: Linked, retrieved: Sequence[ScoredHub]) -> Linked:
    """`linked` with the row's own hits (each with its dense score) in C.5's order: C.5
    saw only what `CompactRows` keeps of them."""
    own = {h.cre_id: h for h in retrieved}
    return replace(linked, hits=[own[h.cre_id] for h in linked.hits])
