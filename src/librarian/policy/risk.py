"""The risk a team accepts, and the prior a source's cut starts from: one frozen
`RiskPolicy` per run, stored with it (`store.policies`), so that whatever decides a
source's items again (`relink`, the workbench's re-scorer, `train`'s preview) keeps the
team's promise, never a default."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from librarian.settings import default_of

# How many reviewed items the model's own expectation weighs as, in a source's prior,
# when no learnt prior is given (models from before the prior was learnt; tests).
PRIOR_WEIGHT = 2.0
RISKS = ("expected", "bound")


@dataclass(frozen=True)
class RiskPolicy:
    """The risk a team accepts: at most `budget` of a source's auto-links wrong, in
    expectation (`risk` "expected") or with probability `confidence` ("bound"); a cut
    below the global one resting on at least `min_reviewed` reviewed items. `prior_weight`
    and `prior_scale`: the learnt prior (source.json)."""

    budget: float = default_of("wrong_budget")
    confidence: float = default_of("risk_confidence")
    min_reviewed: int = 10
    risk: str = default_of("risk")
    prior_weight: float = PRIOR_WEIGHT
    prior_scale: float = 1.0

    def guarantee(self) -> str:
        """The promise, in words, wherever a cut is shown."""
        if self.risk == "bound":
            return f"share wrong <= {self.budget:.0%} with probability >= {self.confidence:.0%}"
        return f"expected share wrong <= {self.budget:.0%}"

    def prior_centre(self, expected_wrong: float) -> float:
        return min(0.999, max(1e-6, self.prior_scale * expected_wrong))

    def passes(self, mean: float, bound: float) -> bool:
        return (bound if self.risk == "bound" else mean) <= self.budget

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RiskPolicy:
        """A stored policy; ValueError when it is not one."""
        fields = {f: data[f] for f in cls.__dataclass_fields__ if f in data}
        policy = cls(**fields)
        if policy.risk not in RISKS or not 0.0 < policy.budget < 1.0:
            raise ValueError(f"not a risk policy: {dict(data)}")
        if not 0.0 < policy.confidence < 1.0 or policy.prior_weight <= 0.0:
            raise ValueError(f"not a risk policy: {dict(data)}")
        return policy
