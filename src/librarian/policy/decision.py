"""How a run decides: one frozen `DecisionPolicy`, built once (`factory.decision_policy`),
stored whole with each committed run (`store.policies`) and read back by one function
(`store.policies.policy_of`), so that whatever decides a source's items again (`relink`,
the workbench's re-scorer, `train`'s preview) keeps the team's promise, never a default."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from librarian.policy.exact import certifies
from librarian.policy.guarantees import GUARANTEES
from librarian.settings import UNCALIBRATED_THRESHOLD, choices_of, default_of

RISKS = choices_of("risk")  # the guarantees' names, as the settings offer them
# A guarantee earlier versions offered and stored with their runs: the expected share
# wrong within the budget. Measured leave-one-framework-out (`make risk-check`) it did not
# hold (8% wrong on average at a 3% budget, docs/quality.md), so a stored policy that asks
# for it is read as `bound` at the same budget: the stronger promise, never more links.
WITHDRAWN = ("expected",)
# What the trained models chose rather than the team: stored with a run for the record,
# but the models that decide now set them (a cut fits the calibrator it was chosen for).
TRAINED = ("global_cut", "margin")


@dataclass(frozen=True)
class DecisionPolicy:
    """Everything that turns a row's confidences into a decision.

    The team's: at most `budget` of a source's auto-links wrong, with probability
    `confidence`; a cut rests on at least `min_reviewed` reviewed items above it; or a cut
    set by hand (`fixed_cut`, every source's), which a relink of the run's sources keeps;
    below `unmappable_cut` (the best hub cosine) a row going to review is marked
    unmappable. The trained models': `global_cut`, the cut of a section linked alone (a
    source too small to be linked as a whole, a cited id), and `margin`, by which another
    suggestion must beat the one a source's joint assignment chose to be shown first.

    Stored policies of earlier versions (a learnt prior, the withdrawn `expected`
    guarantee, no fixed cut or unmappable cut) read as this promise at their budget, the
    fields they lack from the policy that reads them (`with_stored`)."""

    budget: float = default_of("wrong_budget")
    confidence: float = default_of("risk_confidence")
    min_reviewed: int = 10
    risk: str = default_of("risk")
    fixed_cut: float | None = None  # None: each source's cut chosen
    unmappable_cut: float = default_of("unmappable_cut")
    global_cut: float = UNCALIBRATED_THRESHOLD
    margin: float = 0.0
    tolerated_wrong: int = default_of("tolerated_wrong")

    def guarantee(self) -> str:
        """The promise, in words, wherever a cut is shown."""
        what = GUARANTEES[self.risk].bounds
        return f"{what} <= {self.budget:.0%} with probability >= {self.confidence:.0%}"

    def certifies(self, above: int, reviewed: int, wrong: int, people: int) -> bool:
        """The exact test of a cut under this policy's guarantee (`exact.certifies`):
        `above` items at or above it, `reviewed` of them reviewed, `wrong` of those wrong;
        `people`: the links the source's people made, which the guarantee over the
        source's links counts beside the auto-links."""
        links = GUARANTEES[self.risk].links(people)
        return certifies(above, reviewed, wrong, self.budget, self.confidence, links)

    def test_confidence(self) -> float:
        """The level each cut's exact test is run at (`policy.cut.certifies`)."""
        return self.confidence

    @property
    def alone_cut(self) -> float:
        """The cut of a row no source's cut decides (a cited id; the run's summary)."""
        return self.fixed_cut if self.fixed_cut is not None else self.global_cut

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def with_stored(self, data: Mapping[str, Any]) -> DecisionPolicy:
        """The team's choices a run stored (`data`: its `as_json`, of any version) with
        this policy's trained cuts and whatever the stored one lacks; ValueError when it
        is not a policy."""
        return self._with(data, TRAINED)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DecisionPolicy:
        """A stored policy read whole, its trained cuts too (a run's record)."""
        return cls()._with(data, ())

    def _with(self, data: Mapping[str, Any], kept: tuple[str, ...]) -> DecisionPolicy:
        fields = {f: data[f] for f in self.__dataclass_fields__ if f in data and f not in kept}
        if fields.get("risk") in WITHDRAWN:
            fields["risk"] = "bound"
        try:
            return replace(self, **fields).checked()
        except (TypeError, ValueError):
            raise ValueError(f"not a decision policy: {dict(data)}") from None

    def checked(self) -> DecisionPolicy:
        """This policy; ValueError when a field is out of its range."""
        if self.risk not in RISKS or not 0.0 < self.budget < 1.0:
            raise ValueError(f"budget or risk out of range: {self}")
        if not 0.0 < self.confidence < 1.0 or self.min_reviewed < 1:
            raise ValueError(f"confidence or min_reviewed out of range: {self}")
        if self.tolerated_wrong < 0:
            raise ValueError(f"tolerated_wrong out of range: {self}")
        cuts = (self.fixed_cut, self.unmappable_cut, self.global_cut)
        if any(c is not None and not 0.0 <= c <= 1.0 for c in cuts) or self.margin < 0.0:
            raise ValueError(f"a cut or the margin out of range: {self}")
        return self
