# ruff: noqa: RUF009 - option defaults are immutable values read once from LinkerSettings
"""Every CLI option, defined once. Defaults come from `LinkerSettings`, never re-typed.

Options several commands share come in groups: `@with_linker_options` gives a command the
whole set a linker needs (hub, models, thresholds, routing, search ...) as one
`linker: LinkerOptions`, and `@with_schedule_options` the set `serve` and `deploy` share,
so `run`, `explain`, `eval`, `serve` and `deploy` take exactly the same model options.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_type_hints

import typer

from librarian.schemas.routing import RoutingMode
from librarian.settings import SearchKind, VectorBackend, bounds_of, default_of
from librarian.training.links import DEV_FRAMEWORKS


def opt(name: str, help: str, field: str | None = None, **extra: Any) -> Any:
    """A typer Option; `field` names the LinkerSettings field whose bounds it takes."""
    bounds = bounds_of(field) if field else {}
    return typer.Option(name, help=help, min=bounds.get("min"), max=bounds.get("max"), **extra)


TaskRunner = Literal["default", "dask"]
ExportFormat = Literal["csv", "jsonl", "html", "human-decision"]
ItemStatus = Literal["open", "decided", "all"]

# The help of each option, by option.
_HELP = {
    "home": "the librarian home: models, caches, the default database (default: LIBRARIAN_HOME, "
    "else the user data directory)",
    "db": "database URL (default: LIBRARIAN_DB, else librarian.db in the home)",
    "hubs": "hub catalogue (default: the packaged OpenCRE hub); repeat to add a team's own "
    "catalogue as another collection",
    "hub": "hub catalogue (default: the packaged OpenCRE hub)",
    "threshold": "auto-link threshold τ (default: the trained models' own)",
    "models": "trained model directory (default: models/ in the home)",
    "uncalibrated": "run without trained models: raw cosine as confidence, τ 0.80 (declared "
    "in every envelope)",
    "top_k": "candidates retrieved",
    "top_n": "suggestions kept (and reranked)",
    "batch_size": "lines per Prefect task",
    "reranker": "local CrossEncoder directory (default: none)",
    "rerank_gap": "with --reranker: rerank only sections whose first two retrieval scores are "
    "within this gap",
    "routing": "off: every collection; pins: an input/--collections pin or a rule may narrow; "
    "auto: also the trained branch classifier",
    "collections": "pin every section to these hub collections (repeatable)",
    "routing_rules": "YAML routing rules (docs/routing.md)",
    "search": "flat: score every hub; beam: walk down the hub tree",
    "beam_width": "beam search: nodes kept a level",
    "vector_backend": "where hub vectors are searched (pgvector: in the PostgreSQL --db)",
    "embedding_model": "embedder directory: sentence-transformers, or an int8 ONNX build "
    "(default: the one the trained models record)",
    "cache_dir": "vector caches (default: cache/ in the home)",
    "input": "knowledge-queue JSONL read at every run (or --from-db)",
    "cron": "cron schedule, e.g. '0 2 * * *' (UTC)",
    "name": "deployment name",
    "out_root": "each run writes OUT_ROOT/<run-id>/",
    "commit": "store decisions in --db",
    "from_db": "drain the knowledge_queue table",
    "links": "links.jsonl file, or a database URL for the reviewers' decisions (repeatable; "
    "default: the packaged OpenCRE links)",
    "section_texts": "section prose, section_texts.jsonl format (default: the packaged prose of "
    "1,174 linked sections)",
    "exclude": "leave this framework out (repeatable)",
    "holdout_dev": f"also leave out the dev frameworks ({', '.join(DEV_FRAMEWORKS)})",
    "models_out": "model directory to write (default: models/ in the home)",
    "int8_out": "directory to write (default: models/embedder-int8 in the home)",
    "source": "sentence-transformers directory (default: the packaged MiniLM)",
    "seed": "random seed",
    "force": "train even when the models are up to date",
}

HomeOpt = Annotated[Path | None, opt("--home", _HELP["home"], show_default=False)]
DbOpt = Annotated[str | None, opt("--db", _HELP["db"])]
HubsOpt = Annotated[list[Path] | None, opt("--hub", _HELP["hubs"], show_default=False)]
HubOpt = Annotated[Path | None, opt("--hub", _HELP["hub"])]
ThresholdOpt = Annotated[float | None, opt("--threshold", _HELP["threshold"], "threshold")]
ModelsOpt = Annotated[Path | None, opt("--models", _HELP["models"])]
UncalibratedOpt = Annotated[bool, opt("--uncalibrated", _HELP["uncalibrated"])]
TopKOpt = Annotated[int, opt("--top-k", _HELP["top_k"], "top_k")]
TopNOpt = Annotated[int, opt("--top-n", _HELP["top_n"], "top_n")]
BatchOpt = Annotated[int, opt("--batch-size", _HELP["batch_size"], "batch_size")]
RerankerOpt = Annotated[Path | None, opt("--reranker", _HELP["reranker"])]
RerankGapOpt = Annotated[float | None, opt("--rerank-gap", _HELP["rerank_gap"], "rerank_gap")]
RoutingOpt = Annotated[RoutingMode, opt("--routing", _HELP["routing"])]
CollectionsOpt = Annotated[list[str] | None, opt("--collections", _HELP["collections"])]
RulesOpt = Annotated[Path | None, opt("--routing-rules", _HELP["routing_rules"])]
SearchOpt = Annotated[SearchKind, opt("--search", _HELP["search"])]
BeamWidthOpt = Annotated[int, opt("--beam-width", _HELP["beam_width"], "beam_width")]
VectorOpt = Annotated[VectorBackend, opt("--vector-backend", _HELP["vector_backend"])]
EmbeddingOpt = Annotated[Path | None, opt("--embedding-model", _HELP["embedding_model"])]
CacheOpt = Annotated[Path | None, opt("--cache-dir", _HELP["cache_dir"])]
ScheduleInputArg = Annotated[Path | None, typer.Argument(help=_HELP["input"])]
CronOpt = Annotated[str, opt("--cron", _HELP["cron"])]
NameOpt = Annotated[str, opt("--name", _HELP["name"])]
OutRootOpt = Annotated[Path, opt("--out-root", _HELP["out_root"])]
CommitOpt = Annotated[bool, opt("--commit", _HELP["commit"])]
FromDbOpt = Annotated[bool, opt("--from-db", _HELP["from_db"])]
# `librarian run`'s own.
InputArg = Annotated[
    Path | None,
    typer.Argument(help="queue JSONL, or a CSV / JSONL table or Markdown (omit with --from-db)"),
]
OutOpt = Annotated[Path | None, opt("--out", "default out/<run-id>/")]
DryRunOpt = Annotated[bool, opt("--dry-run/--commit", "write files only / write the database")]
DrainOpt = Annotated[
    bool, opt("--from-db", "drain the database's knowledge_queue (implies --commit)")
]
TaskRunnerOpt = Annotated[
    TaskRunner, opt("--task-runner", "this process, or batches over Dask workers")
]
DaskAddressOpt = Annotated[
    str | None,
    opt("--dask-address", "Dask scheduler, e.g. tcp://host:8786 (default: a local cluster)"),
]
DaskWorkersOpt = Annotated[
    int, typer.Option("--dask-workers", min=1, help="workers of the local Dask cluster (processes)")
]
RunIdOpt = Annotated[str | None, opt("--run-id", "default run-<utc time>-<random>")]
DocumentOpt = Annotated[
    str | None,
    opt(
        "--source",
        "a plain input's document name, e.g. 'Our Standard 2.0' (default: the file's name)",
    ),
]
QuietOpt = Annotated[bool, opt("--quiet", "no progress, no summary table: errors only")]
JsonOpt = Annotated[bool, opt("--json", "the run summary as JSON on stdout (for scripts)")]
PlanOpt = Annotated[
    bool,
    opt("--plan", "show the stages the run would take, its source and sinks; read no row"),
]
LinksOpt = Annotated[list[str] | None, opt("--links", _HELP["links"])]
SectionTextsOpt = Annotated[Path | None, opt("--section-texts", _HELP["section_texts"])]
ExcludeOpt = Annotated[list[str] | None, opt("--exclude-framework", _HELP["exclude"])]
HoldoutDevOpt = Annotated[bool, opt("--holdout-dev", _HELP["holdout_dev"])]
ModelsOutOpt = Annotated[Path | None, opt("--out", _HELP["models_out"])]
Int8OutOpt = Annotated[Path | None, opt("--out", _HELP["int8_out"])]
SourceOpt = Annotated[Path | None, opt("--source", _HELP["source"])]
SeedOpt = Annotated[int, opt("--seed", _HELP["seed"])]
ForceOpt = Annotated[bool, opt("--force", _HELP["force"])]


@dataclass(frozen=True)
class LinkerOptions:
    """The options every linking command shares: each field's annotation is its option and
    its default the option's default, so this class is the one definition of both."""

    hub: HubsOpt = None
    threshold: ThresholdOpt = None
    top_k: TopKOpt = default_of("top_k")
    top_n: TopNOpt = default_of("top_n")
    reranker: RerankerOpt = None
    rerank_gap: RerankGapOpt = None
    routing: RoutingOpt = default_of("routing")
    collections: CollectionsOpt = None
    routing_rules: RulesOpt = None
    search: SearchOpt = default_of("search")
    beam_width: BeamWidthOpt = default_of("beam_width")
    embedding_model: EmbeddingOpt = None
    models: ModelsOpt = None
    uncalibrated: UncalibratedOpt = False
    cache_dir: CacheOpt = None
    vector_backend: VectorOpt = default_of("vector_backend")
    db: DbOpt = None
    home: HomeOpt = None


