"""Which embedder a directory holds, loaded: the one way run-time code gets a model."""

from __future__ import annotations

from pathlib import Path

from librarian.models.onnx_embedder import OnnxEmbedder, is_onnx_dir
from librarian.models.seams import Embedder
from librarian.models.transformer import SentenceTransformerEmbedder


def load_embedder(path: Path | None = None) -> Embedder:
    """The embedder a directory holds: an int8 ONNX build (`librarian quantize`) or a
    sentence-transformers model; None = the packaged MiniLM."""
    if path is not None and is_onnx_dir(path):
        return OnnxEmbedder(path)
    return SentenceTransformerEmbedder(path)
