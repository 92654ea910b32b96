"""The bi-encoder as an OpenVINO model (the fp32 export in OpenVINO's own IR), run in bf16
where the CPU has it (AMX, AVX-512 BF16), else fp32; texts in batches sorted by length.

Not the default: on a CPU where it wins (1.62x the int8 ONNX one on the project machine)
a team builds it with `librarian train --encoder openvino`; on another CPU with the same
flags it measured slower (docs/benchmarks.md, "Encoder choices"), so no flag can choose it
and `scripts/bench_encoders.py` says which a machine should use. Its vectors agree with
torch fp32 to 1.0000 cosine and depend on their text alone, not on their batch. The
directory holds `model.xml` (a graph, XML), `model.bin` (weights), `tokenizer.json` and
`card.json` (models/built_card.py): nothing executes code.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from librarian.models.built_card import TOKENIZER_NAME, encoder_fingerprint, read_card
from librarian.models.seams import ModelError, Vectors
from librarian.models.tokens import CountingTokenizer

OPENVINO_MODEL_NAME = "model.xml"
OPENVINO_WEIGHTS_NAME = "model.bin"
# Sorted by token length, so a batch pads little; 32 measured fastest (bench_encoders.py).
BATCH = 32
ENCODE_PROCEDURE = f"sorted batches of {BATCH}, masked mean pooling, L2 norm"


def is_openvino_dir(path: Path) -> bool:
    return (path / OPENVINO_MODEL_NAME).is_file()


def openvino_runtime() -> Any:
    """The `openvino` module, its usage reports off. OpenVINO sends an event to Intel's
    telemetry on every import (and writes ~/intel/) unless a consent file there says no;
    when its telemetry package cannot be imported it uses its own no-op stub instead. A
    security team's tool reports nothing anywhere, so that package is made unimportable."""
    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]
    try:
        import openvino
    except ImportError as exc:
        raise ModelError(
            "this embedder was built for OpenVINO, which is not installed here: "
            "pip install 'librarian[openvino]', or train with the default --encoder int8"
        ) from exc
    return openvino


def precision_of(core: Any) -> str:
    """bf16 where the CPU computes it natively, else fp32 (the card of the models says which
    a run used: their vectors differ in the fourth decimal)."""
    return "bf16" if "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES") else "f32"


def masked_mean(hidden: np.ndarray, mask: np.ndarray) -> Vectors:
    """Each row's mean over its own tokens, L2-normalised: padding changes nothing."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    norms = np.maximum(np.linalg.norm(summed, axis=1, keepdims=True), 1e-12)
    return np.asarray(summed / norms, dtype=np.float32)


class OpenVinoEmbedder:
    """Mean-pooled, L2-normalised sentence vectors from an OpenVINO build of the encoder."""

    def __init__(self, path: Path) -> None:
        card = read_card(path)
        runtime = openvino_runtime()
        self.path = path
        self.card = card
        self.max_tokens = int(card["max_tokens"])
        self.dimension = int(card["dimension"])
        core = runtime.Core()
        self.precision = precision_of(core)
        self.name = f"{card['source']['name']} {card['backend']} ({self.precision})"
        self.fingerprint = encoder_fingerprint(card, f"{ENCODE_PROCEDURE}, {self.precision}")
        self._tokens = CountingTokenizer(path / TOKENIZER_NAME, self.max_tokens)
        try:
            self._model = core.compile_model(
                core.read_model(str(path / OPENVINO_MODEL_NAME)),
                "CPU",
                {"INFERENCE_PRECISION_HINT": self.precision},
            )
        except Exception as exc:
            raise ModelError(f"OpenVINO model {path} could not be loaded: {exc}") from exc
        self._inputs = [i.get_any_name() for i in self._model.inputs]

    def encode(self, texts: Sequence[str]) -> Vectors:
        ids = [self._tokens.ids(text) for text in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            out[rows] = self._batch([ids[i] for i in rows])
        return out

    def truncated(self, texts: Sequence[str]) -> list[int]:
        """Which texts the model would cut; each text is tokenized once, not twice."""
        return self._tokens.truncated(texts)

    def _batch(self, ids: list[list[int]]) -> Vectors:
        width = max(len(x) for x in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros_like(tokens)
        for row, x in enumerate(ids):
            tokens[row, : len(x)], mask[row, : len(x)] = x, 1
        feeds = {
            "input_ids": tokens,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(tokens),
        }
        hidden = self._model({name: feeds[name] for name in self._inputs})[self._model.outputs[0]]
        return masked_mean(np.asarray(hidden), mask)
