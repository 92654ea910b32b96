"""The encoder options of issue 39, item 5, side by side on the same distinct texts: texts a
second, the ratio to the shipped one, and whether each text's vector depends on its text
alone (the vector cache and Dask's row-for-row equality rely on it).

    python scripts/bench_encoders.py [--texts 600] [--batch 32]

The texts are `bench_throughput.py`'s (unlinked controls cut into spans of at most 1,200
characters), as the run embeds them (`query_text`). The options:
- the shipped int8 ONNX, one text a call (what `librarian run` does);
- the same int8 graph, length-sorted batches of `--batch` (dynamic quantisation scales
  each call's activations together: a text's vector depends on its batch);
- static int8 (QDQ, activations calibrated on 100 other texts), batched;
- OpenVINO on the fp32 export, bf16 where the CPU has it (AMX), one a call and batched.
  The `openvino` extra: without it importable the script says so and measures the rest.
Each option's vectors are compared with torch fp32 (mean and minimum cosine), and each
batched option's with its own vectors of the same texts one a call (minimum cosine).
The CPU's flags are printed. Build-time work (export, calibration) is not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from bench_throughput import build_queue

from librarian.models.built_card import TOKENIZER_NAME
from librarian.models.onnx_embedder import OnnxEmbedder
from librarian.models.openvino_embedder import masked_mean, openvino_runtime
from librarian.models.quantize import _export_fp32
from librarian.models.seams import ModelError
from librarian.models.transformer import SentenceTransformerEmbedder
from librarian.paths import librarian_home
from librarian.pipeline.ingest import parse_line, query_text
from librarian.schemas.records import Section

Encode = Callable[[Sequence[str]], np.ndarray]


def texts_of(n: int, tmp: Path) -> list[str]:
    queue = tmp / "queue.jsonl"
    build_queue(n, queue)
    out = []
    for number, raw in enumerate(queue.read_bytes().splitlines(), start=1):
        parsed = parse_line(number, raw)
        assert isinstance(parsed, Section)
        out.append(query_text(parsed))
    return out[:n]


class Graph:
    """An ONNX graph on onnxruntime with the shipped tokenizer: one a call, or batched."""

    def __init__(self, model: Path, tokenizer_dir: Path, max_tokens: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_dir / TOKENIZER_NAME))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def feeds(self, ids: list[list[int]]) -> dict[str, np.ndarray]:
        width = max(len(x) for x in ids)
        array = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros_like(array)
        for row, x in enumerate(ids):
            array[row, : len(x)], mask[row, : len(x)] = x, 1
        feeds = {"input_ids": array, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(array)
        return feeds

    def batched(self, size: int) -> Encode:
        def run(ids: list[list[int]]) -> np.ndarray:
            feeds = self.feeds(ids)
            return masked_mean(self.session.run(None, feeds)[0], feeds["attention_mask"])

        return lambda texts: sorted_batches(self, texts, size, run)


def sorted_batches(
    graph: Graph, texts: Sequence[str], size: int, run: Callable[[list[list[int]]], np.ndarray]
) -> np.ndarray:
    """`texts` encoded by `run` in batches of `size`, by token length (least padding)."""
    ids = [e.ids for e in graph.tokenizer.encode_batch(list(texts))]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for start in range(0, len(order), size):
        rows = order[start : start + size]
        out[rows] = run([ids[i] for i in rows])
    return out


def static_int8(fp32: Path, target: Path, graph: Graph, calibration: Sequence[str]) -> None:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.items = iter([graph.feeds([graph.tokenizer.encode(t).ids]) for t in calibration])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.items, None)

    quantize_static(
        str(fp32),
        str(target),
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        weight_type=QuantType.QInt8,
        activation_type=QuantType.QUInt8,
    )


def openvino_encoders(fp32: Path, graph: Graph, size: int) -> dict[str, Encode] | str:
    try:
        ov = openvino_runtime()
    except ModelError:
        return "openvino is not installed here (pip install 'librarian[openvino]' to measure it)"
    core = ov.Core()
    flags = set(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    precision = "bf16" if "BF16" in flags else "f32"
    compiled = core.compile_model(
        core.read_model(str(fp32)), "CPU", {"INFERENCE_PRECISION_HINT": precision}
    )

    def run(ids: list[list[int]]) -> np.ndarray:
        feeds = graph.feeds(ids)
        wanted = {i.get_any_name(): feeds[i.get_any_name()] for i in compiled.inputs}
        hidden = compiled(wanted)[compiled.outputs[0]]
        return masked_mean(np.asarray(hidden), feeds["attention_mask"])

    def one(texts: Sequence[str]) -> np.ndarray:
        return np.vstack([run([graph.tokenizer.encode(t).ids]) for t in texts])

    def batched(texts: Sequence[str]) -> np.ndarray:
        return sorted_batches(graph, texts, size, run)

    return {
        f"OpenVINO {precision}, one a call": one,
        f"OpenVINO {precision}, sorted batches of {size}": batched,
    }


def timed(encode: Encode, texts: Sequence[str]) -> tuple[float, np.ndarray]:
    encode(texts[:16])  # warm: the first call allocates
    started = time.perf_counter()
    vectors = encode(texts)
    return len(texts) / (time.perf_counter() - started), vectors


def cosines(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    sims = (a * b).sum(axis=1)
    return float(sims.mean()), float(sims.min())


def cpu_flags() -> str:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = re.search(r"model name\s*:\s*(.+)", text)
    flags = sorted(set(re.findall(r"\b(avx512_vnni|avx512_bf16|amx_\w+|avx2|avx512f)\b", text)))
    return f"{model.group(1) if model else '?'}, {os.cpu_count()} cores; {' '.join(flags)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--models", type=Path, default=librarian_home().models)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    shipped_dir = args.models / "embedder-int8"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        texts = texts_of(args.texts + 100, work)
        calibration, texts = texts[:100], texts[100:]
        torch_model = SentenceTransformerEmbedder()
        reference = torch_model.encode(texts)
        shipped = OnnxEmbedder(shipped_dir)
        max_tokens = shipped.max_tokens
        fp32 = work / "fp32.onnx"
        _export_fp32(torch_model.path, fp32)
        int8 = Graph(shipped_dir / "model.onnx", shipped_dir, max_tokens)
        qdq_path = work / "qdq.onnx"
        static_int8(fp32, qdq_path, Graph(fp32, shipped_dir, max_tokens), calibration)
        qdq = Graph(qdq_path, shipped_dir, max_tokens)
        size = args.batch
        options: dict[str, Encode] = {
            "torch fp32 (sentence-transformers), batches of 32": torch_model.encode,
            "shipped int8 ONNX, one a call": shipped.encode,
            f"the same int8 graph, sorted batches of {size}": int8.batched(size),
            "static int8 (QDQ), one a call": qdq.batched(1),
            f"static int8 (QDQ), sorted batches of {size}": qdq.batched(size),
        }
        extra = openvino_encoders(fp32, Graph(fp32, shipped_dir, max_tokens), size)
        if isinstance(extra, str):
            print(extra)
        else:
            options.update(extra)
        report(options, texts, reference)


def report(options: dict[str, Encode], texts: Sequence[str], reference: np.ndarray) -> None:
    print(f"{len(texts)} distinct texts; {cpu_flags()}")
    rates: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for name, encode in options.items():
        rates[name], vectors[name] = timed(encode, texts)
    shipped = rates["shipped int8 ONNX, one a call"]
    print(
        "| option | texts/s | x shipped | cosine to torch (mean / min) | batch-free (min cosine) |"
    )
    print("|---|---:|---:|---|---|")
    names = list(rates)
    for at, (name, rate) in enumerate(rates.items()):
        mean, low = cosines(vectors[name], reference)
        free = "one a call" if "one a call" in name else "-"
        if "batches" in name and at and "one a call" in names[at - 1]:  # its twin, just above
            free = f"{cosines(vectors[name], vectors[names[at - 1]])[1]:.4f}"
        print(f"| {name} | {rate:.1f} | {rate / shipped:.2f} | {mean:.4f} / {low:.4f} | {free} |")
    print(json.dumps({n: round(r, 1) for n, r in rates.items()}))


if __name__ == "__main__":
    main()
