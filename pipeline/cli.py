"""The `librarian` command line. Exit codes: 0 done, 1 the run failed, 2 bad usage or config."""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from pipeline.artifacts import DEFAULT_MODELS_DIR, ArtifactError, load_trained, recorded_embedder
from pipeline.catalogue import load_hubs
from pipeline.config import DEFAULT_CACHE_DIR, LinkerSettings
from pipeline.hub import DEFAULT_HUB_PATH, Hub, HubError, load_hub
from pipeline.links import DEFAULT_LINKS_PATH, DEV_FRAMEWORKS
from pipeline.models import ModelError
from schemas.envelopes import Envelope, LinkProposal
from schemas.golden import EvalReport

if TYPE_CHECKING:
    from pipeline.linker import Linker
    from pipeline.links import Link

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Link security-knowledge sections to OpenCRE hubs, or route them to a person.",
)
schema_app = typer.Typer(no_args_is_help=True, help="JSON Schemas of the contracts.")
app.add_typer(schema_app, name="schema")
review_app = typer.Typer(no_args_is_help=True, help="The reviewers' queue.")
app.add_typer(review_app, name="review")
queue_app = typer.Typer(no_args_is_help=True, help="The database's knowledge_queue table.")
app.add_typer(queue_app, name="queue")

out = Console()
err = Console(stderr=True, soft_wrap=True)  # a usage error stays one line

EXIT_FAILED = 1
EXIT_USAGE = 2

HubOpt = Annotated[Path, typer.Option("--hub", help="hub catalogue (hubs.jsonl format)")]
HubsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--hub",
        help="hub catalogue (hubs.jsonl; default the packaged OpenCRE hub); repeat to add a "
        "team's own catalogue as another collection (docs/routing.md)",
    ),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        min=0.0, max=1.0, help="auto-link threshold τ (default: the trained models' own, else 0.80)"
    ),
]
ModelsOpt = Annotated[
    Path,
    typer.Option(
        "--models", help="trained model directory (`librarian train`); missing = uncalibrated"
    ),
]
TopKOpt = Annotated[int, typer.Option("--top-k", min=1, help="candidates retrieved")]
TopNOpt = Annotated[int, typer.Option("--top-n", min=1, help="reranked / suggested kept")]
RerankGapOpt = Annotated[
    float | None,
    typer.Option(
        min=0.0,
        max=2.0,
        help="with --reranker: rerank only sections whose first two retrieval scores are "
        "within this gap (default: rerank all)",
    ),
]
RoutingOpt = Annotated[
    str,
    typer.Option(
        "--routing",
        help="off: search every hub collection; pins: an input/--collections pin or a "
        "--routing-rules rule may narrow; auto: also the trained branch classifier",
    ),
]
CollectionsOpt = Annotated[
    list[str] | None,
    typer.Option("--collections", help="pin every section to these hub collections (repeatable)"),
]
RulesOpt = Annotated[
    Path | None, typer.Option("--routing-rules", help="YAML routing rules (docs/routing.md)")
]
SearchOpt = Annotated[
    str, typer.Option("--search", help="flat: score every hub; beam: walk down the hub tree")
]
BeamWidthOpt = Annotated[int, typer.Option(min=1, max=100, help="beam search: nodes kept a level")]
RerankerOpt = Annotated[
    Path | None, typer.Option(help="local CrossEncoder directory (default: no rerank, declared)")
]
VectorOpt = Annotated[
    str,
    typer.Option(
        "--vector-backend",
        help="memory, or pgvector (hub vectors in the PostgreSQL --db, HNSW top-K)",
    ),
]
DbOpt = Annotated[
    str | None,
    typer.Option("--db", help="database URL (default: LIBRARIAN_DB, else sqlite:///librarian.db)"),
]
EmbeddingOpt = Annotated[
    Path | None,
    typer.Option(
        help="local sentence-transformers directory, or an int8 ONNX build from "
        "`librarian quantize` (default: packaged MiniLM)"
    ),
]


