"""The risk a team accepts: one frozen `RiskPolicy` per run, stored with it
(`store.policies`), so that whatever decides a source's items again (`relink`, the
workbench's re-scorer, `train`'s preview) keeps the team's promise, never a default."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from librarian.settings import choices_of, default_of

RISKS = choices_of("risk")  # the modes: listed once, in the settings
# A guarantee earlier versions offered and stored with their runs: the expected share
# wrong within the budget. Measured leave-one-framework-out (`make risk-check`) it did not
# hold (8% wrong on average at a 3% budget, docs/quality.md), so a stored policy that asks
# for it is read as `bound` at the same budget: the stronger promise, never more links.
WITHDRAWN = ("expected",)


@dataclass(frozen=True)
class RiskPolicy:
    """The risk a team accepts: at most `budget` of a source's auto-links wrong, with
    probability `confidence`; a cut rests on at least `min_reviewed` reviewed items above
    it; or a cut set by hand (`fixed_cut`), which a relink of the run's sources keeps.
    Stored policies of earlier versions (with a learnt prior, or the withdrawn `expected`
    guarantee) read as this promise at their budget, with no cut set by hand."""

    budget: float = default_of("wrong_budget")
    confidence: float = default_of("risk_confidence")
    min_reviewed: int = 10
    risk: str = default_of("risk")
    # A cut set by hand (`--threshold`): every source's, none chosen; None: chosen per source.
    fixed_cut: float | None = None

    def guarantee(self) -> str:
        """The promise, in words, wherever a cut is shown."""
        return f"share wrong <= {self.budget:.0%} with probability >= {self.confidence:.0%}"

    def test_confidence(self) -> float:
        """The level each cut's exact test is run at (`policy.cut.certifies`)."""
        return self.confidence

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RiskPolicy:
        """A stored policy; ValueError when it is not one."""
        fields = {f: data[f] for f in cls.__dataclass_fields__ if f in data}
        if fields.get("risk") in WITHDRAWN:
            fields["risk"] = "bound"
        policy = cls(**fields)
        if policy.risk not in RISKS or not 0.0 < policy.budget < 1.0:
            raise ValueError(f"not a risk policy: {dict(data)}")
        if not 0.0 < policy.confidence < 1.0 or policy.min_reviewed < 1:
            raise ValueError(f"not a risk policy: {dict(data)}")
        if policy.fixed_cut is not None and not 0.0 <= policy.fixed_cut <= 1.0:
            raise ValueError(f"not a risk policy: {dict(data)}")
        return policy
