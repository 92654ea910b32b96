"""C.5 as the runner runs it, between a batch's C.2-C.4 and its C.6-C.10: what C.5 needs
of a prepared batch (`slot_rows`), a source's decided items embedded and retrieved as
they are now (`reviewed_rows`, the one model step of C.5), and every row of a source
linked with what the store knows of it (`link_rows`). The joint assignment and the cut
are `source_level.py`'s; this is the glue between it and the batches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from librarian.pipeline.batches import Prepared, Retrieved, ReviewedRow
from librarian.pipeline.compact import compared
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.source_level import Linked, SlotRow, SourceLevelSlot
from librarian.pipeline.stages import EmbedStage, RetrieveStage
from librarian.retrieval.flat import ScoredHub
from librarian.schemas.records import EarlierItem, History, Reviewed


@dataclass(frozen=True)
class SourcePhase:
    """C.5's slot, with the stages and the hub's columns its glue reads."""

    slot: SourceLevelSlot
    embed: EmbedStage  # C.3, run again on a source's decided items
    retrieve: RetrieveStage  # C.4, likewise
    column: Mapping[str, int]  # a CRE id's column in the hub's vectors

    def slot_rows(self, prepared: Prepared) -> list[SlotRow]:
        """What C.5 needs of a prepared batch's model rows."""
        retrieved = prepared.retrieved
        if retrieved is None:
            return []
        return [
            SlotRow(
                s.source_key,
                s.span_key,
                s.text,
                retrieved.hits[i],
                self.evidence(retrieved, i),
                self.slot.overlaps(s.text, retrieved.hits[i]),
            )
            for i, (_, s) in enumerate(prepared.to_model)
        ]

    def reviewed_rows(self, sources: Sequence[str], history: History) -> list[ReviewedRow]:
        """C.5's model work: the decided items of `sources`, embedded and retrieved as they
        are now (their key and text as digests, as `CompactRows` gives the pending rows'),
        each with the CREs its reviewers chose. The runner runs it on its executor."""
        if self.slot.model is None:
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
        embedded = self.embed.embed(as_sections)
        retrieved = self.retrieve.search(as_sections, embedded.vectors)
        return [
            (
                compared(
                    source,
                    r.key,
                    r.text,
                    retrieved.hits[j],
                    self.evidence(retrieved, j),
                    self.slot.overlaps(r.text, retrieved.hits[j]),
                ),
                r.cre_ids,
            )
            for j, (source, r) in enumerate(decided)
        ]

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
        read = self.slot.overlaps
        context = [
            compared(
                source,
                e.key,
                e.text,
                _hits(e),
                list(e.evidence) if e.evidence else None,
                read(e.text, _hits(e)),
            )
            for source, items in (earlier or {}).items()
            for e in items
        ]
        linked = self.slot.run([*context, *rows], list(reviewed), history)
        return linked[len(context) :]

    def stored_candidates(self, prepared: Prepared) -> dict[str, dict[str, Any]]:
        """What C.5 needs of each model row, for the store: a later window of the same
        source links its rows with these (`link_rows`'s `earlier`)."""
        retrieved = prepared.retrieved
        assert retrieved is not None
        return {
            section.chunk_id: {
                "ids": [h.cre_id for h in retrieved.hits[i]],
                "scores": [h.score for h in retrieved.hits[i]],
                "evidence": self.evidence(retrieved, i),
            }
            for i, (_, section) in enumerate(prepared.to_model)
        }

    def evidence(self, retrieved: Retrieved, row: int) -> list[float] | None:
        """A model row's trained evidence for each of its candidates (None: no trained
        evidence in this pipeline)."""
        if retrieved.best is None:
            return None
        columns = [self.column[h.cre_id] for h in retrieved.hits[row]]
        return [float(v) for v in retrieved.best[row, columns].tolist()]


def _hits(item: EarlierItem) -> list[ScoredHub]:
    return [ScoredHub(c, s) for c, s in zip(item.ids, item.scores, strict=True)]
