"""A run's summary, begun: every run (the flow, `relink`) starts its own from here, and
the runner's accounting (`accounting.py`) fills it in."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from librarian.pipeline.pipeline import Pipeline
from librarian.schemas.records import RunSummary
from librarian.settings import LinkerSettings


def new_summary(
    source: str,
    out_dir: Path | str,
    settings: LinkerSettings,
    run_id: str,
    mode: str,
    database: str | None,
) -> RunSummary:
    """A run's summary before its first batch: what it reads, where it writes, how
    (`database`: as it may be shown, its password redacted)."""
    return RunSummary(
        run_id=run_id,
        mode=mode,
        input=source,
        database=database,
        out_dir=str(out_dir),
        started_at=datetime.now(UTC).isoformat(),
        top_k=settings.top_k,
        top_n=settings.top_n,
        batch_size=settings.batch_size,
    )


def describe_pipeline(summary: RunSummary, pipeline: Pipeline, priors_read: bool) -> None:
    """What decides the run's rows: its models, its cut, its stages, its hub."""
    summary.threshold = pipeline.policy.alone_cut
    summary.policy = pipeline.policy.as_json()
    summary.models = pipeline.models
    summary.retriever = pipeline.description(priors_read)
    summary.hub = {
        "source": pipeline.hub.source,
        "content_hash": pipeline.hub.content_hash,
        "nodes": len(pipeline.hub.nodes),
    }
