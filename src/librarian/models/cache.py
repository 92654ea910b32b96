"""An Embedder that remembers: vectors by content hash, so unchanged text costs nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from librarian.models.seams import MAX_MODEL_CHARS, Embedder, VectorCache, Vectors


class CachingEmbedder:
    """An Embedder that asks `cache` first, by the content hash of each text under this
    model: a re-run over unchanged sections does no model work."""

    def __init__(self, inner: Embedder, cache: VectorCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.fingerprint = inner.fingerprint
        self.dimension = inner.dimension
        self.hits = 0
        self.misses = 0

    def key(self, text: str) -> str:
        material = f"{self.fingerprint}\x00{text[:MAX_MODEL_CHARS]}"
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def encode(self, texts: Sequence[str]) -> Vectors:
        keys = [self.key(t) for t in texts]
        found = self.cache.get(sorted(set(keys)))
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            first_text = {k: t for k, t in zip(keys, texts, strict=True)}
            fresh = self.inner.encode([first_text[k] for k in missing])
            computed = dict(zip(missing, fresh, strict=True))
            self.cache.put(computed)
            found = {**found, **computed}
        self.hits += sum(1 for k in keys if k not in missing)
        self.misses += len(missing)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, k in enumerate(keys):
            out[row] = found[k]
        return out

    def count_truncated(self, texts: Sequence[str]) -> int:
        return self.inner.count_truncated(texts)
