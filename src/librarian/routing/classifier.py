"""The branch classifier `--routing auto` uses: section vector -> collection, saved as JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from librarian.routing.collections import RoutingError

ROUTER_NAME = "router.json"


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