def _usage_error(message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(EXIT_USAGE)


def _settings(**kwargs: Any) -> LinkerSettings:
    """Build settings and check what can be checked cheaply before any model or Prefect starts."""
    settings = LinkerSettings(**kwargs)
    try:
        hub = load_hubs(settings.hub_path, settings.extra_hubs)
    except HubError as exc:
        raise _usage_error(f"hub catalogue refused: {exc}") from exc
    _check_routing(settings, hub)
    if settings.search == "beam" and settings.vector_backend != "memory":
        raise _usage_error("--search beam runs in memory: not with --vector-backend pgvector")
    for what, path, marks in (
        ("--embedding-model", settings.embedding_model, ("config.json", "model.onnx")),
        ("--reranker", settings.reranker_model, ("config.json",)),
    ):
        if path is not None and not any((path / mark).is_file() for mark in marks):
            raise _usage_error(f"{what} {path} is not a model directory (no {' or '.join(marks)})")
    return settings


def _hubs(paths: list[Path] | None) -> dict[str, Any]:
    """The first --hub is the OpenCRE catalogue; each further one a team's catalogue."""
    first, *rest = paths or [DEFAULT_HUB_PATH]
    return {"hub_path": first, "extra_hubs": tuple(rest)}


def _search(search: str, beam_width: int) -> dict[str, Any]:
    if search not in ("flat", "beam"):
        raise _usage_error(f"--search {search!r}: use flat or beam")
    return {"search": search, "beam_width": beam_width}


def _routing(mode: str, collections: list[str] | None, rules: Path | None) -> dict[str, Any]:
    if mode not in ("off", "pins", "auto"):
        raise _usage_error(f"--routing {mode!r}: use off, pins or auto")
    pins = tuple(p.strip() for c in collections or () for p in c.split(",") if p.strip())
    if mode == "off" and (pins or rules):
        raise _usage_error("--routing off searches everything: drop --collections/--routing-rules")
    if rules is not None and not rules.is_file():
        raise _usage_error(f"--routing-rules {rules} does not exist")
    return {"routing": mode, "collections": pins, "routing_rules": rules}


def _check_routing(settings: LinkerSettings, hub: Hub) -> None:
    """A pin naming only unknown collections, or a bad rules file, is a usage error."""
    from pipeline.route import Router, RoutingError, hub_collections, load_rules

    collections = hub_collections(hub)
    try:
        Router(collections, settings.routing, settings.collections).check_pin()
        if settings.routing_rules is not None:
            load_rules(settings.routing_rules, list(collections))
    except RoutingError as exc:
        raise _usage_error(str(exc)) from exc


def _load_linker(settings: LinkerSettings) -> Linker:
    """The linker `explain` and `eval` use; a model problem is a one-line usage error."""
    from pipeline.linker import Linker
    from store.db import StoreError
    from store.vectors import retriever_factory

    _check_models(settings)
    try:
        factory = retriever_factory(settings.vector_backend, settings.vector_db)
        return Linker.from_settings(settings, factory)
    except (ModelError, ArtifactError, StoreError) as exc:
        raise _usage_error(str(exc)) from exc


def _check_models(settings: LinkerSettings) -> None:
    """Refuse a damaged or stale model directory before Prefect or any model starts."""
    models = settings.models_dir
    if models is None or not models.exists():
        return
    if not models.is_dir():
        raise _usage_error(f"--models {models} is not a directory")
    if any(models.iterdir()):
        try:
            load_trained(models)
            if settings.embedding_model is None:
                recorded_embedder(models)
        except ArtifactError as exc:
            raise _usage_error(f"--models refused: {exc}") from exc


def _database(explicit: str | None) -> str:
    """The database URL, checked and migrated before any model or Prefect starts."""
    from store.db import StoreError, database_url, make_engine, upgrade

    url = database_url(explicit)
    try:
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
    except StoreError as exc:
        raise _usage_error(str(exc)) from exc
    return url


def _pending(database: str | None) -> int | None:
    from store.db import make_engine
    from store.queue import pending

    if database is None:
        return None
    engine = make_engine(database)
    try:
        return pending(engine)
    finally:
        engine.dispose()


def _vectors(backend: str, db: str | None) -> dict[str, Any]:
    """Settings for the vector search; pgvector needs a PostgreSQL database."""
    if backend == "memory":
        return {}
    if backend != "pgvector":
        raise _usage_error(f"--vector-backend {backend!r}: use memory or pgvector")
    from store.db import database_url

    url = database_url(db)
    if not url.startswith("postgresql"):
        raise _usage_error("--vector-backend pgvector needs a PostgreSQL --db (or LIBRARIAN_DB)")
    return {"vector_backend": "pgvector", "vector_db": url}


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
    input: Annotated[
        Path | None, typer.Argument(help="knowledge-queue JSONL (omit with --from-db)")
    ] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="default out/<run-id>/")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run/--commit", help="write files only / write the database")
    ] = True,
    db: DbOpt = None,
    vector_backend: VectorOpt = "memory",
    from_db: Annotated[
        bool,
        typer.Option("--from-db", help="drain the database's knowledge_queue (implies --commit)"),
    ] = False,
    task_runner: Annotated[
        str,
        typer.Option(
            "--task-runner", help="default (this process) or dask (batches over Dask workers)"
        ),
    ] = "default",
    dask_address: Annotated[
        str | None,
        typer.Option(help="Dask scheduler, e.g. tcp://host:8786 (default: a local cluster)"),
    ] = None,
    dask_workers: Annotated[
        int, typer.Option(min=1, help="workers of the local Dask cluster (processes)")
    ] = 2,
    hub: HubsOpt = None,
    threshold: ThresholdOpt = None,
    top_k: TopKOpt = 20,
    top_n: TopNOpt = 5,
    batch_size: Annotated[int, typer.Option(min=1, help="lines per Prefect task")] = 256,
    run_id: Annotated[str | None, typer.Option(help="default run-<utc time>-<random>")] = None,
    reranker: RerankerOpt = None,
    rerank_gap: RerankGapOpt = None,
    routing: RoutingOpt = "pins",
    collections: CollectionsOpt = None,
    routing_rules: RulesOpt = None,
    search: SearchOpt = "flat",
    beam_width: BeamWidthOpt = 4,
    embedding_model: EmbeddingOpt = None,
    cache_dir: Annotated[Path, typer.Option(help="hub embedding cache")] = DEFAULT_CACHE_DIR,
    models: ModelsOpt = DEFAULT_MODELS_DIR,
) -> None:
    """Run the linking flow over INPUT and write envelopes (dry-run: files, nothing changed).

    --commit stores every decision in the database (--db, LIBRARIAN_DB, default
    sqlite:///librarian.db); --from-db drains its knowledge_queue table instead of a file.
    """
    if from_db and input is not None:
        raise _usage_error("give INPUT or --from-db, not both")
    if from_db:
        dry_run = False
    if input is None and not from_db:
        raise _usage_error("INPUT is missing (or use --from-db)")
    if input is not None and not input.is_file():
        raise _usage_error(f"input {input} does not exist")
    if dry_run and db is not None and vector_backend == "memory":
        raise _usage_error("--db needs --commit or --from-db: a dry run never touches the database")
    database = None if dry_run else _database(db)
    settings = _settings(
        **_hubs(hub),
        threshold=threshold,
        top_k=top_k,
        top_n=top_n,
        batch_size=batch_size,
        reranker_model=reranker,
        rerank_gap=rerank_gap,
        **_routing(routing, collections, routing_rules),
        **_search(search, beam_width),
        embedding_model=embedding_model,
        cache_dir=cache_dir,
        models_dir=models,
        **_vectors(vector_backend, database or db),
    )
    if run_id is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", run_id):
        raise _usage_error(f"--run-id {run_id!r}: use letters, digits, '.', '_' and '-'")
    run_id = run_id or _new_run_id()
    target = out_dir or Path("out") / run_id
    if target.exists() and not target.is_dir():
        raise _usage_error(f"--out {target} exists and is not a directory")
    _check_models(settings)
    if task_runner not in ("default", "dask"):
        raise _usage_error(f"--task-runner {task_runner!r}: use default or dask")
    if dask_address is not None and task_runner != "dask":
        raise _usage_error("--dask-address needs --task-runner dask")
    _prefect_environment()
    with ExitStack() as stack:
        in_flight = 1
        if task_runner == "dask":
            in_flight = _use_dask(stack, dask_address, dask_workers)
        dask = (dask_address, dask_workers) if task_runner == "dask" else None
        _run_flow(input, target, settings, run_id, database, in_flight, dask)


