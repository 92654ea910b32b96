"""The `librarian` command line. Exit codes: 0 done, 1 the run failed, 2 bad usage or config."""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipeline.config import DEFAULT_CACHE_DIR, LinkerSettings
from pipeline.hub import DEFAULT_HUB_PATH, HubError, load_hub
from pipeline.models import ModelError
from schemas.envelopes import Envelope, LinkProposal

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Link security-knowledge sections to OpenCRE hubs, or route them to a person.",
)
schema_app = typer.Typer(no_args_is_help=True, help="JSON Schemas of the contracts.")
app.add_typer(schema_app, name="schema")

out = Console()
err = Console(stderr=True, soft_wrap=True)  # a usage error stays one line

EXIT_FAILED = 1
EXIT_USAGE = 2

HubOpt = Annotated[Path, typer.Option("--hub", help="hub catalogue (hubs.jsonl format)")]
ThresholdOpt = Annotated[float, typer.Option(min=0.0, max=1.0, help="auto-link threshold τ")]
TopKOpt = Annotated[int, typer.Option("--top-k", min=1, help="candidates retrieved")]
TopNOpt = Annotated[int, typer.Option("--top-n", min=1, help="reranked / suggested kept")]
RerankerOpt = Annotated[
    Path | None, typer.Option(help="local CrossEncoder directory (default: no rerank, declared)")
]
EmbeddingOpt = Annotated[
    Path | None,
    typer.Option(help="local sentence-transformers directory (default: packaged MiniLM)"),
]


def _usage_error(message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(EXIT_USAGE)


def _settings(**kwargs: Any) -> LinkerSettings:
    """Build settings and check what can be checked cheaply before any model or Prefect starts."""
    settings = LinkerSettings(**kwargs)
    try:
        load_hub(settings.hub_path)
    except HubError as exc:
        raise _usage_error(f"hub catalogue refused: {exc}") from exc
    for what, path in (
        ("--embedding-model", settings.embedding_model),
        ("--reranker", settings.reranker_model),
    ):
        if path is not None and not (path / "config.json").is_file():
            raise _usage_error(f"{what} {path} is not a model directory (no config.json)")
    return settings


def _new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def _prefect_environment() -> None:
    # Nothing may try the network; a cold local Prefect server can take 15-25 s to start.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    # One "Finished in state Completed()" line per task buries the per-batch flow log;
    # task states still reach the API. Set the variable to INFO to see them.
    os.environ.setdefault("PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL", "WARNING")


def _count_lines(path: Path) -> int:
    total, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            total += chunk.count(b"\n")
            last = chunk[-1:]
    return total + (0 if last == b"\n" else 1)


@app.command()
def run(
    input: Annotated[Path, typer.Argument(help="knowledge-queue JSONL")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="default out/<run-id>/")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run/--commit", help="write files only / write the database")
    ] = True,
    hub: HubOpt = DEFAULT_HUB_PATH,
    threshold: ThresholdOpt = 0.80,
    top_k: TopKOpt = 20,
    top_n: TopNOpt = 5,
    batch_size: Annotated[int, typer.Option(min=1, help="lines per Prefect task")] = 256,
    run_id: Annotated[str | None, typer.Option(help="default run-<utc time>-<random>")] = None,
    reranker: RerankerOpt = None,
    embedding_model: EmbeddingOpt = None,
    cache_dir: Annotated[Path, typer.Option(help="hub embedding cache")] = DEFAULT_CACHE_DIR,
) -> None:
    """Run the linking flow over INPUT and write envelopes (dry-run: files, nothing changed)."""
    if not dry_run:
        raise _usage_error("--commit is not available yet (it arrives with the storage issue)")
    if not input.is_file():
        raise _usage_error(f"input {input} does not exist")
    settings = _settings(
        hub_path=hub,
        threshold=threshold,
        top_k=top_k,
        top_n=top_n,
        batch_size=batch_size,
        reranker_model=reranker,
        embedding_model=embedding_model,
        cache_dir=cache_dir,
    )
    if run_id is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", run_id):
        raise _usage_error(f"--run-id {run_id!r}: use letters, digits, '.', '_' and '-'")
    run_id = run_id or _new_run_id()
    target = out_dir or Path("out") / run_id
    if target.exists() and not target.is_dir():
        raise _usage_error(f"--out {target} exists and is not a directory")
    _prefect_environment()
    from flows.link_flow import link_queue, on_progress

    progress = None
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
        )
        bar_owner = progress
        bar = progress.add_task("linking", total=_count_lines(input))
        on_progress(run_id, lambda n: bar_owner.advance(bar, n))
        progress.start()
    try:
        summary = link_queue(input, target, settings, run_id)
    except Exception as exc:
        reason = escape(f"{type(exc).__name__}: {exc}")
        err.print(f"[red]run {run_id} failed:[/red] {reason}", highlight=False)
        raise typer.Exit(EXIT_FAILED) from exc
    finally:
        if progress is not None:
            progress.stop()
        on_progress(run_id, None)

    table = Table(title=f"run {summary.run_id} (dry-run)", show_header=True)
    table.add_column("outcome")
    table.add_column("count", justify="right")
    table.add_column("by reason")
    for outcome in ("linked", "review", "rejected", "skipped"):
        reasons = summary.by_reason.get(outcome, {})
        detail = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
        table.add_row(outcome, str(getattr(summary, outcome)), detail)
    table.add_row("read", str(summary.read), f"{summary.blank_lines} blank lines tolerated")
    out.print(table)
    out.print(f"retriever: {summary.retriever}", highlight=False, soft_wrap=True)
    out.print(
        f"explicit fast path: {summary.explicit_fast_path}; "
        f"cut to fit a model: {summary.truncated_for_model}",
        highlight=False,
    )
    out.print(f"outputs: {target}/", highlight=False, soft_wrap=True)


