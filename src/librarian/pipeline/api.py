"""The pipeline's front door: what code outside `librarian.pipeline` uses of its batch
records, its retrieval stage and C.5. The factory, which assembles the stages, is the one
module outside it that imports them directly; an import contract (pyproject.toml) keeps
`stages`, `emit`, `source_level` and `batches` private to everyone else, so what they
expose is this list, and a change behind it is the pipeline's own."""

from __future__ import annotations

from librarian.pipeline.batches import Admitted, Priors
from librarian.pipeline.source_level import SlotRow, SourceLevelSlot, item_index, merged_claim
from librarian.pipeline.stages import RetrieveStage

__all__ = [
    "Admitted",
    "Priors",
    "RetrieveStage",
    "SlotRow",
    "SourceLevelSlot",
    "item_index",
    "merged_claim",
]
