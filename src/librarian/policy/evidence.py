"""What a source's cut is chosen from, kept so that a reader without models chooses it
again as the next relink would: the same function (`choose_cut`) on the same numbers."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from librarian.policy.cut import Certified, choose_cut
from librarian.policy.decision import DecisionPolicy
from librarian.policy.plan import ReviewPlan, review_plan

# A row as a cut's evidence: its item's key, its cold confidence, its cold first suggestion
# ("" when it has none).
Entry = tuple[str, float, str]


@dataclass(frozen=True)
class CutEvidence:
    """What a source's cut was chosen from, as the run or relink that chose it saw it: each
    undecided row's and each decided item's cold confidence and first suggestion (read
    from no decision, `SourceLevelSlot._cold`). A decision moves none of these, so a
    reader that runs no model can take the decisions made since and choose the cut again
    with `choose_cut`: the one the next relink of the same items chooses (`now`)."""

    pending: tuple[Entry, ...]
    decided: tuple[Entry, ...]

    def as_json(self) -> dict[str, Any]:
        def rows(entries: tuple[Entry, ...]) -> list[list[Any]]:
            return [[key, round(confidence, 12), top] for key, confidence, top in entries]

        return {"pending": rows(self.pending), "decided": rows(self.decided)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CutEvidence:
        def rows(name: str) -> tuple[Entry, ...]:
            return tuple((str(k), float(c), str(t)) for k, c, t in data.get(name, ()))

        return cls(rows("pending"), rows("decided"))

    def confidences(self) -> dict[str, float]:
        """Each item's cold confidence, by key."""
        return {key: confidence for key, confidence, _ in self.pending + self.decided}

    def now(
        self, decided: Sequence[tuple[str, Sequence[str]]], present: Collection[str]
    ) -> Evidence | None:
        """The evidence after the decisions `decided` (each decided item's key and the CREs
        its person chose; none: rejected), among the items `present` in the store (open or
        linked): the cold confidences of the undecided ones, and of each decided one with
        whether its first suggestion was chosen. None: an item was decided that this
        evidence never saw (the next run or relink has to link it)."""
        seen = {key: (confidence, top) for key, confidence, top in self.pending + self.decided}
        if any(key not in seen for key, _ in decided):
            return None
        taken = {key for key, _ in decided}
        reviewed = [seen[key][0] for key, _ in decided]
        correct = [bool(seen[key][1]) and seen[key][1] in cres for key, cres in decided]
        pending = [
            confidence
            for key, confidence, _ in self.pending + self.decided
            if key not in taken and key in present
        ]
        return Evidence(pending, reviewed, correct)


@dataclass(frozen=True)
class Evidence:
    """A source's confidences as its cut reads them: the undecided items' (`pending`), the
    decided items' (`reviewed`) and whether each decided one's first suggestion was right."""

    pending: list[float]
    reviewed: list[float]
    correct: list[bool]

    def cut(self, policy: DecisionPolicy) -> Certified:
        return choose_cut(self.pending, self.reviewed, self.correct, policy)

    def plan(self, policy: DecisionPolicy) -> ReviewPlan:
        return review_plan(self.pending, self.reviewed, self.correct, policy)
