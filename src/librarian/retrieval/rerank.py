"""Stage 4: rerank the retrieved candidates with a cross-encoder over (section, hub text)."""

from __future__ import annotations

from collections.abc import Sequence

from librarian.catalogue.hub import Hub, path_text
from librarian.models.seams import PairScorer
from librarian.retrieval.flat import ScoredHub


def needs_rerank(candidates: Sequence[Sequence[ScoredHub]], gap: float | None) -> list[bool]:
    """Which sections the cross-encoder should see: all when `gap` is None, else only those
    whose first two retrieval scores lie within `gap` (the retriever is not decisive)."""
    if gap is None:
        return [bool(c) for c in candidates]
    return [len(c) > 1 and c[0].score - c[1].score < gap for c in candidates]


def rerank_scores(
    queries: Sequence[str],
    candidates: Sequence[Sequence[ScoredHub]],
    hub: Hub,
    scorer: PairScorer,
) -> list[list[float]]:
    """Cross-encoder scores aligned with `candidates`, batched across all sections at once."""
    pairs = [
        (query, path_text(hub.by_id[c.cre_id]))
        for query, cands in zip(queries, candidates, strict=True)
        for c in cands
    ]
    flat = scorer.predict(pairs).tolist()
    if len(flat) != len(pairs):
        raise ValueError(f"reranker returned {len(flat)} scores for {len(pairs)} pairs")
    out: list[list[float]] = []
    start = 0
    for cands in candidates:
        out.append([float(s) for s in flat[start : start + len(cands)]])
        start += len(cands)
    return out