@dataclass(frozen=True)
class ScheduleOptions:
    """What `serve` and `deploy` share: what each scheduled run reads and where it writes."""

    input: ScheduleInputArg = None
    cron: CronOpt = "0 2 * * *"
    name: NameOpt = "nightly"
    out_root: OutRootOpt = Path("out")
    commit: CommitOpt = False
    from_db: FromDbOpt = False
    batch_size: BatchOpt = default_of("batch_size")


F = TypeVar("F", bound=Callable[..., Any])


def _group(into: type[Any], keyword: str) -> Callable[[F], F]:
    """A decorator adding the options `into`'s fields declare to a command, which receives
    them as one `keyword: into(...)` (its own parameters first, the group's after)."""
    hints = get_type_hints(into, include_extras=True)
    kind = inspect.Parameter.KEYWORD_ONLY
    added = [
        inspect.Parameter(f.name, kind, default=f.default, annotation=hints[f.name])
        for f in fields(into)
    ]

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        own = [p for name, p in signature.parameters.items() if name != keyword]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            group = into(**{p.name: kwargs.pop(p.name) for p in added})
            return command(*args, **{keyword: group}, **kwargs)

        parameters = own + added
        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        wrapper.__annotations__["return"] = signature.return_annotation
        return wrapper  # type: ignore[return-value]

    return decorate


with_linker_options = _group(LinkerOptions, "linker")
with_schedule_options = _group(ScheduleOptions, "schedule")
