"""Run settings: one typed model, the one place each default, bound and help text lives.

A field with `json_schema_extra={"option": "--name"}` is a command-line option of every
linking command (`cli/options.py` generates them from here: the option's default, range
and help are the field's). Paths to state (models, cache) are filled in by the caller from
the librarian home (`paths.librarian_home`) when not given; nothing here is relative to
the working directory. `factory.py` is the only place settings are checked and loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from librarian.paths import DEFAULT_HUB
from librarian.schemas.routing import RoutingMode

# Used only when the uncalibrated scorer is asked for explicitly.
UNCALIBRATED_THRESHOLD = 0.80
# The unmappable gate: the 5th percentile of the best hub cosine of the 1,174 packaged
# linked sections under the shipped int8 MiniLM (`python scripts/ood_gate.py`); learnt
# leave-one-framework-out it calls 6.6% of linked sections unmappable and catches 97.5% of
# off-topic text (docs/quality.md). Another embedder has another scale: measure it there.
UNMAPPABLE_CUT = 0.361
# `librarian train`'s random seed.
DEFAULT_SEED = 13
# A source's own decisions adapt its calibration once it has this many.
MIN_SOURCE_DECISIONS = 20


SearchKind = Literal["flat", "beam"]
VectorBackend = Literal["memory", "pgvector"]


def _opt(flag: str, help: str, ge: float | None = None, le: float | None = None) -> Any:
    """A field that is the command-line option `flag` with this help (and range)."""
    return Field(description=help, json_schema_extra={"option": flag}, ge=ge, le=le)


class LinkerSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    hub_path: Path = DEFAULT_HUB
    extra_hubs: tuple[Path, ...] = Field(
        default=(), description="a team's own catalogues, one more collection each"
    )
    embedding_model: Annotated[
        Path | None,
        _opt(
            "--embedding-model",
            "embedder directory: sentence-transformers, or an int8 ONNX build (default: the one "
            "the trained models record)",
        ),
    ] = None
    reranker_model: Annotated[
        Path | None, _opt("--reranker", "local CrossEncoder directory (default: none)")
    ] = None
    models_dir: Annotated[
        Path | None, _opt("--models", "trained model directory (default: models/ in the home)")
    ] = None
    uncalibrated: Annotated[
        bool,
        _opt(
            "--uncalibrated",
            "run without trained models: raw cosine as confidence, τ 0.80 (declared in every "
            "envelope)",
        ),
    ] = False
    cache_dir: Annotated[
        Path | None, _opt("--cache-dir", "vector caches (default: cache/ in the home)")
    ] = None
    threshold: Annotated[
        float | None,
        _opt(
            "--threshold",
            "auto-link threshold τ (default: the trained models' own)",
            ge=0.0,
            le=1.0,
        ),
    ] = None
    unmappable_cut: Annotated[
        float,
        _opt(
            "--unmappable-cut",
            "a section going to review whose best hub cosine is below this is marked "
            "UNMAPPABLE: no CRE covers it (0: no gate; docs/quality.md)",
            ge=0.0,
            le=1.0,
        ),
    ] = UNMAPPABLE_CUT
    wrong_budget: Annotated[
        float,
        _opt(
            "--wrong-budget",
            "the share of a source's auto-links that may be wrong: each source's cut is the "
            "lowest its evidence keeps within it (docs/quality.md)",
            ge=0.001,
            le=0.5,
        ),
    ] = 0.03
    risk: Annotated[
        Literal["bound", "links"],
        _opt(
            "--risk",
            "the guarantee each source's cut keeps, tested exactly on its reviewed items, "
            "within --wrong-budget with probability --risk-confidence: 'bound', the share "
            "wrong of its auto-links; 'links', the share wrong of all its links, the ones "
            "its people made and the auto-links together (what a graph other tools read "
            "needs; docs/guide.md says which certifies more). ('expected' was withdrawn: "
            "it did not hold on held-out frameworks, docs/quality.md)",
        ),
    ] = "links"
    tolerated_wrong: Annotated[
        int,
        _opt(
            "--tolerated-wrong",
            "how many wrong first suggestions among a band's reviewed items may still "
            "certify it (chosen before the data: a cut is tested only where its evidence "
            "could pass with this many wrong, and the plan asks for enough decisions; each "
            "one tolerated costs decisions: docs/guide.md)",
            ge=0,
            le=10,
        ),
    ] = 0
    risk_confidence: Annotated[
        float,
        _opt(
            "--risk-confidence",
            "the probability that a source's auto-links keep the budget",
            ge=0.5,
            le=0.999,
        ),
    ] = 0.90
    rerank_gap: Annotated[
        float | None,
        _opt(
            "--rerank-gap",
            "with --reranker: rerank only sections whose first two retrieval scores are within "
            "this gap",
            ge=0.0,
            le=2.0,
        ),
    ] = None
    top_k: Annotated[int, _opt("--top-k", "candidates retrieved", ge=1, le=1000)] = 20
    top_n: Annotated[int, _opt("--top-n", "suggestions kept (and reranked)", ge=1, le=100)] = 5
    min_score: float = Field(default=0.0, ge=-1.0, le=1.0)
    batch_size: int = Field(default=256, ge=1, le=100_000, description="lines per Prefect task")
    allow_withdraw: bool = Field(
        default=False,
        description="commit mode, a document's input: withdraw what it no longer holds even "
        "when some of its rows or pages could not be read or were refused, or when more "
        "than half of the document would leave it (otherwise held back, and said)",
    )
    routing: Annotated[
        RoutingMode,
        _opt(
            "--routing",
            "off: every collection; pins: an input/--collections pin or a rule may narrow; auto: "
            "also the trained branch classifier (docs/routing.md)",
        ),
    ] = "pins"
    source_level: Annotated[
        Literal["joint", "off"],
        _opt(
            "--source-level",
            "joint: link each source's sections as a whole, with its reviewers' decisions "
            "setting its calibration; off: each section alone (docs/quality.md)",
        ),
    ] = "joint"
    collections: Annotated[
        tuple[str, ...],
        _opt(
            "--collections",
            "pin every section to these hub collections (repeatable, or comma-separated)",
        ),
    ] = ()
    routing_rules: Annotated[
        Path | None, _opt("--routing-rules", "YAML routing rules (docs/routing.md)")
    ] = None
    search: Annotated[
        SearchKind, _opt("--search", "flat: score every hub; beam: walk down the hub tree")
    ] = "flat"
    beam_width: Annotated[
        int, _opt("--beam-width", "beam search: nodes kept a level", ge=1, le=100)
    ] = 4
    vector_backend: Annotated[
        VectorBackend,
        _opt(
            "--vector-backend", "where hub vectors are searched (pgvector: in the PostgreSQL --db)"
        ),
    ] = "memory"
    vector_db: str | None = Field(default=None, description="PostgreSQL URL for pgvector")


def option_fields() -> dict[str, str]:
    """Each field that is a command-line option, with its option name, in field order."""
    out: dict[str, str] = {}
    for name, field in LinkerSettings.model_fields.items():
        extra = field.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get("option"), str):
            out[name] = str(extra["option"])
    return out


def default_of(field: str) -> Any:
    """A LinkerSettings field's default, for the CLI's option defaults."""
    return LinkerSettings.model_fields[field].default


def help_of(field: str) -> str:
    return LinkerSettings.model_fields[field].description or ""


def choices_of(field: str) -> tuple[str, ...]:
    """A field's choices (its `Literal`): the one list of them."""
    return tuple(get_args(LinkerSettings.model_fields[field].annotation))


def bounds_of(field: str) -> dict[str, float]:
    """A field's numeric bounds (`min`, `max`), for the CLI's range checks."""
    out: dict[str, float] = {}
    for constraint in LinkerSettings.model_fields[field].metadata:
        for attr, key in (("ge", "min"), ("le", "max")):
            value = getattr(constraint, attr, None)
            if value is not None:
                out[key] = value
    return out