def _use_dask(stack: ExitStack, address: str | None, workers: int) -> int:
    """Point the process at a real Prefect server (starting one if none is configured);
    returns how many batches to keep in flight."""
    if os.environ.get("PREFECT_API_URL"):
        err.print(
            f"Dask workers report to the Prefect server at {escape(os.environ['PREFECT_API_URL'])}",
            highlight=False,
        )
    else:
        from flows.server import ServerError, local_prefect_server

        try:
            api = stack.enter_context(local_prefect_server())
        except ServerError as exc:
            raise _usage_error(str(exc)) from exc
        os.environ["PREFECT_API_URL"] = api  # before Prefect is imported; workers inherit it
        stack.callback(os.environ.pop, "PREFECT_API_URL", None)
        err.print(
            f"started a Prefect server for the Dask workers at {api} (stopped when the run ends)",
            highlight=False,
        )
    where = address or f"a local cluster of {workers} worker processes"
    err.print(f"linking batches on Dask: {escape(where)}", highlight=False)
    return 4 if address else 2 * workers


def _run_flow(
    input: Path | None,
    target: Path,
    settings: LinkerSettings,
    run_id: str,
    database: str | None,
    in_flight: int,
    dask: tuple[str | None, int] | None,
) -> None:
    """`dask`: (scheduler address or None for a local cluster, local worker count)."""
    from flows.link_flow import link_queue, on_progress

    flow_to_run = link_queue
    if dask is not None:
        from prefect_dask.task_runners import DaskTaskRunner

        address, workers = dask
        local = {"n_workers": workers, "threads_per_worker": 1, "processes": True,
                 "dashboard_address": None}  # fmt: skip
        runner = DaskTaskRunner(address=address) if address else DaskTaskRunner(
            cluster_kwargs=local
        )  # fmt: skip
        # DaskTaskRunner is a TaskRunner[PrefectDaskFuture]; the stub wants the base future.
        flow_to_run = link_queue.with_options(task_runner=runner)  # type: ignore[arg-type]

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
        total = _count_lines(input) if input is not None else _pending(database)
        bar = progress.add_task("linking", total=total)
        on_progress(run_id, lambda n: bar_owner.advance(bar, n))
        progress.start()
    try:
        summary = flow_to_run(input, target, settings, run_id, database, in_flight)
    except Exception as exc:
        reason = escape(f"{type(exc).__name__}: {exc}")
        err.print(f"[red]run {run_id} failed:[/red] {reason}", highlight=False)
        raise typer.Exit(EXIT_FAILED) from exc
    finally:
        if progress is not None:
            progress.stop()
        on_progress(run_id, None)
        if dask is not None:
            from prefect.logging.handlers import APILogHandler

            APILogHandler().flush()  # before a server this command started is stopped

    table = Table(title=f"run {summary.run_id} ({summary.mode})", show_header=True)
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
    if summary.database:
        stored = ", ".join(f"{k} {v}" for k, v in summary.stored.items())
        out.print(f"database: {summary.database} ({stored})", highlight=False, soft_wrap=True)


