"""Model seams: the small Protocols the stages depend on, so unit tests swap in stubs.

The implementations live beside this module: `transformer` (torch), `onnx_embedder`
(int8 ONNX), `cache` (vectors by content hash); `load` picks one for a directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from librarian.errors import UsageError

# Longest text handed to a tokenizer: far past any model's window (256 tokens here),
# so cutting there changes nothing the model sees while sparing 50,000-char controls.
MAX_MODEL_CHARS = 4000

Vectors = NDArray[np.float32]


class Embedder(Protocol):
    name: str
    fingerprint: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised float32 vectors, one row per text."""
        ...

    def truncated(self, texts: Sequence[str]) -> list[int]:
        """The positions of the `texts` the model cannot see whole."""
        ...


class PairScorer(Protocol):
    name: str

    def predict(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """A relevance in [0, 1] for each (query, candidate) pair."""
        ...


class ModelError(UsageError):
    """A model could not be loaded or used; the message says which and why."""


class VectorCache(Protocol):
    """Vectors by key, kept between runs (`cache.SqliteVectorCache`)."""

    def get(self, keys: Sequence[str]) -> dict[str, NDArray[np.float32]]: ...

    def put(self, items: dict[str, NDArray[np.float32]]) -> None: ...
