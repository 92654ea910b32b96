# ruff: noqa: RUF009 - option defaults are immutable values read once from LinkerSettings
"""Every CLI option, defined once. The linker's options are generated from the
`LinkerSettings` fields that name one (their default, range and help are the field's).

Options several commands share come in groups: `@with_linker_options` gives a command the
whole set a linker needs (hub, models, thresholds, routing, search ...) as one
`linker: LinkerOptions`, and `@with_schedule_options` the set `serve` and `deploy` share,
so `run`, `explain`, `eval`, `serve` and `deploy` take exactly the same model options.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin, get_type_hints

import typer

from librarian.models.encoders import Encoder
from librarian.pipeline.shapes import in_words
from librarian.settings import (
    DEFAULT_SEED,
    LinkerSettings,
    bounds_of,
    default_of,
    help_of,
    option_fields,
)
from librarian.training.links import DEV_FRAMEWORKS


def opt(name: str, help: str, field: str | None = None, **extra: Any) -> Any:
    """A typer Option; `field` names the LinkerSettings field whose bounds it takes (else
    `extra` may give them: min=, max=)."""
    bounds = {**(bounds_of(field) if field else {}), **extra}
    low, high = bounds.pop("min", None), bounds.pop("max", None)
    return typer.Option(name, help=help, min=low, max=high, **bounds)


TaskRunner = Literal["default", "dask"]
ExportFormat = Literal["csv", "jsonl", "html", "human-decision", "myopencre"]
# Items (open, decided, all) for the sheets; links (confirmed, linked) for myopencre.
ExportStatus = Literal["open", "decided", "all", "confirmed", "linked", "auto"]
ItemStatus = Literal["open", "decided", "all"]
ReviewOrder = Literal["file", "product", "random", "plan"]
HyperlinkBaseOpt = Annotated[
    str | None,
    typer.Option(
        "--hyperlink-base",
        help="myopencre: where a section without a URL of its own links: its id replaces "
        "{id} in it, or is appended as #id (e.g. https://intranet.example/policy)",
    ),
]
SidecarOpt = Annotated[
    Path | None,
    typer.Option(
        "--sidecar",
        help="myopencre: also write each link's status (AUTO_MAPPED or USER_CONFIRMED) and "
        "the linker's confidence to this JSON file (OpenCRE imports every link alike)",
    ),
]


# `librarian eval`'s warm protocol.
ReviewedOpt = Annotated[
    int | None,
    typer.Option(
        "--reviewed",
        min=1,
        help="warm: K rows of each source stand for its reviewers' decisions (their expected "
        "links); only the rest are scored",
    ),
]
ReviewOrderOpt = Annotated[
    ReviewOrder,
    typer.Option(
        "--review-order",
        help="with --reviewed: file, the first K linked rows of each source; product, the K "
        "the librarian asks its reviewers for first (chosen from the text alone); random, K "
        "drawn at random (--draws of them, from --seed); plan, K decided one at a time as "
        "the review plan asks, re-planned after each, as the workbench does (--draws of them)",
    ),
]
DrawsOpt = Annotated[
    int,
    typer.Option(
        "--draws",
        min=1,
        max=10_000,
        help="with --review-order random or plan: how many review samples to score, each "
        "one entry of the report's draws (what the run said, what it auto-linked, how "
        "much of it was wrong)",
    ),
]
ReviewedFirstOpt = Annotated[
    int | None,
    typer.Option("--reviewed-first", min=1, help="--reviewed K --review-order file, as before"),
]

# The help of each option, by option.
REVIEWER_ENV = "LIBRARIAN_REVIEWER"
TOKEN_ENV = "LIBRARIAN_REVIEW_TOKEN"
_HELP = {
    "home": "the librarian home: models, caches, the default database (default: LIBRARIAN_HOME, "
    "else the user data directory)",
    "db": "database URL (default: LIBRARIAN_DB, else librarian.db in the home)",
    "hubs": "hub catalogue (default: the packaged OpenCRE hub); repeat to add a team's own "
    "catalogue as another collection",
    "hub": "hub catalogue (default: the packaged OpenCRE hub)",
    "input": "knowledge-queue JSONL read at every run (or --from-db)",
    "cron": "cron schedule, e.g. '0 2 * * *' (UTC)",
    "name": "deployment name",
    "out_root": "each run writes OUT_ROOT/<run-id>/",
    "commit": "store decisions in --db",
    "from_db": "drain the knowledge_queue table",
    "links": "more links, added to the packaged OpenCRE links (repeatable): a links.jsonl "
    "file; `reviews` (the reviewers' decisions in the home's database, or LIBRARIAN_DB) or a "
    "database URL; a filled review sheet; a HumanDecision export",
    "replace_links": "learn from the --links alone, not the packaged OpenCRE links",
    "section_texts": "section prose, section_texts.jsonl format (default: the packaged prose of "
    "1,174 linked sections)",
    "exclude": "leave this framework out (repeatable)",
    "holdout_dev": f"also leave out the dev frameworks ({', '.join(DEV_FRAMEWORKS)})",
    "models_out": "model directory to write (default: models/ in the home)",
    "embedder_out": "directory to write (default: models/embedder-int8, or embedder-openvino, in "
    "the home)",
    "encoder": "the embedder to build and run: int8 (ONNX, the default) or openvino (bf16 on "
    "CPUs that have it; faster on some, not all: scripts/bench_encoders.py says which; "
    "pip install 'librarian[openvino]')",
    "source": "sentence-transformers directory (default: the packaged MiniLM)",
    "seed": "random seed",
    "force": "train even when the models are up to date",
    "since": "only items created at or after this time (UTC)",
    "reason": "only items of this reason, e.g. UNMAPPABLE: the sections no CRE covers, to "
    "propose new CREs from",
    "sheet": "a filled export (.csv or .jsonl), or HumanDecision JSONL",
    "lead": "a lead reviewer, who may change anyone's decision (repeatable); every reviewer "
    "may change their own",
    "host": "address to bind",
    "workbench_port": "the workbench's port",
    "server_port": "the Prefect server's port",
    "reviewer": f"one person's workbench on this machine (also {REVIEWER_ENV}; loopback "
    "only); without it, reviewers sign in (`review reviewers add NAME`)",
    "reviews": "a dry run's reviews.jsonl; decisions go to a SQLite file beside it "
    "(FILE.decisions.db)",
    "token": f"access token (also {TOKEN_ENV}); required to bind anything but 127.0.0.1",
    "qa_every": "a reviewer's waiting QA check (`review qa`) comes after every N decisions "
    "(0: never)",
    "format": "csv, jsonl or html: the items; human-decision: the decisions, as RFC "
    "HumanDecision JSONL; myopencre: the links, as the CSV OpenCRE imports",
    "export_out": "default: stdout",
    "status": "which items: open (the default), decided or all; for myopencre, which links: "
    "confirmed (by a person, the default), auto (made automatically) or linked (both)",
    "change": "a decision that differs from the one standing supersedes it (kept in the "
    "history) when the importing --reviewer made that one, or is a --lead",
    "made_lead": "may change anyone's decision and rule on QA",
    "ruling_lead": "the lead ruling",
    "by": "who asks: a registered reviewer, proven by their key (LIBRARIAN_KEY)",
    "share": "share of the decisions not yet checked",
    "draw_seed": "repeat a draw",
    "pool": "process work pool (created if missing)",
    "every_dead": "every dead letter",
    "limit": "how many hits",
    "title": "title hint",
    "prior_text": "the text as it was decided before: explain TEXT as its new version "
    "(update detection evaluated)",
    "plot": "draw the reliability diagram into this PNG",
    "rows": "write each scored row's outcome here (JSONL), for paired tests",
}

# The workbench, the Prefect server, reviewer QA and the other commands' own.
HostOpt = Annotated[str, opt("--host", _HELP["host"])]
WorkbenchPortOpt = Annotated[int, opt("--port", _HELP["workbench_port"], min=1, max=65535)]
ServerPortOpt = Annotated[int, opt("--port", _HELP["server_port"], min=1, max=65535)]
ReviewerOpt = Annotated[str | None, opt("--reviewer", _HELP["reviewer"])]
ReviewsFileOpt = Annotated[Path | None, opt("--reviews", _HELP["reviews"])]
TokenOpt = Annotated[str | None, opt("--token", _HELP["token"])]
QaEveryOpt = Annotated[int, opt("--qa-every", _HELP["qa_every"], min=0)]
ExportFormatOpt = Annotated[ExportFormat, opt("--format", _HELP["format"])]
ExportOutOpt = Annotated[Path | None, opt("--out", _HELP["export_out"])]
ExportStatusOpt = Annotated[ExportStatus | None, opt("--status", _HELP["status"])]
ChangeOpt = Annotated[bool, opt("--change", _HELP["change"])]
MadeLeadOpt = Annotated[bool, opt("--lead", _HELP["made_lead"])]
RulingLeadOpt = Annotated[str, opt("--lead", _HELP["ruling_lead"])]
ByOpt = Annotated[str, opt("--by", _HELP["by"])]
ShareOpt = Annotated[float, opt("--share", _HELP["share"], min=0.001, max=1.0)]
DrawSeedOpt = Annotated[int | None, opt("--seed", _HELP["draw_seed"])]
PoolOpt = Annotated[str, opt("--pool", _HELP["pool"])]
EveryDeadOpt = Annotated[bool, opt("--all", _HELP["every_dead"])]
LimitOpt = Annotated[int, opt("--limit", _HELP["limit"], min=1, max=200)]
TitleOpt = Annotated[str | None, opt("--title", _HELP["title"])]
PriorTextOpt = Annotated[str | None, opt("--prior-text", _HELP["prior_text"])]
PlotOpt = Annotated[Path | None, opt("--plot", _HELP["plot"])]
RowsOpt = Annotated[Path | None, opt("--rows", _HELP["rows"])]

HomeOpt = Annotated[Path | None, opt("--home", _HELP["home"], show_default=False)]
DbOpt = Annotated[str | None, opt("--db", _HELP["db"])]
HubsOpt = Annotated[list[Path] | None, opt("--hub", _HELP["hubs"], show_default=False)]
LeadOpt = Annotated[list[str] | None, opt("--lead", _HELP["lead"], show_default=False)]
SinceOpt = Annotated[datetime | None, opt("--since", _HELP["since"])]
ReasonOpt = Annotated[str | None, opt("--reason", _HELP["reason"])]
SheetArg = Annotated[Path, typer.Argument(help=_HELP["sheet"])]
HubOpt = Annotated[Path | None, opt("--hub", _HELP["hub"])]
ScheduleInputArg = Annotated[Path | None, typer.Argument(help=_HELP["input"])]
CronOpt = Annotated[str, opt("--cron", _HELP["cron"])]
NameOpt = Annotated[str, opt("--name", _HELP["name"])]
OutRootOpt = Annotated[Path, opt("--out-root", _HELP["out_root"])]
CommitOpt = Annotated[bool, opt("--commit", _HELP["commit"])]
FromDbOpt = Annotated[bool, opt("--from-db", _HELP["from_db"])]
# `librarian run`'s own.
InputArg = Annotated[
    Path | None,
    typer.Argument(help=f"{in_words()} (omit with --from-db)"),
]
OutOpt = Annotated[
    Path | None,
    opt("--out", "a new or empty folder, or an earlier run's (default out/<run-id>/)"),
]
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
        "the standard: a plain input's document name, e.g. 'Our Standard 2.0' (default: "
        "the file's name)",
    ),
]
SourceKeyOpt = Annotated[
    str, opt("--source", "the standard: its source key (`librarian queue status` lists them)")
]
QuietOpt = Annotated[bool, opt("--quiet", "no progress, no summary table: errors only")]
VerboseOpt = Annotated[
    bool, opt("--verbose", "Prefect's INFO lines too (a line a batch, the flow's start and end)")
]
# `--json` means one thing in every command: what it would print, as JSON on stdout.
JsonOpt = Annotated[
    bool, opt("--json", "what the command would print, as JSON on stdout (for scripts)")
]
ReportOpt = Annotated[Path | None, opt("--report", "also write the report here (JSON)")]
PlanOpt = Annotated[
    bool,
    opt("--plan", "show the stages the run would take, its source and sinks; read no row"),
]
LinksOpt = Annotated[list[str] | None, opt("--links", _HELP["links"])]
SectionTextsOpt = Annotated[Path | None, opt("--section-texts", _HELP["section_texts"])]
ExcludeOpt = Annotated[list[str] | None, opt("--exclude-framework", _HELP["exclude"])]
HoldoutDevOpt = Annotated[bool, opt("--holdout-dev", _HELP["holdout_dev"])]
ModelsOutOpt = Annotated[Path | None, opt("--out", _HELP["models_out"])]
EmbedderOutOpt = Annotated[Path | None, opt("--out", _HELP["embedder_out"])]
EncoderOpt = Annotated[Encoder, opt("--encoder", _HELP["encoder"])]
# `--source` names a standard everywhere (a run's document, a source key); a model's
# directory to quantise is `--model-dir`.
ModelDirOpt = Annotated[Path | None, opt("--model-dir", _HELP["source"])]
SeedOpt = Annotated[int, opt("--seed", _HELP["seed"])]
ForceOpt = Annotated[bool, opt("--force", _HELP["force"])]
ReplaceLinksOpt = Annotated[bool, opt("--replace-links", _HELP["replace_links"])]
SkipInvalidOpt = Annotated[
    bool,
    opt(
        "--skip-invalid",
        "learn from the decisions of a --links file that the store accepts, leaving the ones "
        "it refuses (each named); without it, any refusal stops training",
    ),
]


def setting_option(field: str, name: str | None = None) -> Any:
    """The option of a LinkerSettings field: its name (unless `name` gives one the field
    does not), help and range are the field's."""
    bounds = bounds_of(field)
    flag = name or option_fields()[field]
    return typer.Option(flag, help=help_of(field), min=bounds.get("min"), max=bounds.get("max"))


