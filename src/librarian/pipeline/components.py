"""Every stage's name and versioned component id, and the words a run says about them.

An id names what ran, not how it was configured: a change to what a component computes
bumps its version. Envelopes (`retrieval.retriever`), the run summary and `run --plan`
are assembled from these; tests assert on ids, never on wording.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

INGEST = "queue-row+knowledge-item@1"
DEDUP = "chunk-and-span@1"
EXPLICIT = "explicit-cre-reference@1"
EMBED = "sentence-encoder@1"
ROUTE = "router@1"
RETRIEVE = "dense-mean3+evidence@1"
SOURCE_LEVEL_NONE = "none"
SOURCE_LEVEL_JOINT = "joint-assignment@1"
RERANK_NONE = "none"
RERANK = "cross-encoder@1"
SCORE_CALIBRATED = "calibrated-logistic@1"
SCORE_JOINT = "calibrated-logistic+collective@1"
SCORE_RAW_COSINE = "raw-cosine@1"
SCORE_RAW_RERANK = "raw-rerank-score@1"
SAFETY = "negation+update@1"
DECIDE = "threshold@1"
EMIT = "rfc-envelopes@0.1.0"

# What the safety stage says of update detection, on every envelope.
UPDATE_EVALUATED = "update check evaluated"
UPDATE_NOT_EVALUATED = "update check not evaluated: no prior decisions to read"


@dataclass(frozen=True)
class Component:
    """One stage as a run declares it: its name, component id, the model or file it
    uses (if any), its settings, and a note (what is degraded or narrowed, in words)."""

    stage: str
    id: str
    uses: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    note: str | None = None

    @property
    def label(self) -> str:
        """`stage=id[:uses]` and the note: one part of an envelope's `retrieval.retriever`."""
        text = f"{self.stage}={self.id}" + (f":{self.uses}" if self.uses else "")
        return f"{text} ({self.note})" if self.note else text

    def as_plan(self) -> dict[str, Any]:
        return {
            "name": self.stage,
            "component": self.id,
            "uses": self.uses,
            "settings": dict(self.settings),
            "note": self.note,
        }


def describe(components: Sequence[Component]) -> str:
    """The `retrieval.retriever` text: every component that ran on a row, in order."""
    return "; ".join(c.label for c in components)


def stage_ids(retriever: str) -> dict[str, str]:
    """`retrieval.retriever` read back: stage -> component id (with `:uses`), notes dropped."""
    out: dict[str, str] = {}
    for part in retriever.split("; "):
        stage, _, rest = part.partition("=")
        out[stage] = rest.split(" (", 1)[0]
    return out
