"""Routing: which collections of the hub a section searches.

Collections are the hub's root branches. For each section the router picks, in this
precedence: a pin (the input's `collections`, or `--collections`), static rules (YAML:
keywords or a regex on text/title/source → boost or exclude; exclude wins), the trained
branch classifier (mode `auto`), otherwise all. Every failure widens to all collections
with a warning naming the cause; nothing a failure does ever narrows. Pure: no I/O apart
from reading a rules or classifier file when asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from librarian.routing.classifier import BranchClassifier
from librarian.routing.collections import RoutingError
from librarian.routing.rules import Rule
from librarian.schemas.records import Section
from librarian.schemas.routing import CollectionScore, RoutingDecision, RoutingMode, Strategy

# The classifier narrows only when sure: the smallest set of branches holding this much of
# its probability, and never when its best branch is at or below MIN_CONFIDENCE.
COVERAGE = 0.95
MIN_CONFIDENCE = 0.5


@dataclass
class _Decision:
    """A routing decision being made for one section: its warnings so far."""

    router: Router
    section: Section
    warnings: list[str] = field(default_factory=list)

    def done(
        self,
        strategy: Strategy,
        selected: Sequence[str],
        reasons: Mapping[str, str],
        scores: Mapping[str, float] | None = None,
        widened: bool = False,
    ) -> RoutingDecision:
        chosen = set(selected)
        names = self.router.names
        return RoutingDecision(
            chunk_id=self.section.chunk_id,
            line=self.section.line,
            configured=self.router.mode,
            effective=strategy,
            selected=[c for c in names if c in chosen],
            collections=[
                CollectionScore(
                    collection=c,
                    selected=c in chosen,
                    score=None if scores is None else round(float(scores[c]), 6),
                    reason=reasons.get(c, "searched" if c in chosen else "not selected"),
                )
                for c in names
            ],
            widened=widened,
            warnings=self.warnings,
        )

    def widen(self, cause: str, scores: Mapping[str, float] | None = None) -> RoutingDecision:
        self.warnings.append(f"{cause}: searching all collections")
        return self.done("all", self.router.names, {}, scores, widened=True)


@dataclass(frozen=True)
class Router:
    collections: Mapping[str, frozenset[str]]
    mode: RoutingMode = "pins"
    pin: tuple[str, ...] = ()
    rules: tuple[Rule, ...] = ()
    classifier: BranchClassifier | None = None

    @property
    def names(self) -> list[str]:
        return list(self.collections)

    def check_pin(self) -> None:
        """A configured pin naming only collections that do not exist is a usage error."""
        if self.pin and not any(p in self.collections for p in self.pin):
            raise RoutingError(
                f"pinned collection {', '.join(self.pin)}: no such collection "
                f"(known: {', '.join(self.names)})"
            )

    def allowed(self, decision: RoutingDecision) -> frozenset[str] | None:
        """The CRE ids the section may be linked to; None = the whole hub."""
        if set(decision.selected) == set(self.collections):
            return None
        return frozenset().union(*(self.collections[c] for c in decision.selected))

    def route(self, section: Section, vector: NDArray[np.float32] | None) -> RoutingDecision:
        """Pin, then rules, then (mode auto) the classifier, else every collection."""
        decision = _Decision(self, section)
        if self.mode == "off":
            return decision.done("all", self.names, {c: "routing off" for c in self.names})
        pinned = self._pinned(decision)
        if pinned is not None:
            return pinned
        ruled = self._ruled(decision)
        if ruled is not None:
            return ruled
        if self.mode == "auto":
            return self._classified(decision, vector)
        reasons = {c: "no pin, rule or classifier applies" for c in self.names}
        return decision.done("all", self.names, reasons)

    def _pinned(self, decision: _Decision) -> RoutingDecision | None:
        section = decision.section
        pin = tuple(section.collections or ()) or self.pin
        if not pin:
            return None
        source = "the input" if section.collections else "the run's settings"
        known = [p for p in pin if p in self.collections]
        if unknown := [p for p in pin if p not in self.collections]:
            decision.warnings.append(
                f"pin ({source}) names unknown collection(s) {', '.join(unknown)}"
            )
        if not known:
            return decision.widen(f"pin ({source}) names no known collection")
        return decision.done("pin", known, {c: f"pinned by {source}" for c in known})

    def _ruled(self, decision: _Decision) -> RoutingDecision | None:
        matched = [r for r in self.rules if r.matches(decision.section)]
        if not matched:
            return None
        boosted = [c for r in matched for c in r.boost]
        excluded = {c for r in matched for c in r.exclude}
        reasons = {c: f"excluded by rule {r.name}" for r in matched for c in r.exclude}
        for r in matched:
            for c in r.boost:
                reasons.setdefault(c, f"boosted by rule {r.name}")
        selected = [c for c in (boosted or self.names) if c not in excluded]
        if not selected:
            return decision.widen(f"rules {', '.join(r.name for r in matched)} left no collection")
        return decision.done("rules", selected, reasons)

    def _classified(
        self, decision: _Decision, vector: NDArray[np.float32] | None
    ) -> RoutingDecision:
        if self.classifier is None:
            return decision.widen(
                "mode auto but no trained branch classifier (run `librarian train`)"
            )
        if vector is None:
            return decision.widen("classifier has no vector for this section")
        try:
            scores = self._scores(self.classifier, vector)
        except (RoutingError, ValueError) as exc:
            return decision.widen(f"classifier error ({exc})")
        ranked = sorted(self.names, key=lambda c: (-scores[c], c))
        if scores[ranked[0]] <= MIN_CONFIDENCE:
            return decision.widen(
                f"classifier not confident (best {ranked[0]} {scores[ranked[0]]:.2f} "
                f"<= {MIN_CONFIDENCE})",
                scores,
            )
        selected, mass = [], 0.0
        for c in ranked:
            selected.append(c)
            mass += scores[c]
            if mass >= COVERAGE:
                break
        reasons = {c: f"classifier p={scores[c]:.2f}" for c in self.names}
        return decision.done("classifier", selected, reasons, scores)

    def _scores(
        self, classifier: BranchClassifier, vector: NDArray[np.float32]
    ) -> dict[str, float]:
        probs = classifier.probabilities(vector.reshape(1, -1))[0]
        scores = {c: 0.0 for c in self.names}
        for cls, p in zip(classifier.classes, probs, strict=True):
            if cls not in scores:
                raise RoutingError(f"classifier knows collection {cls!r}, the hub does not")
            scores[cls] = float(p)
        return scores
