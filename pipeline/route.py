"""Routing: which collections of the hub a section searches.

Collections are the hub's root branches. For each section the router picks, in this
precedence: a pin (the input's `collections`, or `--collections`), static rules (YAML:
keywords or a regex on text/title/source → boost or exclude; exclude wins), the trained
branch classifier (mode `auto`), otherwise all. Every failure widens to all collections
with a warning naming the cause; nothing a failure does ever narrows. Pure: no I/O apart
from reading a rules or classifier file when asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pipeline.hub import Hub
from schemas.records import Section
from schemas.routing import CollectionScore, RoutingDecision, RoutingMode, Strategy

ROUTER_NAME = "router.json"
# The classifier narrows only when sure: the smallest set of branches holding this much of
# its probability, and never when its best branch is at or below MIN_CONFIDENCE.
COVERAGE = 0.95
MIN_CONFIDENCE = 0.5


class RoutingError(ValueError):
    """A rules file, a classifier file or a pin cannot be used; the message says which."""


def collection_name(root_name: str) -> str:
    """A root branch's collection name: the first word of its name, lower case."""
    words = re.findall(r"[a-z0-9][a-z0-9-]*", root_name.lower())
    return words[0] if words else "collection"


def hub_collections(hub: Hub) -> dict[str, frozenset[str]]:
    """Collection name -> CRE ids: one per OpenCRE root branch (roots sorted by id), then
    one per team catalogue (`hub.collection_of`)."""
    roots = sorted(
        (n for n in hub.nodes if n.parent_id is None and n.cre_id not in hub.collection_of),
        key=lambda n: n.cre_id,
    )
    names: dict[str, str] = {}
    for root in roots:
        name = collection_name(root.name)
        names[root.cre_id] = name if name not in names.values() else f"{name}-{root.cre_id}"
    members: dict[str, set[str]] = {name: set() for name in names.values()}
    for node in hub.nodes:
        if node.cre_id in hub.collection_of:
            name = hub.collection_of[node.cre_id]
            if name in names.values():
                name = f"{name}-catalogue"
            members.setdefault(name, set()).add(node.cre_id)
            continue
        top = node
        while top.parent_id is not None:
            top = hub.by_id[top.parent_id]
        members[names[top.cre_id]].add(node.cre_id)
    return {name: frozenset(ids) for name, ids in members.items()}


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    fields: tuple[str, ...]
    boost: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def matches(self, section: Section) -> bool:
        values = {
            "text": section.text,
            "title": section.title_hint or "",
            "source": " ".join(
                v for v in (section.source.repo, section.source.url, section.locator.path) if v
            ),
        }
        return any(self.pattern.search(values[f]) for f in self.fields)


RULE_FIELDS = ("text", "title", "source")


def load_rules(path: Path, known: Sequence[str]) -> tuple[Rule, ...]:
    """Rules from YAML: `rules: [{name, keywords | regex, fields?, boost?, exclude?}]`."""
    import yaml

    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise RoutingError(f"routing rules {path}: cannot read: {exc}") from exc
    items = raw.get("rules") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise RoutingError(f"routing rules {path}: expected a mapping with a list `rules`")
    rules: list[Rule] = []
    for number, item in enumerate(items, start=1):
        where = f"routing rules {path}: rule {number}"
        if not isinstance(item, dict):
            raise RoutingError(f"{where}: not a mapping")
        name = str(item.get("name") or f"rule-{number}")
        keywords, regex = item.get("keywords"), item.get("regex")
        if (keywords is None) == (regex is None):
            raise RoutingError(f"{where} ({name}): give exactly one of `keywords` or `regex`")
        try:
            if keywords is not None:
                words = [keywords] if isinstance(keywords, str) else list(keywords)
                if not words:
                    raise RoutingError(f"{where} ({name}): `keywords` is empty")
                alternatives = "|".join(re.escape(str(w)) for w in words)
                pattern = re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)
            else:
                pattern = re.compile(str(regex), re.IGNORECASE)
        except re.error as exc:
            raise RoutingError(f"{where} ({name}): bad regex: {exc}") from exc
        fields = tuple(item.get("fields") or RULE_FIELDS)
        if unknown := [f for f in fields if f not in RULE_FIELDS]:
            raise RoutingError(f"{where} ({name}): unknown field {unknown[0]!r}")
        boost = tuple(str(c) for c in item.get("boost") or ())
        exclude = tuple(str(c) for c in item.get("exclude") or ())
        if not boost and not exclude:
            raise RoutingError(f"{where} ({name}): needs `boost` or `exclude`")
        if unknown := [c for c in (*boost, *exclude) if c not in known]:
            raise RoutingError(
                f"{where} ({name}): unknown collection {unknown[0]!r} (known: {', '.join(known)})"
            )
        rules.append(Rule(name, pattern, fields, boost, exclude))
    return tuple(rules)


