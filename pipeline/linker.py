"""Composes stages 1-5 over a batch of sections: explicit fast path, embed, retrieve,
rerank, decide. Pure over its inputs apart from the models it holds."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pipeline.artifacts import TrainedModels, has_models, load_trained, recorded_embedder
from pipeline.beam import BeamRetriever
from pipeline.catalogue import load_hubs
from pipeline.config import UNCALIBRATED_THRESHOLD, LinkerSettings
from pipeline.decide import RunContext, decide, decide_explicit
from pipeline.explicit import find_references
from pipeline.hub import Hub
from pipeline.models import CrossEncoderScorer, Embedder, PairScorer, load_embedder
from pipeline.rerank import needs_rerank, rerank_scores
from pipeline.retrieve import HubIndex, MemoryRetriever, Retriever, build_index
from pipeline.route import ROUTER_NAME, BranchClassifier, Router, hub_collections, load_rules
from schemas.envelopes import Candidate, Envelope
from schemas.records import RejectCode, Rejection, Section
from schemas.routing import RoutingDecision


@dataclass
class BatchResult:
    envelopes: list[Envelope]
    explicit: int
    truncated: int
    timings_s: dict[str, float] = field(default_factory=dict)
    reranked: int = 0
    routing: list[RoutingDecision] = field(default_factory=list)


def query_text(section: Section) -> str:
    """What the models read: the title hint first when the text does not already carry it."""
    title = section.title_hint
    if title and title.strip() and title.strip() not in section.text:
        return f"{title.strip()}\n{section.text}"
    return section.text


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
        self.search = retriever or MemoryRetriever(index)
        self.router = router or Router(
            hub_collections(hub), mode=settings.routing, pin=settings.collections
        )
        # The calibrator was fitted on retrieval scores; a reranker's scores are another scale.
        self.calibrator = trained.calibrator if trained is not None and scorer is None else None
        self.trained = trained
        if settings.threshold is not None:
            self.threshold = settings.threshold
        elif self.calibrator is not None and trained is not None:
            self.threshold = trained.threshold
        else:
            self.threshold = UNCALIBRATED_THRESHOLD
        rerank = f"cross-encoder:{scorer.name}" if scorer else "none (no reranker configured)"
        if scorer and settings.rerank_gap is not None:
            rerank += f" where top-2 retrieval gap < {settings.rerank_gap}"
        if self.calibrator is not None and trained is not None:
            confidence = f"calibrated logistic(score, margin) from {trained.description}"
        elif trained is not None:
            confidence = "uncalibrated reranker score (the calibrator fits retrieval scores only)"
        else:
            confidence = "uncalibrated cosine (no trained models; run `librarian train`)"
        self.retriever = (
            f"dense:{embedder.name} cosine mean(name,path,children) top{settings.top_k}"
            f" ({self.search.name}); "
            f"rerank:{rerank}; confidence:{confidence}; routing:{self.router.mode}"
        )

    @classmethod
    def from_settings(
        cls,
        settings: LinkerSettings,
        make_retriever: Callable[[HubIndex], Retriever] | None = None,
    ) -> Linker:
        """Load everything `settings` names; `make_retriever` swaps the in-memory search."""
        hub = load_hubs(settings.hub_path, settings.extra_hubs)
        embedding_model = settings.embedding_model
        if embedding_model is None and settings.models_dir and has_models(settings.models_dir):
            embedding_model = recorded_embedder(settings.models_dir)
        embedder = load_embedder(embedding_model)
        index = build_index(hub, embedder, settings.cache_dir)
        scorer = CrossEncoderScorer(settings.reranker_model) if settings.reranker_model else None
        trained = None
        if settings.models_dir is not None and has_models(settings.models_dir):
            trained = load_trained(settings.models_dir, hub.content_hash, embedder.fingerprint)
        retriever = make_retriever(index) if make_retriever is not None else None
        if settings.search == "beam":
            if retriever is not None:
                raise ValueError("beam search runs in memory: not with --vector-backend pgvector")
            retriever = BeamRetriever(index, hub, settings.beam_width)
        collections = hub_collections(hub)
        rules = (
            load_rules(settings.routing_rules, list(collections)) if settings.routing_rules else ()
        )
        classifier = None
        if settings.routing == "auto" and trained is not None:
            path = trained.directory / ROUTER_NAME
            classifier = BranchClassifier.load(path) if path.is_file() else None
        router = Router(collections, settings.routing, settings.collections, rules, classifier)
        router.check_pin()
        return cls(hub, embedder, index, scorer, settings, trained, retriever, router)

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
        timings: dict[str, float] = defaultdict(float)
        out: dict[int, Envelope] = {}

        started = time.perf_counter()
        to_model: list[tuple[int, Section]] = []
        for pos, section in enumerate(sections):
            ref = find_references(f"{section.title_hint or ''}\n{section.text}", self.hub.by_id)
            if ref is not None:
                out[pos] = decide_explicit(section, ref, self.hub, ctx)
            else:
                to_model.append((pos, section))
        timings["explicit"] += time.perf_counter() - started

        truncated = 0
        reranked_rows = 0
        routing: list[RoutingDecision] = []
        if to_model:
            queries = [query_text(s) for _, s in to_model]
            started = time.perf_counter()
            truncated = self.embedder.count_truncated(queries)
            vectors = self.embedder.encode(queries)
            timings["embed"] += time.perf_counter() - started

            started = time.perf_counter()
            routing = [self.router.route(s, vectors[i]) for i, (_, s) in enumerate(to_model)]
            allowed = [self.router.allowed(d) for d in routing]
            hits = self.search.search(
                vectors,
                self.settings.top_k,
                self.settings.min_score,
                allowed if any(a is not None for a in allowed) else None,
            )
            timings["retrieve"] += time.perf_counter() - started

            rerank: list[list[float] | None] = [None] * len(hits)
            if self.scorer is not None:
                started = time.perf_counter()
                rows = [i for i, n in enumerate(needs_rerank(hits, self.settings.rerank_gap)) if n]
                scored = rerank_scores(
                    [queries[i] for i in rows], [hits[i] for i in rows], self.hub, self.scorer
                )
                for i, scores in zip(rows, scored, strict=True):
                    rerank[i] = scores
                reranked_rows += len(rows)
                timings["rerank"] += time.perf_counter() - started

            started = time.perf_counter()
            for row, (pos, section) in enumerate(to_model):
                row_rerank = rerank[row]
                candidates = [
                    Candidate(
                        cre_id=h.cre_id,
                        cre_name=self.hub.by_id[h.cre_id].name,
                        score_vector=round(h.score, 6),
                        score_rerank=round(row_rerank[j], 6) if row_rerank is not None else None,
                    )
                    for j, h in enumerate(hits[row])
                ]
                reranked: list[Candidate] = []
                if row_rerank is not None:
                    reranked = sorted(
                        candidates, key=lambda c: (-(c.score_rerank or 0.0), c.cre_id)
                    )[: self.settings.top_n]
                confidence = None
                if self.calibrator is not None:
                    ranked = reranked or candidates
                    probabilities = self.calibrator.probabilities([h.score for h in hits[row]])
                    by_id = dict(zip((h.cre_id for h in hits[row]), probabilities, strict=True))
                    confidence = {c.cre_id: by_id[c.cre_id] for c in ranked}
                out[pos] = decide(
                    section,
                    candidates,
                    reranked,
                    self.retriever,
                    self.settings.top_n,
                    ctx,
                    confidence,
                )
            timings["decide"] += time.perf_counter() - started

        return BatchResult(
            envelopes=[out[i] for i in range(len(sections))],
            explicit=len(sections) - len(to_model),
            truncated=truncated,
            timings_s=dict(timings),
            reranked=reranked_rows,
            routing=routing,
        )


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
    envelopes: list[Envelope] = []
    rejections: list[Rejection] = []
    merged = BatchResult(envelopes=envelopes, explicit=0, truncated=0)
    for section in sections:
        try:
            one = linker.link([section], run_id)
        except Exception as exc:
            rejections.append(
                Rejection(
                    line=section.line,
                    chunk_id=section.chunk_id,
                    reason=RejectCode.PROCESSING_ERROR,
                    message=f"line {section.line}: linking failed: {type(exc).__name__}: {exc}",
                )
            )
            continue
        envelopes.extend(one.envelopes)
        merged.explicit += one.explicit
        merged.truncated += one.truncated
        merged.reranked += one.reranked
        merged.routing.extend(one.routing)
        for stage, seconds in one.timings_s.items():
            merged.timings_s[stage] = merged.timings_s.get(stage, 0.0) + seconds
    if not envelopes:
        raise first_error
    return merged, rejections
