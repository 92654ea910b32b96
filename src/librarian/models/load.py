"""Which embedder a directory holds, loaded: the one way run-time code gets a model."""

from __future__ import annotations

from pathlib import Path

from librarian.models.onnx_embedder import ONNX_MODEL_NAME, OnnxEmbedder, is_onnx_dir
from librarian.models.openvino_embedder import (
    OPENVINO_MODEL_NAME,
    OpenVinoEmbedder,
    is_openvino_dir,
)
from librarian.models.seams import Embedder
from librarian.models.transformer import SentenceTransformerEmbedder

# A directory holding one of these is an embedder `load_embedder` can read.
EMBEDDER_MARKS = ("config.json", ONNX_MODEL_NAME, OPENVINO_MODEL_NAME)


def load_embedder(path: Path | None = None) -> Embedder:
    """The embedder a directory holds: an int8 ONNX or OpenVINO build (`librarian
    quantize`), or a sentence-transformers model; None = the packaged MiniLM."""
    if path is not None and is_onnx_dir(path):
        return OnnxEmbedder(path)
    if path is not None and is_openvino_dir(path):
        return OpenVinoEmbedder(path)
    return SentenceTransformerEmbedder(path)