@dataclass(frozen=True)
class BranchClassifier:
    """Multinomial logistic regression from a section vector to its CRE's collection."""

    classes: tuple[str, ...]
    weights: NDArray[np.float64]  # (classes, dimension)
    bias: NDArray[np.float64]  # (classes,)
    card: Mapping[str, Any] = field(default_factory=dict)

    def probabilities(self, vectors: NDArray[np.float32]) -> NDArray[np.float64]:
        if vectors.shape[1] != self.weights.shape[1]:
            raise RoutingError(
                f"classifier expects {self.weights.shape[1]}-dim vectors, got {vectors.shape[1]}"
            )
        logits = vectors.astype(np.float64) @ self.weights.T + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return np.asarray(exp / exp.sum(axis=1, keepdims=True))

    @classmethod
    def fit(
        cls, vectors: NDArray[np.float32], labels: Sequence[str], card: Mapping[str, Any]
    ) -> BranchClassifier:
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=4.0, max_iter=2000)
        model.fit(vectors, list(labels))
        classes = tuple(str(c) for c in model.classes_)
        if len(classes) == 2:  # sklearn keeps one row for two classes; make it softmax-shaped
            weights = np.vstack([-model.coef_[0] / 2, model.coef_[0] / 2])
            bias = np.array([-model.intercept_[0] / 2, model.intercept_[0] / 2])
        else:
            weights, bias = model.coef_, model.intercept_
        return cls(classes, np.asarray(weights, np.float64), np.asarray(bias, np.float64), card)

    def save(self, path: Path) -> None:
        payload = {
            "classes": list(self.classes),
            "weights": self.weights.round(8).tolist(),
            "bias": self.bias.round(8).tolist(),
            "card": dict(self.card),
        }
        path.write_text(json.dumps(payload) + "\n")

    @classmethod
    def load(cls, path: Path) -> BranchClassifier:
        try:
            payload = json.loads(path.read_text())
            classes = tuple(str(c) for c in payload["classes"])
            weights = np.asarray(payload["weights"], dtype=np.float64)
            bias = np.asarray(payload["bias"], dtype=np.float64)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RoutingError(f"branch classifier {path} is damaged: {exc}") from exc
        if weights.ndim != 2 or weights.shape[0] != len(classes) or bias.shape != (len(classes),):
            raise RoutingError(f"branch classifier {path}: shapes do not match its classes")
        return cls(classes, weights, bias, payload.get("card", {}))


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
                f"--collections {', '.join(self.pin)}: no such collection "
                f"(known: {', '.join(self.names)})"
            )

    def allowed(self, decision: RoutingDecision) -> frozenset[str] | None:
        """The CRE ids the section may be linked to; None = the whole hub."""
        if set(decision.selected) == set(self.collections):
            return None
        return frozenset().union(*(self.collections[c] for c in decision.selected))

    def route(self, section: Section, vector: NDArray[np.float32] | None) -> RoutingDecision:
        warnings: list[str] = []

        def done(strategy: Strategy, selected: Sequence[str], reasons: Mapping[str, str],
                 scores: Mapping[str, float] | None = None, widened: bool = False,
                 ) -> RoutingDecision:  # fmt: skip
            chosen = set(selected)
            return RoutingDecision(
                chunk_id=section.chunk_id,
                line=section.line,
                configured=self.mode,
                effective=strategy,
                selected=[c for c in self.names if c in chosen],
                collections=[
                    CollectionScore(
                        collection=c,
                        selected=c in chosen,
                        score=None if scores is None else round(float(scores[c]), 6),
                        reason=reasons.get(c, "searched" if c in chosen else "not selected"),
                    )
                    for c in self.names
                ],
                widened=widened,
                warnings=warnings,
            )

        def widen(cause: str, scores: Mapping[str, float] | None = None) -> RoutingDecision:
            warnings.append(f"{cause}: searching all collections")
            return done("all", self.names, {}, scores, widened=True)

        if self.mode == "off":
            return done("all", self.names, {c: "routing off" for c in self.names})

        pin = tuple(section.collections or ()) or self.pin
        if pin:
            source = "input" if section.collections else "--collections"
            known = [p for p in pin if p in self.collections]
            if unknown := [p for p in pin if p not in self.collections]:
                warnings.append(f"pin ({source}) names unknown collection(s) {', '.join(unknown)}")
            if not known:
                return widen(f"pin ({source}) names no known collection")
            return done("pin", known, {c: f"pinned by {source}" for c in known})

        matched = [r for r in self.rules if r.matches(section)]
        if matched:
            boosted = [c for r in matched for c in r.boost]
            excluded = {c for r in matched for c in r.exclude}
            reasons = {c: f"excluded by rule {r.name}" for r in matched for c in r.exclude}
            for r in matched:
                for c in r.boost:
                    reasons.setdefault(c, f"boosted by rule {r.name}")
            selected = [c for c in (boosted or self.names) if c not in excluded]
            if not selected:
                return widen(f"rules {', '.join(r.name for r in matched)} left no collection")
            return done("rules", selected, reasons)

        if self.mode == "auto" and self.classifier is None:
            return widen("mode auto but no trained branch classifier (run `librarian train`)")
        if self.mode == "auto" and self.classifier is not None:
            if vector is None:
                return widen("classifier has no vector for this section")
            try:
                probs = self.classifier.probabilities(vector.reshape(1, -1))[0]
                scores = {c: 0.0 for c in self.names}
                for cls, p in zip(self.classifier.classes, probs, strict=True):
                    if cls not in scores:
                        raise RoutingError(f"classifier knows collection {cls!r}, the hub does not")
                    scores[cls] = float(p)
            except (RoutingError, ValueError) as exc:
                return widen(f"classifier error ({exc})")
            ranked = sorted(self.names, key=lambda c: (-scores[c], c))
            if scores[ranked[0]] <= MIN_CONFIDENCE:
                return widen(
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
            return done("classifier", selected, reasons, scores)

        return done(
            "all", self.names, {c: "no pin, rule or classifier applies" for c in self.names}
        )