def _setting_parameter(field: str) -> inspect.Parameter:
    info = LinkerSettings.model_fields[field]
    annotation: Any = info.annotation
    default = info.default
    if get_origin(annotation) is tuple:  # a repeatable option
        annotation, default = list[get_args(annotation)[0]] | None, None  # type: ignore[misc]
    return inspect.Parameter(
        field,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[annotation, setting_option(field)],
    )


EmbeddingOpt = Annotated[Path | None, setting_option("embedding_model")]
CacheOpt = Annotated[Path | None, setting_option("cache_dir")]
# Not an option of every linking command (explain reads one text): `run`, `serve`, `deploy`.
BatchOpt = Annotated[int, setting_option("batch_size", "--batch-size")]
AllowWithdrawOpt = Annotated[bool, setting_option("allow_withdraw", "--allow-withdraw")]


@dataclass(frozen=True)
class LinkerOptions:
    """The options every linking command shares: `--hub`, `--db`, `--home` and one option
    per LinkerSettings field that names one (`values`, by field, as given)."""

    values: Mapping[str, Any]
    hub: list[Path] | None = None
    db: str | None = None
    home: Path | None = None
    given: frozenset[str] = frozenset()  # the fields set on the command line or environment

    @property
    def vector_backend(self) -> str:
        return str(self.values.get("vector_backend", default_of("vector_backend")))