@app.command()
def explain(
    text: Annotated[
        str, typer.Argument(help="the section text, or - for one text a line on stdin")
    ],
    title: Annotated[str | None, typer.Option(help="title hint")] = None,
    hub: HubsOpt = None,
    threshold: ThresholdOpt = None,
    top_k: TopKOpt = 20,
    top_n: TopNOpt = 5,
    reranker: RerankerOpt = None,
    rerank_gap: RerankGapOpt = None,
    routing: RoutingOpt = "pins",
    collections: CollectionsOpt = None,
    routing_rules: RulesOpt = None,
    search: SearchOpt = "flat",
    beam_width: BeamWidthOpt = 4,
    embedding_model: EmbeddingOpt = None,
    cache_dir: Annotated[Path, typer.Option(help="hub embedding cache")] = DEFAULT_CACHE_DIR,
    models: ModelsOpt = DEFAULT_MODELS_DIR,
    vector_backend: VectorOpt = "memory",
    db: DbOpt = None,
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
        **_hubs(hub),
        threshold=threshold,
        top_k=top_k,
        top_n=top_n,
        reranker_model=reranker,
        rerank_gap=rerank_gap,
        **_routing(routing, collections, routing_rules),
        **_search(search, beam_width),
        embedding_model=embedding_model,
        cache_dir=cache_dir,
        models_dir=models,
        **_vectors(vector_backend, db),
    )
    from pipeline.explain import explain_text
    from schemas.envelopes import dump_envelope

    linker = _load_linker(settings)
    for one in texts:
        envelope = explain_text(linker, one, title)
        if as_json:
            out.print(json.dumps(dump_envelope(envelope)), soft_wrap=True, highlight=False)
        else:
            _print_explanation(envelope, linker.retriever, linker.threshold)


@app.command()
def route(
    text: Annotated[str, typer.Argument(help="the section text")],
    title: Annotated[str | None, typer.Option(help="title hint")] = None,
    routing: RoutingOpt = "pins",
    collections: CollectionsOpt = None,
    routing_rules: RulesOpt = None,
    hub: HubsOpt = None,
    embedding_model: EmbeddingOpt = None,
    cache_dir: Annotated[Path, typer.Option(help="hub embedding cache")] = DEFAULT_CACHE_DIR,
    models: ModelsOpt = DEFAULT_MODELS_DIR,
    as_json: Annotated[bool, typer.Option("--json", help="print the decision as JSON")] = False,
) -> None:
    """Show which hub collections one text would search, and why."""
    if not text.strip():
        raise _usage_error("TEXT is empty")
    settings = _settings(
        **_hubs(hub),
        embedding_model=embedding_model,
        cache_dir=cache_dir,
        models_dir=models,
        **_routing(routing, collections, routing_rules),
    )
    from pipeline.explain import section_from_text

    linker = _load_linker(settings)
    section = section_from_text(text, title)
    vector = linker.embedder.encode([text])[0] if settings.routing == "auto" else None
    decision = linker.router.route(section, vector)
    if as_json:
        out.print(decision.model_dump_json(), soft_wrap=True, highlight=False)
        return
    table = Table(
        title=f"routing: configured {decision.configured}, effective {decision.effective}"
    )
    for column in ("collection", "hubs", "selected", "score", "reason"):
        table.add_column(column)
    for row in decision.collections:
        score = "" if row.score is None else f"{row.score:.3f}"
        size = str(len(linker.router.collections[row.collection]))
        table.add_row(row.collection, size, "yes" if row.selected else "no", score, row.reason)
    out.print(table)
    for warning in decision.warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
    widened = " (widened)" if decision.widened else ""
    out.print(f"searches: {', '.join(decision.selected)}{widened}", highlight=False)


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


