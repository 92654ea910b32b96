"""The hub index: each hub's vectors for its name, its hierarchy path, and its name
followed by its children's names, computed once per (model, hub content) and cached on
disk as npz (no pickle: nothing executes on load)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from librarian.catalogue.hub import Hub
from librarian.models.seams import Embedder, Vectors


@dataclass(frozen=True)
class HubIndex:
    ids: tuple[str, ...]
    name_vectors: Vectors
    path_vectors: Vectors
    children_vectors: Vectors
    model_fingerprint: str
    hub_hash: str

    @property
    def dimension(self) -> int:
        return int(self.name_vectors.shape[1])


_CACHE_VERSION = "v2"


def cache_file(cache_dir: Path, embedder: Embedder, hub: Hub) -> Path:
    return (
        cache_dir / f"hub-{_CACHE_VERSION}-{embedder.fingerprint[:16]}-{hub.content_hash[:16]}.npz"
    )


def build_index(hub: Hub, embedder: Embedder, cache_dir: Path | None) -> HubIndex:
    """Load the hub index from the cache, or embed the hub and cache it."""
    path = cache_file(cache_dir, embedder, hub) if cache_dir else None
    if path is not None and path.is_file():
        cached = _load(path, hub, embedder)
        if cached is not None:
            return cached
    index = HubIndex(
        ids=hub.ids,
        name_vectors=embedder.encode(hub.name_texts()),
        path_vectors=embedder.encode(hub.path_texts()),
        children_vectors=embedder.encode(hub.children_texts()),
        model_fingerprint=embedder.fingerprint,
        hub_hash=hub.content_hash,
    )
    if path is not None:
        _save(path, index)
    return index


def _load(path: Path, hub: Hub, embedder: Embedder) -> HubIndex | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            ids = tuple(str(i) for i in data["ids"])
            names = data["name_vectors"].astype(np.float32)
            paths = data["path_vectors"].astype(np.float32)
            children = data["children_vectors"].astype(np.float32)
    except (OSError, KeyError, ValueError):
        return None  # a damaged cache is rebuilt, not trusted
    shape = (len(ids), embedder.dimension)
    if ids != hub.ids or not names.shape == paths.shape == children.shape == shape:
        return None
    return HubIndex(ids, names, paths, children, embedder.fingerprint, hub.content_hash)


def _save(path: Path, index: HubIndex) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.part")
    with os.fdopen(fd, "wb") as handle:
        np.savez(
            handle,
            ids=np.array(index.ids),
            name_vectors=index.name_vectors,
            path_vectors=index.path_vectors,
            children_vectors=index.children_vectors,
        )
    os.replace(tmp, path)
