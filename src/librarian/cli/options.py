"""Every CLI option, defined once. Defaults come from `LinkerSettings`, never re-typed.

The options a linker needs (hub, models, thresholds, routing, search ...) are added to a
command by `@with_linker_options`, which gathers them into one `LinkerOptions`; `run`,
`explain`, `eval`, `serve` and `deploy` all take exactly the same set.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from librarian.contracts.routing import RoutingMode
from librarian.settings import SearchKind, VectorBackend, bounds_of, default_of


def _range(field: str) -> dict[str, Any]:
    return bounds_of(field)


class TaskRunner(StrEnum):
    DEFAULT = "default"
    DASK = "dask"


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"
    HTML = "html"


class ItemStatus(StrEnum):
    OPEN = "open"
    DECIDED = "decided"
    ALL = "all"


HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        help="the librarian home: trained models, caches, the default database "
        "(default: LIBRARIAN_HOME, else the user data directory)",
        show_default=False,
    ),
]
DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="database URL (default: LIBRARIAN_DB, else librarian.db in the home)",
        show_default=False,
    ),
]
HubsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--hub",
        help="hub catalogue (hubs.jsonl format; default: the packaged OpenCRE hub); repeat to "
        "add a team's own catalogue as another collection",
        show_default=False,
    ),
]
HubOpt = Annotated[
    Path | None,
    typer.Option(
        "--hub", help="hub catalogue (default: the packaged OpenCRE hub)", show_default=False
    ),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        **_range("threshold"),
        help="auto-link threshold τ (default: the trained models' own)",
        show_default=False,
    ),
]
ModelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--models",
        help="trained model directory (default: models/ in the home; `librarian train`)",
        show_default=False,
    ),
]
UncalibratedOpt = Annotated[
    bool,
    typer.Option(
        "--uncalibrated",
        help="run without trained models: raw cosine as confidence, τ 0.80 (declared in "
        "every envelope)",
    ),
]
TopKOpt = Annotated[int, typer.Option("--top-k", **_range("top_k"), help="candidates retrieved")]
TopNOpt = Annotated[
    int, typer.Option("--top-n", **_range("top_n"), help="suggestions kept (and reranked)")
]
BatchOpt = Annotated[
    int, typer.Option("--batch-size", **_range("batch_size"), help="lines per Prefect task")
]
RerankerOpt = Annotated[
    Path | None,
    typer.Option("--reranker", help="local CrossEncoder directory (default: none, declared)"),
]
RerankGapOpt = Annotated[
    float | None,
    typer.Option(
        **_range("rerank_gap"),
        help="with --reranker: rerank only sections whose first two retrieval scores are "
        "within this gap (default: rerank all)",
        show_default=False,
    ),
]
RoutingOpt = Annotated[
    RoutingMode,
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
    SearchKind, typer.Option("--search", help="flat: score every hub; beam: walk down the hub tree")
]
BeamWidthOpt = Annotated[
    int,
    typer.Option("--beam-width", **_range("beam_width"), help="beam search: nodes kept a level"),
]
VectorOpt = Annotated[
    VectorBackend,
    typer.Option(
        "--vector-backend", help="memory, or pgvector (hub vectors in the PostgreSQL --db)"
    ),
]
EmbeddingOpt = Annotated[
    Path | None,
    typer.Option(
        "--embedding-model",
        help="embedder directory: sentence-transformers, or an int8 ONNX build (default: the "
        "one the trained models record)",
        show_default=False,
    ),
]
CacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir", help="vector caches (default: cache/ in the home)", show_default=False
    ),
]


@dataclass(frozen=True)
class LinkerOptions:
    """The options every linking command shares, as given on the command line."""

    hub: list[Path] | None
    threshold: float | None
    top_k: int
    top_n: int
    reranker: Path | None
    rerank_gap: float | None
    routing: RoutingMode
    collections: list[str] | None
    routing_rules: Path | None
    search: SearchKind
    beam_width: int
    embedding_model: Path | None
    models: Path | None
    uncalibrated: bool
    cache_dir: Path | None
    vector_backend: VectorBackend
    db: str | None
    home: Path | None


_LINKER_PARAMETERS: dict[str, tuple[Any, Any]] = {
    "hub": (HubsOpt, None),
    "threshold": (ThresholdOpt, None),
    "top_k": (TopKOpt, default_of("top_k")),
    "top_n": (TopNOpt, default_of("top_n")),
    "reranker": (RerankerOpt, None),
    "rerank_gap": (RerankGapOpt, None),
    "routing": (RoutingOpt, default_of("routing")),
    "collections": (CollectionsOpt, None),
    "routing_rules": (RulesOpt, None),
    "search": (SearchOpt, default_of("search")),
    "beam_width": (BeamWidthOpt, default_of("beam_width")),
    "embedding_model": (EmbeddingOpt, None),
    "models": (ModelsOpt, None),
    "uncalibrated": (UncalibratedOpt, False),
    "cache_dir": (CacheOpt, None),
    "vector_backend": (VectorOpt, default_of("vector_backend")),
    "db": (DbOpt, None),
    "home": (HomeOpt, None),
}
assert set(_LINKER_PARAMETERS) == {f.name for f in fields(LinkerOptions)}

F = TypeVar("F", bound=Callable[..., Any])


def with_linker_options(command: F) -> F:
    """Add every linker option to `command`, which receives them as `linker: LinkerOptions`
    (its own parameters first, the shared ones after, all keyword options)."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for name, p in signature.parameters.items() if name != "linker"]
    taken = {p.name for p in own}
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann)
        for name, (ann, default) in _LINKER_PARAMETERS.items()
        if name not in taken
    ]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _LINKER_PARAMETERS if name not in taken}
        shared_own = {name: kwargs[name] for name in _LINKER_PARAMETERS if name in taken}
        return command(*args, linker=LinkerOptions(**given, **shared_own), **kwargs)

    parameters = own + shared
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    wrapper.__annotations__["return"] = signature.return_annotation
    return wrapper  # type: ignore[return-value]