@app.command()
def train(
    links: Annotated[
        list[str] | None,
        typer.Option(
            help="links.jsonl file, or a database URL for the reviewers' accepted links "
            "(repeatable; default data/opencre/links.jsonl)"
        ),
    ] = None,
    hub: HubOpt = DEFAULT_HUB_PATH,
    exclude_framework: Annotated[
        list[str] | None,
        typer.Option("--exclude-framework", help="leave this framework out (repeatable)"),
    ] = None,
    holdout_dev: Annotated[
        bool,
        typer.Option(
            "--holdout-dev",
            help="also leave out the dev frameworks data/golden/dev.json scores "
            f"({', '.join(DEV_FRAMEWORKS)})",
        ),
    ] = False,
    out_dir: Annotated[Path, typer.Option("--out", help="model directory to write")] = (
        DEFAULT_MODELS_DIR
    ),
    embedding_model: EmbeddingOpt = None,
    cache_dir: Annotated[Path, typer.Option(help="hub embedding cache")] = DEFAULT_CACHE_DIR,
    seed: Annotated[int, typer.Option(help="random seed")] = 13,
) -> None:
    """Build the model directory `run`, `explain` and `eval` read, from link data."""
    sources = links or [str(DEFAULT_LINKS_PATH)]
    if out_dir.exists() and not out_dir.is_dir():
        raise _usage_error(f"--out {out_dir} exists and is not a directory")
    settings = _settings(hub_path=hub, embedding_model=embedding_model, cache_dir=cache_dir)
    from pipeline.links import LinksError, links_digest
    from pipeline.models import load_embedder
    from pipeline.retrieve import build_index
    from pipeline.train import TrainingError, TrainOptions, save
    from pipeline.train import train as train_models

    loaded = _load_links(sources)
    excluded = [*(exclude_framework or ()), *(DEV_FRAMEWORKS if holdout_dev else ())]
    options = TrainOptions(
        links=tuple(loaded),
        links_sources=tuple(_redacted(s) if "://" in s else s for s in sources),
        links_sha256=links_digest(loaded),
        exclude_frameworks=tuple(dict.fromkeys(excluded)),
        seed=seed,
    )
    with _progress_bar() as progress:
        try:
            hub_nodes = load_hub(settings.hub_path)
            embedder = load_embedder(settings.embedding_model)
            index = build_index(hub_nodes, embedder, settings.cache_dir)
            result = train_models(options, hub_nodes, embedder, index, progress)
        except (LinksError, TrainingError, ModelError) as exc:
            err.print(f"[red]training failed:[/red] {escape(str(exc))}", highlight=False)
            raise typer.Exit(EXIT_FAILED) from exc
    save(result, out_dir, settings.embedding_model)
    card: dict[str, Any] = result.card
    oof = card["out_of_fold"]
    data = card["data"]
    table = Table(title=f"trained {out_dir}/ in {card['seconds']} s")
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("sections (curated, with text)", str(data["sections"]))
    table.add_row("frameworks seen", ", ".join(data["frameworks_seen"]))
    table.add_row("frameworks excluded", ", ".join(data["frameworks_excluded"]) or "none")
    table.add_row("out-of-fold top-1", f"{oof['top1']:.3f}")
    table.add_row("out-of-fold ECE", f"{oof['ece']:.3f}")
    table.add_row(
        "threshold",
        f"{card['threshold']:.3f} (auto-links {oof['auto_linked']} of {oof['rows']} "
        f"out of fold, {oof['auto_link_wrong']} wrong)",
    )
    out.print(table)


@app.command()
def quantize(
    out_dir: Annotated[Path, typer.Option("--out", help="directory to write")] = Path(
        "models/embedder-int8"
    ),
    source: Annotated[
        Path | None,
        typer.Option("--source", help="sentence-transformers directory (default: packaged MiniLM)"),
    ] = None,
    hub: HubOpt = DEFAULT_HUB_PATH,
) -> None:
    """Build an int8 ONNX copy of the embedding model for `--embedding-model` (faster on CPU);
    refused unless its vectors of the hub's texts agree with the source model's."""
    settings = _settings(hub_path=hub, embedding_model=source)
    from pipeline.quantize import quantize as build_int8

    hub_nodes = load_hub(settings.hub_path)
    probe = [*hub_nodes.name_texts(), *hub_nodes.path_texts()]
    err.print(f"exporting and quantising; checking on {len(probe)} hub texts ...")
    try:
        card = build_int8(out_dir, probe, settings.embedding_model)
    except ModelError as exc:
        err.print(f"[red]quantize failed:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_FAILED) from exc
    agreed = card["agreement"]
    out.print(
        f"wrote {out_dir}/ ({card['backend']} of {card['source']['name']}) in {card['seconds']} s; "
        f"agreement with the source on {agreed['probe']}: mean cosine {agreed['mean_cosine']}, "
        f"min {agreed['min_cosine']}",
        highlight=False,
    )


def _load_links(sources: list[str]) -> list[Link]:
    """Links from files and from stores (the reviewers' accepted decisions), in order."""
    from pipeline.links import LinksError, load_links

    out: list[Link] = []
    for source in sources:
        if "://" in source:
            from store.db import StoreError, make_engine
            from store.review import reviewer_links

            try:
                engine = make_engine(source)
                out.extend(reviewer_links(engine))
                engine.dispose()
            except (StoreError, SQLAlchemyError) as exc:
                raise _usage_error(f"--links {_redacted(source)}: {exc}") from exc
        else:
            try:
                out.extend(load_links(Path(source)))
            except LinksError as exc:
                raise _usage_error(str(exc)) from exc
    return out


@app.command("eval")
def eval_golden(
    dataset: Annotated[Path, typer.Argument(help="golden set (JSON list of rows)")],
    json_out: Annotated[Path | None, typer.Option("--json", help="write the report here")] = None,
    top_k: TopKOpt = 20,
    threshold: ThresholdOpt = None,
    models: ModelsOpt = DEFAULT_MODELS_DIR,
    hub: HubsOpt = None,
    embedding_model: EmbeddingOpt = None,
    reranker: RerankerOpt = None,
    rerank_gap: RerankGapOpt = None,
    routing: RoutingOpt = "pins",
    collections: CollectionsOpt = None,
    routing_rules: RulesOpt = None,
    search: SearchOpt = "flat",
    beam_width: BeamWidthOpt = 4,
    cache_dir: Annotated[Path, typer.Option(help="hub embedding cache")] = DEFAULT_CACHE_DIR,
    vector_backend: VectorOpt = "memory",
    db: DbOpt = None,
    plot: Annotated[
        Path | None, typer.Option(help="draw the reliability diagram into this PNG")
    ] = None,
) -> None:
    """Score the pipeline on a golden set with the trained models as they are (fits nothing).

    Exits 1 when a gate fails: the explicit fast path below 100%, or ECE >= 0.10.
    """
    from pipeline.golden import GoldenError, load_golden

    try:
        rows = load_golden(dataset)
    except GoldenError as exc:
        raise _usage_error(str(exc)) from exc
    settings = _settings(
        **_hubs(hub),
        threshold=threshold,
        top_k=top_k,
        reranker_model=reranker,
        rerank_gap=rerank_gap,
        **_routing(routing, collections, routing_rules),
        **_search(search, beam_width),
        embedding_model=embedding_model,
        cache_dir=cache_dir,
        models_dir=models,
        **_vectors(vector_backend, db),
    )
    from pipeline.evaluate import calibration_bins, gate_failures, per_source, run_golden, score

    linker = _load_linker(settings)
    if linker.calibrator is None:
        err.print(f"[yellow]warning:[/yellow] {escape(linker.retriever)}", highlight=False)
    with _progress_bar() as progress:
        step = (lambda n: progress("scoring", n, -1)) if progress else None
        try:
            outcomes = run_golden(linker, rows, progress=step)
        except GoldenError as exc:
            raise _usage_error(str(exc)) from exc
    report = score(outcomes, linker.threshold, top_k)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    ece, bins = calibration_bins(outcomes)
    _print_report(report, per_source(outcomes), linker.retriever)
    if plot is not None:
        from pipeline.plot import reliability_diagram

        reliability_diagram(bins, ece, plot, title=f"{dataset.name}: reliability")
        out.print(f"reliability diagram: {plot}", highlight=False)
    failures = gate_failures(report)
    for failure in failures:
        err.print(f"[red]gate failed:[/red] {escape(failure)}", highlight=False)
    if failures:
        raise typer.Exit(EXIT_FAILED)


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100.0 * part / whole:.1f}%)" if whole else "0/0"


