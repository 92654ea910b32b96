"""Runs the stages over a batch of sections, as small named steps: explicit fast path,
embed, route and retrieve, rerank, decide. Pure over its inputs apart from the models it
holds; `factory.build_linker` constructs one from settings."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from librarian.artifacts.calibrator import Calibrator
from librarian.artifacts.card import TrainedModels
from librarian.catalogue.hub import Hub
from librarian.models.seams import Embedder, PairScorer, Vectors
from librarian.pipeline.decide import RunContext, Scored, decide, decide_explicit
from librarian.pipeline.explicit import find_references
from librarian.pipeline.ingest import query_text, rejected, section_from_text
from librarian.retrieval.evidence import EVIDENCE_WEIGHT, evidence_bonus
from librarian.retrieval.flat import MemoryRetriever, Retriever, ScoredHub
from librarian.retrieval.index import HubIndex
from librarian.retrieval.rerank import needs_rerank, rerank_scores
from librarian.retrieval.why import why
from librarian.routing.collections import hub_collections
from librarian.routing.router import Router
from librarian.schemas.envelopes import Candidate, Envelope
from librarian.schemas.records import BatchResult, RejectCode, Rejection, Section
from librarian.schemas.routing import RoutingDecision
from librarian.settings import UNCALIBRATED_THRESHOLD, LinkerSettings

EXPLAIN_RUN_ID = "explain"


class _Timer:
    """Seconds spent per stage over one batch."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started


@dataclass
class _Searched:
    """The sections the models see, with what retrieval and reranking made of them."""

    positions: list[int]
    sections: list[Section]
    queries: list[str]
    routing: list[RoutingDecision]
    vectors: Vectors
    hits: list[list[ScoredHub]]
    rerank: list[list[float] | None]
    best: NDArray[np.float32] | None  # each hub's best linked-section cosine, per section
    truncated: int = 0


