"""Builds an embedder (`librarian quantize`, `train --encoder`): export the
sentence-transformers bi-encoder's transformer to ONNX, then either fuse attention for
onnxruntime and quantise the weights to int8 per channel (dynamic activations: `int8`, the
default), or convert the fp32 graph to OpenVINO's IR (`openvino`, run in bf16 where the
CPU has it); check the result against the source model on the hub's own texts before
writing it.

Build-time only: torch, transformers, onnx and onnxruntime's tools are imported inside.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from librarian.errors import RunError
from librarian.integrity import sha256_of
from librarian.models.built_card import CARD_NAME, TOKENIZER_NAME, sealed
from librarian.models.encoders import Encoder
from librarian.models.load import load_embedder
from librarian.models.onnx_embedder import ONNX_MODEL_NAME
from librarian.models.openvino_embedder import (
    OPENVINO_MODEL_NAME,
    OPENVINO_WEIGHTS_NAME,
    openvino_runtime,
)
from librarian.models.seams import Vectors
from librarian.models.transformer import SentenceTransformerEmbedder, model_fingerprint

BACKENDS: dict[str, str] = {"int8": "onnx-int8", "openvino": "openvino-ir"}
# Below this the int8 vectors are not the source model's any more: refuse to write them.
MIN_MEAN_COSINE = 0.98


def _export_fp32(source: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    # Eager attention exports as plain ops that onnxruntime's optimizer fuses; the default
    # SDPA path exports as a graph it cannot fuse and runs slower than torch.
    model = AutoModel.from_pretrained(
        str(source), local_files_only=True, attn_implementation="eager"
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = tokenizer(
        ["a short text", "a somewhat longer text to pad"], return_tensors="pt", padding=True
    )
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad(), warnings.catch_warnings():
        # Tracing warns about shape-dependent Python branches; the dynamic axes cover them.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model),
            tuple(sample[n] for n in names),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )


def _fuse_and_quantise(
    fp32: Path, target: Path, heads: int, hidden: int, keep_float: Sequence[str] = ()
) -> dict[str, int]:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    fused_path = fp32.with_name("fused.onnx")
    fused = optimizer.optimize_model(
        str(fp32), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1
    )
    fused.save_model_to_file(str(fused_path))
    statistics = {k: int(v) for k, v in fused.get_fused_operator_statistics().items() if v}
    # onnxruntime logs a pre-processing hint on the root logger for every model.
    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(
        str(fused_path),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,  # per-tensor int8 drops agreement to ~0.95 mean cosine
        nodes_to_exclude=[n for n in _node_names(fused_path) if any(k in n for k in keep_float)],
        # Fused ops hide some tensor types from shape inference; those are float.
        extra_options={"DefaultTensorType": 1},
    )
    return statistics


def _to_openvino(fp32: Path, target_dir: Path) -> dict[str, int]:
    runtime = openvino_runtime()
    # The runtime's own ONNX reader, not `convert_model`: the converter reports usage to
    # Intel's telemetry unless a consent file says no, and a build sends nothing anywhere.
    # Weights stay fp32 on disk: the run picks bf16 or fp32 for the CPU it is on.
    runtime.save_model(
        runtime.Core().read_model(str(fp32)),
        str(target_dir / OPENVINO_MODEL_NAME),
        compress_to_fp16=False,
    )
    return {}


def _build_graph(
    encoder: Encoder, fp32: Path, staging: Path, config: dict[str, Any], keep_float: Sequence[str]
) -> tuple[dict[str, int], tuple[str, ...]]:
    """The graph files for `encoder` written into `staging`; (fused operators, file names)."""
    if encoder == "openvino":
        return _to_openvino(fp32, staging), (OPENVINO_MODEL_NAME, OPENVINO_WEIGHTS_NAME)
    fused = _fuse_and_quantise(
        fp32,
        staging / ONNX_MODEL_NAME,
        int(config["num_attention_heads"]),
        int(config["hidden_size"]),
        keep_float,
    )
    return fused, (ONNX_MODEL_NAME,)


def _node_names(path: Path) -> list[str]:
    import onnx

    return [node.name for node in onnx.load(str(path)).graph.node]


def agreement(a: Vectors, b: Vectors) -> dict[str, float]:
    cosines = (a * b).sum(axis=1)
    return {
        "mean_cosine": round(float(cosines.mean()), 5),
        "min_cosine": round(float(cosines.min()), 5),
    }


class QuantizeError(RunError):
    """The build failed, or came out too far from the source model to ship."""


BUILD_STEPS = {
    "int8": "onnxruntime quantize_dynamic, QInt8 weights per channel",
    "openvino": "openvino convert_model of the fp32 graph, fp32 weights; bf16 or f32 at run",
}


def _card(
    encoder: Encoder,
    reference: SentenceTransformerEmbedder,
    fused: dict[str, int],
    files: dict[str, str],
) -> dict[str, Any]:
    return {
        "backend": BACKENDS[encoder],
        "source": {
            "name": reference.name,
            "path": str(reference.path),
            "fingerprint": model_fingerprint(reference.path),
        },
        "dimension": reference.dimension,
        "max_tokens": reference.max_tokens,
        "pooling": "mean, L2-normalised",
        "build": {
            "export": "torch.onnx.export (TorchScript), opset 17, eager attention",
            "fused_operators": fused,
            "quantisation": BUILD_STEPS[encoder],
        },
        "files": files,
    }


def quantize(
    out_dir: Path,
    probe_texts: Sequence[str],
    source: Path | None = None,
    keep_float: Sequence[str] = (),
    encoder: Encoder = "int8",
) -> dict[str, Any]:
    """Write the `encoder` build of the embedder to `out_dir`; returns its card. Refuses
    (QuantizeError) when its vectors of `probe_texts` disagree with the source model's."""
    started = time.perf_counter()
    reference = SentenceTransformerEmbedder(source)
    config = json.loads((reference.path / "config.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / "model"
        staging.mkdir()
        fp32 = Path(tmp) / "fp32.onnx"
        try:
            _export_fp32(reference.path, fp32)
            fused, graph_files = _build_graph(encoder, fp32, staging, config, keep_float)
        except Exception as exc:
            raise QuantizeError(f"{encoder} build of {reference.path} failed: {exc}") from exc
        shutil.copyfile(reference.path / TOKENIZER_NAME, staging / TOKENIZER_NAME)
        files = {name: sha256_of(staging / name) for name in (*graph_files, TOKENIZER_NAME)}
        card = sealed(_card(encoder, reference, fused, files))
        (staging / CARD_NAME).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
        built = load_embedder(staging)
        agreed = agreement(built.encode(probe_texts), reference.encode(probe_texts))
        if agreed["mean_cosine"] < MIN_MEAN_COSINE:
            raise QuantizeError(
                f"{encoder} vectors agree with {reference.name} at mean cosine "
                f"{agreed['mean_cosine']} < {MIN_MEAN_COSINE}: not written"
            )
        card["agreement"] = {"probe": f"{len(probe_texts)} texts", **agreed}
        card["seconds"] = round(time.perf_counter() - started, 1)
        card = sealed(card)
        (staging / CARD_NAME).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, out_dir)
    return card