def _print_report(report: EvalReport, sources: dict[str, dict[str, int]], retriever: str) -> None:
    table = Table(title=f"eval: {report.rows} rows")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("explicit fast path", _pct(report.explicit.correct, report.explicit.total))
    r = report.recall_at_k
    table.add_row(f"recall@{r.k} (any / all)", f"{_pct(r.any_hit, r.total)} / {r.all_hit}")
    table.add_row(
        "top-1 retriever", _pct(report.top1.retriever.correct, report.top1.retriever.total)
    )
    table.add_row("top-1 final", _pct(report.top1.final.correct, report.top1.final.total))
    table.add_row("ECE", f"{report.calibration.ece:.4f} ({report.calibration.bins} bins)")
    d = report.decision
    table.add_row("threshold", f"{d.threshold:.3f}")
    auto = d.auto_link.correct + d.auto_link.wrong
    table.add_row("auto-linked right", _pct(d.auto_link.correct, d.auto_link.expected_linked))
    table.add_row("auto-links wrong", _pct(d.auto_link.wrong, auto))
    table.add_row("expected review routed", _pct(d.review.routed, d.review.expected_review))
    out.print(table)

    slices = Table(title="per slice")
    for column in ("slice", "rows", "top-1", "auto-linked", "reviewed"):
        slices.add_column(column, justify="left" if column == "slice" else "right")
    for name, entry in report.per_slice.items():
        slices.add_row(
            name,
            str(entry.total),
            str(entry.top1_correct),
            str(entry.auto_linked),
            str(entry.reviewed),
        )
    out.print(slices)

    by_source = Table(title="per source standard (linkable rows)")
    for column in ("source", "rows", "top-1", "recall", "auto-linked", "wrong"):
        by_source.add_column(column, justify="left" if column == "source" else "right")
    for name, counts in sources.items():
        by_source.add_row(
            name,
            str(counts["total"]),
            _pct(counts["top1"], counts["total"]),
            _pct(counts["recall"], counts["total"]),
            str(counts["auto"]),
            str(counts["wrong"]),
        )
    out.print(by_source)
    out.print(f"pipeline: {retriever}", highlight=False, soft_wrap=True)


@contextmanager
def _progress_bar() -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr when it is a terminal; (stage, done, total), total -1 = add."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bars: dict[str, Any] = {}
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
    ) as progress:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in bars:
                bars[stage] = progress.add_task(stage, total=None if total < 0 else total)
            if total < 0:
                progress.advance(bars[stage], done)
            else:
                progress.update(bars[stage], completed=done, total=total)

        yield update


