"""End-to-end throughput of `librarian run`, with and without rerank, and per stage.

Builds N sections (default 1,000) by cutting the unlinked controls into spans of
queue rows, then runs the real console script (real Prefect flow, real models) in
a child process for each configuration, and reports sections/s end to end (wall
clock, including Prefect's temporary server and model loading), sections/s in the
flow's batch loop, seconds per stage and the child's peak RSS.

The "with rerank" configuration uses a cross-encoder built from the packaged MiniLM
weights with an untrained head: it measures speed only (its scores mean nothing).

Run: python scripts/bench_throughput.py [--sections 1000] [--batch-size 256] [--dense-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from librarian.paths import packaged_data

CONTROLS = packaged_data("opencre", "unlinked_controls.jsonl")
SPAN_CHARS = 1200


def build_queue(n: int, path: Path) -> int:
    controls = [json.loads(line) for line in CONTROLS.read_text().splitlines() if line]
    rows = 0
    with path.open("w", encoding="utf-8") as handle:
        while rows < n:
            for ctl in controls:
                text = ctl["text"]
                spans = [text[i : i + SPAN_CHARS] for i in range(0, len(text), SPAN_CHARS)] or [
                    text
                ]
                for k, span in enumerate(spans):
                    if rows >= n or not span.strip():
                        continue
                    handle.write(
                        json.dumps(
                            {
                                "chunk_id": f"bench-{rows:06d}",
                                "artifact_id": f"{ctl['framework_id']}/{ctl['control_id']}",
                                "source_type": "github",
                                "source_repo": "bench/controls",
                                "source_commit_sha": "0" * 40,
                                "source_committed_at": "2026-11-30T00:00:00Z",
                                "locator_path": f"{ctl['framework_id']}/{ctl['control_id']}.md",
                                "span_index": k,
                                "span_total": len(spans),
                                "span_heading_path": json.dumps([ctl["title"]]),
                                "text": span,
                                "llm_label": "KNOWLEDGE",
                            }
                        )
                        + "\n"
                    )
                    rows += 1
    return rows


def untrained_cross_encoder(target: Path) -> Path:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import CrossEncoder

    from librarian.models.transformer import default_embedding_model_path

    CrossEncoder(str(default_embedding_model_path()), num_labels=1, device="cpu").save(str(target))
    return target


def run_child(args: list[str]) -> tuple[float, int, int]:
    """Wall seconds, exit code and peak RSS (KiB) of one `librarian run`."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(proc.stderr.read() if proc.stderr else "")
    return wall, code, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument(
        "--dense-only", action="store_true", help="skip the rerank configuration (long runs)"
    )
    opts = parser.parse_args()
    librarian = str(Path(sys.executable).with_name("librarian"))
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        queue = tmp / "queue.jsonl"
        n = build_queue(opts.sections, queue)
        cache = tmp / "cache"
        configs: list[tuple[str, list[str]]] = [("dense only", [])]
        if not opts.dense_only:
            reranker = untrained_cross_encoder(tmp / "ce-untrained")
            configs.append(("dense + rerank top-20", ["--reranker", str(reranker)]))
        for label, extra in configs:
            out = tmp / label.replace(" ", "_")
            args = [librarian, "run", str(queue), "--out", str(out), "--run-id", "bench"]
            args += ["--batch-size", str(opts.batch_size), "--cache-dir", str(cache), *extra]
            wall, code, rss_kib = run_child(args)
            if code != 0:
                raise SystemExit(f"{label}: librarian run exited {code}")
            summary = json.loads((out / "summary.json").read_text())
            timings = summary["timings_s"]
            # The runner's own steps only: the linker's stages (embed, retrieve, ...) happen
            # inside wait_for_prepare and wait_for_link and would be counted twice. (Before
            # the streaming runner, preparing was part of wait_for_link; leaving
            # wait_for_prepare out counted a third of the loop and showed 560 sections/s.)
            top = (
                "read_validate",
                "store_read",
                "wait_for_prepare",
                "source_level",
                "wait_for_link",
                "store_write",
                "write",
            )
            loop = sum(timings.get(k, 0.0) for k in top)
            results.append(
                {
                    "config": label,
                    "sections": summary["read"],
                    "wall_s": round(wall, 1),
                    "sections_per_s_wall": round(summary["read"] / wall, 1),
                    "sections_per_s_loop": round(summary["read"] / loop, 1),
                    "timings_s": timings,
                    "peak_rss_mib": round(rss_kib / 1024),
                    "truncated_for_model": summary["truncated_for_model"],
                }
            )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    )
    print(f"sections: {n} spans of <= {SPAN_CHARS} chars cut from {CONTROLS.name}")
    stages = [
        "load_models",
        "read_validate",
        "explicit",
        "embed",
        "retrieve",
        "rerank",
        "score",
        "safety",
        "decide",
        "emit",
        "write",
    ]
    header = ["config", "wall s", "sec/s wall", "sec/s loop", *stages, "peak RSS MiB"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in results:
        cells = [r["config"], r["wall_s"], r["sections_per_s_wall"], r["sections_per_s_loop"]]
        cells += [r["timings_s"].get(s, "-") for s in stages] + [r["peak_rss_mib"]]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    if len(results) == 2:
        ratio = results[0]["sections_per_s_loop"] / results[1]["sections_per_s_loop"]
        print(f"rerank costs {ratio:.1f}x in the batch loop")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
