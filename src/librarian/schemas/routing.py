"""The routing decision kept beside each envelope (routing.jsonl): which collections of the
hub a section searched, and why. Envelopes stay to contract; this is a separate record."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# off: every collection, pins and rules ignored (for comparisons); pins: a pin or a rule may
# narrow; auto: pins, rules, then the trained branch classifier.
RoutingMode = Literal["off", "pins", "auto"]

Strategy = Literal["all", "pin", "rules", "classifier"]


class CollectionScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: str
    selected: bool
    score: float | None = Field(default=None, description="classifier probability, if asked")
    reason: str


class RoutingDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_id: str
    line: int
    configured: RoutingMode
    effective: Strategy
    selected: list[str]
    collections: list[CollectionScore]
    widened: bool = Field(description="a failure made the router search everything")
    warnings: list[str] = Field(default_factory=list)
