"""The bi-encoder as an int8 ONNX graph run by onnxruntime: the torch model's vectors to
~0.99 cosine, faster on CPU (docs/benchmarks.md has the measured ratio).

`librarian quantize` (models/quantize.py) writes the directory this reads: `model.onnx`,
`tokenizer.json` and `card.json` (models/built_card.py). Nothing here executes code from
the directory: an ONNX graph and JSON.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from librarian.models.built_card import TOKENIZER_NAME, encoder_fingerprint, read_card
from librarian.models.seams import ModelError, Vectors
from librarian.models.tokens import CountingTokenizer

ONNX_MODEL_NAME = "model.onnx"
ENCODE_PROCEDURE = "one text a call, mean pooling, L2 norm"


def is_onnx_dir(path: Path) -> bool:
    return (path / ONNX_MODEL_NAME).is_file()


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence vectors from an exported ONNX encoder."""

    def __init__(self, path: Path, threads: int | None = None) -> None:
        card = read_card(path)
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a broken install
            raise ModelError(f"the ONNX backend needs onnxruntime: {exc}") from exc
        self.path = path
        self.card = card
        self.max_tokens = int(card["max_tokens"])
        self.dimension = int(card["dimension"])
        self.name = f"{card['source']['name']} {card['backend']}"
        self.fingerprint = encoder_fingerprint(card, ENCODE_PROCEDURE)
        self._tokens = CountingTokenizer(path / TOKENIZER_NAME, self.max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(
                str(path / ONNX_MODEL_NAME), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ModelError(f"ONNX model {path} could not be loaded: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}

    def encode(self, texts: Sequence[str]) -> Vectors:
        # One text a call: dynamic int8 quantises activations with one scale per call, so in
        # a batch a text's vector would depend on its neighbours (min cosine ~0.987 between
        # the two). Alone, a vector is a function of its text (caching by content hash and
        # Dask's row-for-row equality rely on that), there is no padding, and it costs ~10%.
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = np.asarray([self._tokens.ids(text)], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            pooled = self._session.run(None, feeds)[0][0].mean(axis=0)
            out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out

    def truncated(self, texts: Sequence[str]) -> list[int]:
        """Which texts the model would cut; each text is tokenized once, not twice."""
        return self._tokens.truncated(texts)
