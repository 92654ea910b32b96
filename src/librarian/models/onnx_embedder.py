"""The bi-encoder as an int8 ONNX graph run by onnxruntime: the torch model's vectors to
~0.99 cosine, faster on CPU (docs/benchmarks.md has the measured ratio).

`librarian quantize` (pipeline/quantize.py) writes the directory this reads: `model.onnx`,
`tokenizer.json` and `card.json` (the source model, how it was built, how closely it
agrees with it, and the sha256 of each file, checked on load). Nothing here executes
code from the directory: an ONNX graph and JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from librarian.integrity import files_problem
from librarian.models.seams import MAX_MODEL_CHARS, ModelError, Vectors

ONNX_MODEL_NAME = "model.onnx"
TOKENIZER_NAME = "tokenizer.json"
ONNX_CARD_NAME = "card.json"
ENCODE_PROCEDURE = "one text a call, mean pooling, L2 norm"


def is_onnx_dir(path: Path) -> bool:
    return (path / ONNX_MODEL_NAME).is_file()


def card_digest(card: dict[str, Any]) -> str:
    """sha256 of the card's canonical JSON without its own digest: the card is sealed, as
    the models card is (an edited `max_tokens` would silently change every answer)."""
    body = {k: v for k, v in card.items() if k != "card_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


def sealed(card: dict[str, Any]) -> dict[str, Any]:
    return {**card, "card_sha256": card_digest(card)}


def read_onnx_card(path: Path) -> dict[str, Any]:
    """The card, sealed and unchanged, with every file it lists checked against its sha256."""
    card_path = path / ONNX_CARD_NAME
    try:
        card: dict[str, Any] = json.loads(card_path.read_text())
        files: dict[str, str] = card["files"]
        seal = card.get("card_sha256")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"ONNX model {path}: {ONNX_CARD_NAME} missing or damaged: {exc}") from exc
    if seal != card_digest(card):
        raise ModelError(
            f"ONNX model {path}: {ONNX_CARD_NAME} was changed after it was built (or built "
            "before cards were sealed); rebuild it: `librarian quantize` (`librarian train` "
            "rebuilds the default one)"
        )
    if problem := files_problem(path, files):
        raise ModelError(f"ONNX model {path}: {problem}")
    return card


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence vectors from an exported ONNX encoder."""

    def __init__(self, path: Path, threads: int | None = None) -> None:
        card = read_onnx_card(path)
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - a broken install
            raise ModelError(f"the ONNX backend needs onnxruntime: {exc}") from exc
        self.path = path
        self.card = card
        self.max_tokens = int(card["max_tokens"])
        self.dimension = int(card["dimension"])
        self.name = f"{card['source']['name']} {card['backend']}"
        # Cached hub and section vectors are keyed by this: it names the files *and* how
        # they are run, so vectors made another way (batched, before) are never reused.
        self.fingerprint = hashlib.sha256(
            json.dumps(
                {"files": card["files"], "encode": ENCODE_PROCEDURE}, sort_keys=True
            ).encode()
        ).hexdigest()
        tokenizer = Tokenizer.from_file(str(path / TOKENIZER_NAME))
        # The tokenizer file pads every text to 128 tokens; one text a call needs no padding.
        tokenizer.no_padding()
        self._counter = Tokenizer.from_file(str(path / TOKENIZER_NAME))
        self._counter.no_padding()
        self._counter.no_truncation()
        tokenizer.enable_truncation(self.max_tokens)
        self._tokenizer = tokenizer
        self._counted: dict[str, list[int]] = {}  # whole ids of texts `truncated` counted
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
            ids = np.asarray([self._ids(text[:MAX_MODEL_CHARS])], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            pooled = self._session.run(None, feeds)[0][0].mean(axis=0)
            out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out

    def truncated(self, texts: Sequence[str]) -> list[int]:
        """Which texts the model would cut. Their whole token ids are kept for the next
        `encode` of the same texts (the embed stage asks this first): each text is
        tokenized once, not twice."""
        cut = [t[:MAX_MODEL_CHARS] for t in texts]
        encodings = self._counter.encode_batch(cut)
        self._counted = {text: e.ids for text, e in zip(cut, encodings, strict=True)}
        return [i for i, e in enumerate(encodings) if len(e.ids) > self.max_tokens]

    def _ids(self, text: str) -> list[int]:
        """The ids the truncating tokenizer gives `text`: from the whole ids `truncated`
        counted (the first max_tokens - 1 and the closing marker), else tokenized now."""
        whole = self._counted.pop(text, None)
        if whole is None:
            return list(self._tokenizer.encode(text).ids)
        if len(whole) <= self.max_tokens:
            return list(whole)
        return [*whole[: self.max_tokens - 1], whole[-1]]
