"""The dry-run linking flow: a task per batch of lines (Prefect costs ~30 ms a task)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NONE

from pipeline.config import LinkerSettings
from pipeline.emit import OutputWriter
from pipeline.ingest import ChunkRegistry, RawBatch, parse_line, read_batch
from pipeline.linker import BatchResult, Linker, link_resilient
from pipeline.summary import add_timings, check_accounting, record_batch
from schemas.records import Rejection, RunSummary, Section, Skip

# Progress callbacks by run id: a callable is no flow parameter (parameters are stored by the API).
_PROGRESS: dict[str, Callable[[int], None]] = {}


def on_progress(run_id: str, callback: Callable[[int], None] | None) -> None:
    if callback is None:
        _PROGRESS.pop(run_id, None)
    else:
        _PROGRESS[run_id] = callback


@task(name="load-models", cache_policy=NONE)
def load_linker(settings: LinkerSettings) -> Linker:
    return Linker.from_settings(settings)


@task(name="read-batch", retries=2, retry_delay_seconds=1, cache_policy=NONE)
def read_batch_task(path: Path, offset: int, first_line: int, max_lines: int) -> RawBatch:
    return read_batch(path, offset, first_line, max_lines)


@task(name="validate-batch", cache_policy=NONE)
def validate_batch(batch: RawBatch, registry: ChunkRegistry) -> list[Section | Rejection | Skip]:
    return [registry.admit(parse_line(line, raw)) for line, raw in batch.lines]


@task(name="link-batch", cache_policy=NONE)
def link_batch(
    linker: Linker, sections: list[Section], run_id: str
) -> tuple[BatchResult, list[Rejection]]:
    return link_resilient(linker, sections, run_id)


@task(name="write-batch", retries=2, retry_delay_seconds=1, cache_policy=NONE)
def write_batch(
    writer: OutputWriter, result: BatchResult, rejections: list[Rejection], skips: list[Skip]
) -> None:
    writer.write_batch(result.envelopes, rejections, skips)


@flow(name="librarian-link", validate_parameters=False)
def link_queue(
    input_path: Path, out_dir: Path, settings: LinkerSettings, run_id: str
) -> RunSummary:
    logger = get_run_logger()
    summary = RunSummary(
        run_id=run_id,
        input=str(input_path),
        out_dir=str(out_dir),
        started_at=datetime.now(UTC).isoformat(),
        top_k=settings.top_k,
        top_n=settings.top_n,
        batch_size=settings.batch_size,
    )

    def timed(stage: str, started: float) -> None:
        add_timings(summary, {stage: time.perf_counter() - started})

    started = time.perf_counter()
    linker = load_linker(settings)
    timed("load_models", started)
    summary.threshold = linker.threshold
    summary.models = linker.model_ids
    summary.retriever = linker.retriever
    summary.hub = {
        "source": linker.hub.source,
        "content_hash": linker.hub.content_hash,
        "nodes": len(linker.hub.nodes),
    }
    registry = ChunkRegistry()
    with OutputWriter(out_dir) as writer:
        summary.outputs = writer.paths()
        offset, next_line, eof = 0, 1, False
        while not eof:
            started = time.perf_counter()
            raw = read_batch_task(input_path, offset, next_line, settings.batch_size)
            parsed = validate_batch(raw, registry)
            timed("read_validate", started)
            sections = [p for p in parsed if isinstance(p, Section)]
            rejections = [p for p in parsed if isinstance(p, Rejection)]
            skips = [p for p in parsed if isinstance(p, Skip)]

            result, failed = link_batch(linker, sections, run_id)
            rejections.extend(failed)

            started = time.perf_counter()
            write_batch(writer, result, rejections, skips)
            timed("write", started)

            record_batch(summary, raw, result, rejections, skips)
            offset, next_line, eof = raw.next_offset, raw.next_line, raw.eof
            logger.info(
                "batch %d: %d lines (linked %d, review %d, rejected %d, skipped %d so far)",
                summary.batches, len(raw.lines), summary.linked, summary.review,
                summary.rejected, summary.skipped,
            )  # fmt: skip
            callback = _PROGRESS.get(run_id)
            if callback is not None:
                callback(len(raw.lines) + raw.blank_lines)
        summary.finished_at = datetime.now(UTC).isoformat()
        summary.timings_s = {k: round(v, 4) for k, v in summary.timings_s.items()}
        check_accounting(summary)
        writer.commit(summary)
    logger.info(
        "run %s: read %d, linked %d, review %d, rejected %d, skipped %d -> %s",
        run_id, summary.read, summary.linked, summary.review, summary.rejected,
        summary.skipped, out_dir,
    )  # fmt: skip
    return summary