def _scheduled_parameters(
    input: Path | None,
    from_db: bool,
    commit: bool,
    db: str | None,
    out_root: Path,
    options: dict[str, Any],
) -> dict[str, Any]:
    """Parameters of the deployable flow, checked now rather than at 2 a.m."""
    if from_db and input is not None:
        raise _usage_error("give INPUT or --from-db, not both")
    if input is None and not from_db:
        raise _usage_error("INPUT is missing (or use --from-db)")
    if input is not None and not input.is_file():
        raise _usage_error(f"input {input} does not exist")
    database = _database(db) if (from_db or commit) else None
    _settings(**options)
    return {
        "input_path": str(input.resolve()) if input is not None else None,
        "out_root": str(out_root.resolve()),
        "database": database,
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in options.items()},
    }


def _scheduled_routing(
    mode: str, collections: list[str] | None, rules: Path | None
) -> dict[str, Any]:
    """Routing options as a deployment carries them: JSON values, absolute paths."""
    routing = _routing(mode, collections, rules)
    return {
        "routing": routing["routing"],
        "collections": list(routing["collections"]),
        "routing_rules": str(rules.resolve()) if rules is not None else None,
    }


def _api_url() -> str | None:
    return os.environ.get("PREFECT_API_URL") or None


ScheduleInput = Annotated[
    Path | None, typer.Argument(help="knowledge-queue JSONL read at every run (or --from-db)")
]
CronOpt = Annotated[str, typer.Option(help="cron schedule, e.g. '0 2 * * *' (UTC)")]
NameOpt = Annotated[str, typer.Option(help="deployment name")]
OutRootOpt = Annotated[Path, typer.Option(help="each run writes OUT_ROOT/<run-id>/")]
CommitOpt = Annotated[bool, typer.Option("--commit", help="store decisions in --db")]
FromDbOpt = Annotated[bool, typer.Option("--from-db", help="drain the knowledge_queue table")]


@app.command()
def serve(
    input: ScheduleInput = None,
    cron: CronOpt = "0 2 * * *",
    name: NameOpt = "nightly",
    out_root: OutRootOpt = Path("out"),
    commit: CommitOpt = False,
    from_db: FromDbOpt = False,
    db: DbOpt = None,
    threshold: ThresholdOpt = None,
    batch_size: Annotated[int, typer.Option(min=1, help="lines per Prefect task")] = 256,
    models: ModelsOpt = DEFAULT_MODELS_DIR,
    hub: HubOpt = DEFAULT_HUB_PATH,
    routing: RoutingOpt = "pins",
    collections: CollectionsOpt = None,
    routing_rules: RulesOpt = None,
) -> None:
    """Keep a scheduled deployment of the flow and run it here (Prefect `flow.serve`).

    Runs until stopped (Ctrl-C). With PREFECT_API_URL set the schedule is registered on
    that server; otherwise on a temporary local one that lives as long as this process.
    """
    options = {"threshold": threshold, "batch_size": batch_size, "hub_path": hub,
               "models_dir": models.resolve(),
               **_scheduled_routing(routing, collections, routing_rules)}  # fmt: skip
    options = {k: v for k, v in options.items() if v is not None}
    parameters = _scheduled_parameters(input, from_db, commit, db, out_root, options)
    _prefect_environment()
    from flows.scheduled import scheduled_run

    api = _api_url() or "a temporary local Prefect server (the schedule lives with this process)"
    err.print(f"serving deployment {name!r} on {escape(cron)} against {escape(api)}")
    scheduled_run.serve(name=name, cron=cron, parameters=parameters, print_starting_message=False)


@app.command()
def deploy(
    input: ScheduleInput = None,
    cron: CronOpt = "0 2 * * *",
    name: NameOpt = "nightly",
    pool: Annotated[str, typer.Option(help="process work pool (created if missing)")] = (
        "librarian"
    ),
    out_root: OutRootOpt = Path("out"),
    commit: CommitOpt = False,
    from_db: FromDbOpt = False,
    db: DbOpt = None,
    threshold: ThresholdOpt = None,
    batch_size: Annotated[int, typer.Option(min=1, help="lines per Prefect task")] = 256,
    models: ModelsOpt = DEFAULT_MODELS_DIR,
    hub: HubOpt = DEFAULT_HUB_PATH,
    routing: RoutingOpt = "pins",
    collections: CollectionsOpt = None,
    routing_rules: RulesOpt = None,
) -> None:
    """Register the scheduled deployment on the Prefect server at PREFECT_API_URL, for a
    worker to run: `prefect worker start --pool POOL` on a machine with this checkout."""
    if _api_url() is None:
        raise _usage_error("deploy registers against a Prefect server: set PREFECT_API_URL")
    options = {"threshold": threshold, "batch_size": batch_size,
               "hub_path": hub.resolve(), "models_dir": models.resolve(),
               **_scheduled_routing(routing, collections, routing_rules)}  # fmt: skip
    options = {k: v for k, v in options.items() if v is not None}
    parameters = _scheduled_parameters(input, from_db, commit, db, out_root, options)
    _prefect_environment()
    from prefect import Flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists

    from flows.scheduled import ENTRYPOINT, scheduled_run

    with get_client(sync_client=True) as client, suppress(ObjectAlreadyExists):
        client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
    root = Path(__file__).resolve().parents[1]
    deployable = scheduled_run.from_source(source=str(root), entrypoint=ENTRYPOINT)
    if not isinstance(deployable, Flow):  # from_source is synchronous outside an event loop
        raise typer.Exit(EXIT_FAILED)
    deployment_id = deployable.deploy(
        name=name, work_pool_name=pool, cron=cron, parameters=parameters,
        build=False, push=False, print_next_steps=False,
    )  # fmt: skip
    out.print(
        f"deployment {scheduled_run.name}/{name} ({deployment_id}) on {cron} in pool {pool!r}; "
        f"run a worker: prefect worker start --pool {pool}",
        highlight=False,
        soft_wrap=True,
    )