def chosen(context: Any, names: Iterable[str]) -> frozenset[str]:
    """The options of `names` a person set (on the command line, or in the environment):
    a default is no choice."""
    sources = {name: context.get_parameter_source(name) for name in names}
    return frozenset(n for n, s in sources.items() if s is not None and s.name in _SET_BY_HAND)


_SET_BY_HAND = frozenset({"COMMANDLINE", "ENVIRONMENT"})


def with_linker_options(command: F) -> F:
    """Give `command` every LinkerOptions option; it receives them as `linker=`."""
    own = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=hint)
        for name, hint in (("hub", HubsOpt), ("db", DbOpt), ("home", HomeOpt))
    ]
    context = inspect.Parameter(
        "linker_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context
    )
    added = [context, *own, *(_setting_parameter(f) for f in option_fields())]

    def collect(kwargs: dict[str, Any]) -> LinkerOptions:
        values = {f: kwargs.pop(f) for f in option_fields()}
        hub, db, home = (kwargs.pop(n) for n in ("hub", "db", "home"))
        return LinkerOptions(values, hub, db, home, chosen(kwargs.pop("linker_context"), values))

    return _with_parameters(command, "linker", added, collect)


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


def _with_parameters(
    command: F,
    keyword: str,
    added: list[inspect.Parameter],
    collect: Callable[[dict[str, Any]], Any],
) -> F:
    """`command` with the options `added` after its own; `collect` turns their values into
    the one `keyword=` argument the command receives."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for name, p in signature.parameters.items() if name != keyword]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        group = collect(kwargs)
        return command(*args, **{keyword: group}, **kwargs)

    parameters = own + added
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    wrapper.__annotations__["return"] = signature.return_annotation
    return wrapper  # type: ignore[return-value]


def _with_group(command: F, keyword: str, group: type[Any]) -> F:
    """Give `command` the options of the dataclass `group`; it receives them as one
    `keyword=` argument, an instance of `group`."""
    hints = get_type_hints(group, include_extras=True)
    kind = inspect.Parameter.KEYWORD_ONLY
    added = [
        inspect.Parameter(f.name, kind, default=f.default, annotation=hints[f.name])
        for f in fields(group)
    ]

    def collect(kwargs: dict[str, Any]) -> Any:
        return group(**{p.name: kwargs.pop(p.name) for p in added})

    return _with_parameters(command, keyword, added, collect)


def with_schedule_options(command: F) -> F:
    """Give `command` the ScheduleOptions options; it receives them as `schedule=`."""
    return _with_group(command, "schedule", ScheduleOptions)


@dataclass(frozen=True)
class WarmOptions:
    """`librarian eval`'s warm protocol: which rows stand for a source's reviewers'
    decisions, in which order, over how many draws."""

    reviewed_k: ReviewedOpt = None
    review_order: ReviewOrderOpt = "file"
    reviewed_first: ReviewedFirstOpt = None
    draws: DrawsOpt = 1
    seed: SeedOpt = DEFAULT_SEED


def with_warm_options(command: F) -> F:
    """Give `command` the WarmOptions options; it receives them as `warm=`."""
    return _with_group(command, "warm", WarmOptions)
