"""The promises a source's cut can keep, one object each: what share wrong it bounds, and
which links that share counts. `DecisionPolicy.risk` names one; the exact test
(`exact.certifies`), the words a cut is shown with and the share an evaluation measures
against it (`realised`) all read it here, so a new guarantee is one more `Guarantee` (and
its name among the settings' choices, which a test keeps equal to these)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Guarantee:
    """A promise: at most the budget of `bounds` wrong, with the policy's confidence."""

    name: str  # as `--risk` takes it
    bounds: str  # what share wrong it bounds, in words
    counts_people: bool  # whether the links the source's people made count beside the auto-links

    def links(self, people: int) -> int:
        """The links people made that the exact test counts beside the auto-links."""
        return people if self.counts_people else 0

    def realised(self, auto: int, wrong: int, people: int) -> float | None:
        """The share it bounds, measured: `wrong` of the `auto` auto-links, over the links
        it counts (None: nothing was linked automatically)."""
        return wrong / (auto + self.links(people)) if auto else None


BOUND = Guarantee("bound", "share wrong of the auto-links", counts_people=False)
LINKS = Guarantee(
    "links", "share wrong of the source's links (reviewed and automatic)", counts_people=True
)
GUARANTEES = {g.name: g for g in (BOUND, LINKS)}