@app.command()
def explain(
    text: Annotated[
        str, typer.Argument(help="the section text, or - for one text a line on stdin")
    ],
    title: Annotated[str | None, typer.Option(help="title hint")] = None,
    hub: HubOpt = DEFAULT_HUB_PATH,
    threshold: ThresholdOpt = 0.80,
    top_k: TopKOpt = 20,
    top_n: TopNOpt = 5,
    reranker: RerankerOpt = None,
    embedding_model: EmbeddingOpt = None,
    cache_dir: Annotated[Path, typer.Option(help="hub embedding cache")] = DEFAULT_CACHE_DIR,
    as_json: Annotated[bool, typer.Option("--json", help="print the envelope as JSON")] = False,
) -> None:
    """Show the candidates, scores and decision for one text (no Prefect).

    Most of a cold start is importing torch and sentence-transformers; `-` explains
    many texts (one a line on stdin) in one process, each in milliseconds.
    """
    texts = (
        [line for line in sys.stdin.read().splitlines() if line.strip()] if text == "-" else [text]
    )
    if not texts or not all(t.strip() for t in texts):
        raise _usage_error("TEXT is empty")
    settings = _settings(
        hub_path=hub,
        threshold=threshold,
        top_k=top_k,
        top_n=top_n,
        reranker_model=reranker,
        embedding_model=embedding_model,
        cache_dir=cache_dir,
    )
    from pipeline.explain import explain_text
    from pipeline.linker import Linker
    from schemas.envelopes import dump_envelope

    try:
        linker = Linker.from_settings(settings)
    except ModelError as exc:
        raise _usage_error(str(exc)) from exc
    for one in texts:
        envelope = explain_text(linker, one, title)
        if as_json:
            out.print(json.dumps(dump_envelope(envelope)), soft_wrap=True, highlight=False)
        else:
            _print_explanation(envelope, linker.retriever, threshold)


def _print_explanation(envelope: Envelope, retriever: str, threshold: float) -> None:
    table = Table(title=f"candidates ({retriever})")
    for column in ("rank", "cre_id", "name", "vector", "rerank"):
        table.add_column(
            column, justify="right" if column in ("rank", "vector", "rerank") else "left"
        )
    for rank, cand in enumerate(envelope.retrieval.candidates, start=1):
        rerank = "" if cand.score_rerank is None else f"{cand.score_rerank:.3f}"
        table.add_row(str(rank), cand.cre_id, cand.cre_name, f"{cand.score_vector:.3f}", rerank)
    out.print(table)
    if isinstance(envelope, LinkProposal):
        link = envelope.links[0]
        out.print(
            f"decision: LINK {link.cre_id} ({link.link_type}) confidence {link.confidence:.3f}"
            f" — {link.rationale}",
            highlight=False,
        )
    else:
        flags = ", ".join(envelope.update_detection.adversarial_flags) or "none"
        out.print(
            f"decision: REVIEW ({envelope.reason_code}), threshold {threshold}; flags: {flags}",
            highlight=False,
        )
        for link in envelope.suggested_links or []:
            out.print(f"  suggest {link.cre_id} confidence {link.confidence:.3f}", highlight=False)


@schema_app.command("export")
def schema_export(out_dir: Annotated[Path, typer.Argument(help="directory to write")]) -> None:
    """Write the JSON Schema of every contract into OUT_DIR."""
    from schemas.export import export_schemas

    for path in export_schemas(out_dir):
        out.print(str(path), highlight=False)


def main() -> None:
    app()
