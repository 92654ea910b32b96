"""Evidence for a hub from the sections already linked to it: their vectors (exemplars).

OpenCRE's hubs have names and almost no descriptions; what says most about a hub is the
text of the sections people (and the CAPEC → CWE chains) linked to it. A hub's evidence
score for a query is its best exemplar's cosine (`best`); the retriever adds a share of
it to the name/path/children score. Built by `librarian train` from the links and the
section prose, excluding any framework it is told to (so a framework under evaluation
never describes a hub), and saved as npz: nothing executes on load.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from librarian.errors import UsageError
from librarian.models.seams import Vectors

EVIDENCE_NAME = "evidence.npz"
NO_EVIDENCE = -1.0  # the score of a hub no exemplar describes
# How much of the best exemplar's cosine is added to a hub's name/path/children score.
# 0.25 held up on held-out sentence-style requirements (1.0 hurt); docs/quality.md.
EVIDENCE_WEIGHT = 0.25
RETRIEVER_ID = (
    f"dense cosine mean(name, path, name+children) + {EVIDENCE_WEIGHT} x best linked section"
)


def evidence_bonus(best: NDArray[np.float32]) -> NDArray[np.float32]:
    """What the evidence adds to each hub's dense score (nothing where none describes it)."""
    return np.asarray(EVIDENCE_WEIGHT * np.maximum(best, 0.0), dtype=np.float32)


class EvidenceError(UsageError):
    """An evidence file is missing, damaged or was built for another hub or embedder."""


@dataclass(frozen=True)
class Exemplar:
    """A linked section whose text describes the hubs it is linked to."""

    framework: str
    section: str
    style: str  # prose | title
    text: str
    cre_ids: frozenset[str]


@dataclass(frozen=True)
class EvidenceIndex:
    """Exemplar vectors and which hubs each describes, as (hub, exemplar) pairs sorted by hub."""

    hub_ids: tuple[str, ...]
    vectors: Vectors  # one row per exemplar
    frameworks: tuple[str, ...]  # per exemplar
    labels: tuple[str, ...]  # per exemplar: "framework section (style)", for rationales
    pair_hub: NDArray[np.int64]  # hub index of each pair
    pair_exemplar: NDArray[np.int64]  # exemplar index of each pair

    @classmethod
    def build(
        cls, hub_ids: Sequence[str], exemplars: Sequence[Exemplar], vectors: Vectors
    ) -> EvidenceIndex:
        column = {c: i for i, c in enumerate(hub_ids)}
        pairs = sorted(
            (column[c], e) for e, ex in enumerate(exemplars) for c in ex.cre_ids if c in column
        )
        return cls(
            hub_ids=tuple(hub_ids),
            vectors=np.asarray(vectors, dtype=np.float32),
            frameworks=tuple(e.framework for e in exemplars),
            labels=tuple(f"{e.framework} {e.section} ({e.style})" for e in exemplars),
            pair_hub=np.asarray([h for h, _ in pairs], dtype=np.int64),
            pair_exemplar=np.asarray([e for _, e in pairs], dtype=np.int64),
        )

    @property
    def size(self) -> int:
        return len(self.frameworks)

    def counts(self) -> NDArray[np.int64]:
        """Exemplars per hub."""
        return np.bincount(self.pair_hub, minlength=len(self.hub_ids))

    def excluding(self, frameworks: Collection[str]) -> EvidenceIndex:
        """The same index without the exemplars of `frameworks`."""
        keep = np.asarray([f not in frameworks for f in self.frameworks], dtype=bool)
        renumber = np.cumsum(keep) - 1
        pairs = keep[self.pair_exemplar]
        return EvidenceIndex(
            hub_ids=self.hub_ids,
            vectors=self.vectors[keep],
            frameworks=tuple(f for f, k in zip(self.frameworks, keep, strict=True) if k),
            labels=tuple(s for s, k in zip(self.labels, keep, strict=True) if k),
            pair_hub=self.pair_hub[pairs],
            pair_exemplar=renumber[self.pair_exemplar[pairs]],
        )

    def best(self, queries: Vectors) -> NDArray[np.float32]:
        """(queries, hubs): each hub's best exemplar cosine, NO_EVIDENCE where it has none."""
        out = np.full((len(queries), len(self.hub_ids)), NO_EVIDENCE, dtype=np.float32)
        if not len(self.pair_hub) or not len(queries):
            return out
        pair_scores = (queries @ self.vectors.T)[:, self.pair_exemplar]
        starts = np.flatnonzero(np.r_[True, self.pair_hub[1:] != self.pair_hub[:-1]])
        out[:, self.pair_hub[starts]] = np.maximum.reduceat(pair_scores, starts, axis=1)
        return out

    def best_exemplar(self, query: Vectors, hub: int) -> tuple[str, float] | None:
        """The label and cosine of `hub`'s best exemplar for one query vector."""
        # The pairs are sorted by hub (`build`, `excluding`): `hub`'s are one slice of them.
        start, end = np.searchsorted(self.pair_hub, [hub, hub + 1])
        mine = self.pair_exemplar[start:end]
        if not len(mine):
            return None
        scores = self.vectors[mine] @ query
        best = int(np.argmax(scores))
        return self.labels[int(mine[best])], float(scores[best])

    def save(self, path: Path) -> None:
        np.savez(
            path,
            hub_ids=np.asarray(self.hub_ids),
            vectors=self.vectors,
            frameworks=np.asarray(self.frameworks),
            labels=np.asarray(self.labels),
            pair_hub=self.pair_hub,
            pair_exemplar=self.pair_exemplar,
        )

    @classmethod
    def load(cls, path: Path, hub_ids: Sequence[str], dimension: int) -> EvidenceIndex:
        try:
            with np.load(path, allow_pickle=False) as data:
                index = cls(
                    hub_ids=tuple(str(i) for i in data["hub_ids"]),
                    vectors=data["vectors"].astype(np.float32),
                    frameworks=tuple(str(f) for f in data["frameworks"]),
                    labels=tuple(str(s) for s in data["labels"]),
                    pair_hub=data["pair_hub"].astype(np.int64),
                    pair_exemplar=data["pair_exemplar"].astype(np.int64),
                )
        except (OSError, KeyError, ValueError) as exc:
            raise EvidenceError(f"evidence {path} cannot be read: {exc}") from exc
        return index.checked(hub_ids, dimension, path)

    def checked(self, hub_ids: Sequence[str], dimension: int, where: Path) -> EvidenceIndex:
        if self.vectors.ndim != 2 or (self.size and self.vectors.shape[1] != dimension):
            raise EvidenceError(f"evidence {where} holds vectors of another embedder's width")
        if tuple(hub_ids) != self.hub_ids:
            return self.remapped(hub_ids)
        return self

    def remapped(self, hub_ids: Sequence[str]) -> EvidenceIndex:
        """The same evidence over another hub order (a team catalogue added, say): pairs
        whose hub is not in `hub_ids` are dropped."""
        column = {c: i for i, c in enumerate(hub_ids)}
        pairs = sorted(
            (column[self.hub_ids[h]], int(e))
            for h, e in zip(self.pair_hub, self.pair_exemplar, strict=True)
            if self.hub_ids[h] in column
        )
        return EvidenceIndex(
            hub_ids=tuple(hub_ids),
            vectors=self.vectors,
            frameworks=self.frameworks,
            labels=self.labels,
            pair_hub=np.asarray([h for h, _ in pairs], dtype=np.int64),
            pair_exemplar=np.asarray([e for _, e in pairs], dtype=np.int64),
        )