class Linker:
    def __init__(
        self,
        hub: Hub,
        embedder: Embedder,
        index: HubIndex,
        scorer: PairScorer | None,
        settings: LinkerSettings,
        trained: TrainedModels | None = None,
        retriever: Retriever | None = None,
        router: Router | None = None,
    ) -> None:
        if index.ids != hub.ids:
            raise ValueError("hub index was built for a different hub")
        self.hub = hub
        self.embedder = embedder
        self.index = index
        self.scorer = scorer
        self.settings = settings
        self.retriever = retriever or MemoryRetriever(index)
        self.router = router or Router(
            hub_collections(hub), mode=settings.routing, pin=settings.collections
        )
        self.trained = trained
        self.evidence = trained.evidence if trained is not None else None
        self.column = {c: i for i, c in enumerate(index.ids)}
        # The calibrator was fitted on retrieval scores; a reranker's scores are another scale.
        self.calibrator: Calibrator | None = (
            trained.calibrator if trained is not None and scorer is None else None
        )
        self.threshold = self._threshold()
        self.description = self._describe()

    def _threshold(self) -> float:
        if self.settings.threshold is not None:
            return self.settings.threshold
        if self.calibrator is not None and self.trained is not None:
            return self.trained.threshold
        return UNCALIBRATED_THRESHOLD

    def _describe(self) -> str:
        """What ran, for every envelope's `retrieval.retriever` and the run summary."""
        scorer, settings = self.scorer, self.settings
        rerank = f"cross-encoder:{scorer.name}" if scorer else "none (no reranker configured)"
        if scorer and settings.rerank_gap is not None:
            rerank += f" where top-2 retrieval gap < {settings.rerank_gap}"
        if self.calibrator is not None and self.trained is not None:
            confidence = (
                f"calibrated logistic(score, margin, evidence) from {self.trained.description}"
            )
        elif self.trained is not None:
            confidence = "uncalibrated reranker score (the calibrator fits retrieval scores only)"
        else:
            confidence = "uncalibrated cosine (asked for: no trained models used)"
        evidence = (
            f" + {EVIDENCE_WEIGHT} x best of {self.evidence.size} linked sections"
            if self.evidence is not None
            else " (no linked-section evidence)"
        )
        return (
            f"dense:{self.embedder.name} cosine mean(name,path,children){evidence} "
            f"top{settings.top_k} ({self.retriever.name}); "
            f"rerank:{rerank}; confidence:{confidence}; routing:{self.router.mode}"
        )

    @property
    def model_ids(self) -> dict[str, str | None]:
        return {
            "embedding": self.embedder.name,
            "embedding_fingerprint": self.embedder.fingerprint[:16],
            "reranker": self.scorer.name if self.scorer else None,
            "calibrator": str(self.trained.directory) if self.calibrator and self.trained else None,
        }

    def link(
        self, sections: Sequence[Section], run_id: str, now: datetime | None = None
    ) -> BatchResult:
        ctx = RunContext(run_id=run_id, threshold=self.threshold, now=now or datetime.now(UTC))
        timer = _Timer()
        with timer.stage("explicit"):
            out, to_model = self._explicit(sections, ctx)
        searched = None
        if to_model:
            searched = self._search(to_model, timer)
            with timer.stage("decide"):
                out.update(self._decide(searched, ctx))
        return BatchResult(
            envelopes=[out[i] for i in range(len(sections))],
            explicit=len(sections) - len(to_model),
            truncated=searched.truncated if searched else 0,
            timings_s=dict(timer.seconds),
            reranked=sum(r is not None for r in searched.rerank) if searched else 0,
            routing=searched.routing if searched else [],
        )

    def _explicit(
        self, sections: Sequence[Section], ctx: RunContext
    ) -> tuple[dict[int, Envelope], list[tuple[int, Section]]]:
        """Sections citing a CRE are decided without a model; the rest go on."""
        decided: dict[int, Envelope] = {}
        rest: list[tuple[int, Section]] = []
        for pos, section in enumerate(sections):
            ref = find_references(f"{section.title_hint or ''}\n{section.text}", self.hub.by_id)
            if ref is not None:
                decided[pos] = decide_explicit(section, ref, self.hub, ctx)
            else:
                rest.append((pos, section))
        return decided, rest

    def _search(self, to_model: list[tuple[int, Section]], timer: _Timer) -> _Searched:
        sections = [s for _, s in to_model]
        queries = [query_text(s) for s in sections]
        with timer.stage("embed"):
            truncated = self.embedder.count_truncated(queries)
            vectors = self.embedder.encode(queries)
        with timer.stage("retrieve"):
            best = self.evidence.best(vectors) if self.evidence is not None else None
            routing, hits = self._retrieve(sections, vectors, best)
        rerank: list[list[float] | None] = [None] * len(hits)
        if self.scorer is not None:
            with timer.stage("rerank"):
                rerank = self._rerank(queries, hits)
        positions = [p for p, _ in to_model]
        return _Searched(positions, sections, queries, routing, vectors, hits, rerank, best,
                         truncated)  # fmt: skip

    def _retrieve(
        self, sections: list[Section], vectors: Vectors, best: NDArray[np.float32] | None
    ) -> tuple[list[RoutingDecision], list[list[ScoredHub]]]:
        routing = [self.router.route(s, vectors[i]) for i, s in enumerate(sections)]
        allowed = [self.router.allowed(d) for d in routing]
        hits = self.retriever.search(
            vectors,
            self.settings.top_k,
            self.settings.min_score,
            allowed if any(a is not None for a in allowed) else None,
            evidence_bonus(best) if best is not None else None,
        )
        return routing, hits

    def _rerank(self, queries: list[str], hits: list[list[ScoredHub]]) -> list[list[float] | None]:
        assert self.scorer is not None
        rows = [i for i, n in enumerate(needs_rerank(hits, self.settings.rerank_gap)) if n]
        scored = rerank_scores([queries[i] for i in rows], [hits[i] for i in rows], self.hub,
                               self.scorer)  # fmt: skip
        out: list[list[float] | None] = [None] * len(hits)
        for i, scores in zip(rows, scored, strict=True):
            out[i] = scores
        return out

    def _decide(self, searched: _Searched, ctx: RunContext) -> dict[int, Envelope]:
        decided: dict[int, Envelope] = {}
        for row, pos in enumerate(searched.positions):
            hits, row_rerank = searched.hits[row], searched.rerank[row]
            candidates = self._candidates(hits, row_rerank)
            reranked: list[Candidate] = []
            if row_rerank is not None:
                reranked = sorted(candidates, key=lambda c: (-(c.score_rerank or 0.0), c.cre_id))
                reranked = reranked[: self.settings.top_n]
            ranked = (reranked or candidates)[: self.settings.top_n]
            evidence = self._evidence_of(searched, row, hits)
            scored = Scored(
                candidates,
                reranked,
                self._confidence(hits, evidence, ranked),
                {c.cre_id: self._why(searched.vectors[row], c.cre_id) for c in ranked},
            )
            decided[pos] = decide(searched.sections[row], scored, self.description,
                                  self.settings.top_n, ctx)  # fmt: skip
        return decided

    def _evidence_of(
        self, searched: _Searched, row: int, hits: list[ScoredHub]
    ) -> list[float] | None:
        if searched.best is None:
            return None
        return [float(searched.best[row, self.column[h.cre_id]]) for h in hits]

    def _why(self, vector: Vectors, cre_id: str) -> str:
        return why(vector, self.index, self.evidence, self.column[cre_id])

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

    def _confidence(
        self, hits: list[ScoredHub], evidence: list[float] | None, ranked: list[Candidate]
    ) -> Mapping[str, float] | None:
        """Calibrated probability per ranked candidate; None without a calibrator."""
        if self.calibrator is None:
            return None
        probabilities = self.calibrator.probabilities([h.score for h in hits], evidence)
        by_id = dict(zip((h.cre_id for h in hits), probabilities, strict=True))
        return {c.cre_id: by_id[c.cre_id] for c in ranked}


def explain_text(linker: Linker, text: str, title: str | None = None) -> Envelope:
    """One text through the same stages as a run, for `librarian explain`."""
    return linker.link([section_from_text(text, title)], EXPLAIN_RUN_ID).envelopes[0]


def link_resilient(
    linker: Linker, sections: Sequence[Section], run_id: str
) -> tuple[BatchResult, list[Rejection]]:
    """Link a batch; if the batch fails, retry row by row so one bad row cannot sink the rest.

    When every row fails on its own too, the fault is not in the rows (a broken model,
    say): the original error is raised and the run fails loudly.
    """
    try:
        return linker.link(sections, run_id), []
    except Exception as batch_error:
        first_error = batch_error
    merged = BatchResult(envelopes=[], explicit=0, truncated=0)
    rejections: list[Rejection] = []
    for section in sections:
        try:
            one = linker.link([section], run_id)
        except Exception as exc:
            why = f"linking failed: {type(exc).__name__}: {exc}"
            rejections.append(
                rejected(section.line, RejectCode.PROCESSING_ERROR, why, section.chunk_id)
            )
            continue
        merge_into(merged, one)
    if not merged.envelopes:
        raise first_error
    return merged, rejections


def merge_into(total: BatchResult, one: BatchResult) -> None:
    total.envelopes.extend(one.envelopes)
    total.explicit += one.explicit
    total.truncated += one.truncated
    total.reranked += one.reranked
    total.routing.extend(one.routing)
    for stage, seconds in one.timings_s.items():
        total.timings_s[stage] = total.timings_s.get(stage, 0.0) + seconds