@review_app.command("export")
def review_export(
    db: DbOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="csv, jsonl or html")] = "csv",
    out_file: Annotated[Path | None, typer.Option("--out", help="default: stdout")] = None,
    status: Annotated[str, typer.Option(help="open, decided or all")] = "open",
    since: Annotated[
        datetime | None, typer.Option(help="only items created at or after this time (UTC)")
    ] = None,
) -> None:
    """Export the reviewers' queue, oldest first."""
    from sqlalchemy.orm import Session

    from store.db import make_engine
    from store.review import review_items, to_csv, to_html, to_jsonl

    if fmt not in ("csv", "jsonl", "html"):
        raise _usage_error(f"--format {fmt!r}: use csv, jsonl or html")
    if status not in ("open", "decided", "all"):
        raise _usage_error(f"--status {status!r}: use open, decided or all")
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    engine = make_engine(_database(db))
    try:
        with Session(engine) as session:
            items = review_items(session, status, since)
    finally:
        engine.dispose()
    text = to_csv(items) if fmt == "csv" else to_jsonl(items) if fmt == "jsonl" else to_html(items)
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text, encoding="utf-8")
    err.print(f"{len(items)} review items -> {escape(str(out_file))}", highlight=False)


@review_app.command("import")
def review_import(
    sheet: Annotated[Path, typer.Argument(help="a filled export (.csv or .jsonl)")],
    db: DbOpt = None,
    hub: HubOpt = DEFAULT_HUB_PATH,
) -> None:
    """Record reviewers' decisions: accept a suggestion, choose another CRE, or reject.

    Every row is checked first; any bad row refuses the whole sheet (exit 1), naming it.
    """
    from store.db import make_engine
    from store.review import ReviewImportError, apply_sheet, read_sheet

    try:
        rows = read_sheet(sheet)
    except ReviewImportError as exc:
        raise _usage_error(str(exc)) from exc
    hub_ids = set(_settings_hub(hub).ids)
    engine = make_engine(_database(db))
    try:
        result = apply_sheet(engine, rows, hub_ids, str(sheet))
    finally:
        engine.dispose()
    if result.errors:
        for problem in result.errors[:20]:
            err.print(f"[red]error:[/red] {escape(str(sheet))} {escape(problem)}", highlight=False)
        more = len(result.errors) - 20
        if more > 0:
            err.print(f"... and {more} more", highlight=False)
        err.print("nothing was recorded", highlight=False)
        raise typer.Exit(EXIT_FAILED)
    out.print(
        f"recorded: accepted {result.accepted}, chosen {result.chosen}, "
        f"rejected {result.rejected}; left open {result.left_open}",
        highlight=False,
    )


def _settings_hub(path: Path) -> Hub:
    try:
        return load_hub(path)
    except HubError as exc:
        raise _usage_error(f"hub catalogue refused: {exc}") from exc


@queue_app.command("load")
def queue_load(
    file: Annotated[Path, typer.Argument(help="queue rows, one JSON object a line")],
    db: DbOpt = None,
) -> None:
    """Append queue rows to the database's knowledge_queue, as the upstream filter does."""
    from store.db import StoreError, make_engine
    from store.queue import QueueLoadError, enqueue

    if not file.is_file():
        raise _usage_error(f"{file} does not exist")
    from pipeline.jsonl import JsonLineError, json_objects

    url = _database(db)
    with file.open(encoding="utf-8-sig") as handle:
        try:
            rows = list(json_objects(handle))
        except JsonLineError as exc:
            raise _usage_error(f"{file} {exc}") from exc
    engine = make_engine(url)
    try:
        count, ignored = enqueue(engine, rows)
    except (QueueLoadError, StoreError) as exc:
        raise _usage_error(str(exc)) from exc
    finally:
        engine.dispose()
    out.print(f"queued {count} rows in {_redacted(url)}", highlight=False)
    if ignored:
        out.print(f"columns the queue table has no place for, ignored: {', '.join(ignored)}")


def _redacted(url: str) -> str:
    from store.db import redacted

    return redacted(url)


@schema_app.command("export")
def schema_export(out_dir: Annotated[Path, typer.Argument(help="directory to write")]) -> None:
    """Write the JSON Schema of every contract into OUT_DIR."""
    from schemas.export import export_schemas

    for path in export_schemas(out_dir):
        out.print(str(path), highlight=False)


def main() -> None:
    app()
