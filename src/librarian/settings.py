"""Run settings: one typed model, the one place each default, bound and help text lives.

A field with `json_schema_extra={"option": "--name"}` is a command-line option of every
linking command (`cli/options.py` generates them from here: the option's default, range
and help are the field's). Paths to state (models, cache) are filled in by the caller from
the librarian home (`paths.librarian_home`) when not given; nothing here is relative to
the working directory. `factory.py` is the only place settings are checked and loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from librarian.paths import DEFAULT_HUB
from librarian.schemas.routing import RoutingMode

# Used only when the uncalibrated scorer is asked for explicitly.
UNCALIBRATED_THRESHOLD = 0.80
# `librarian train`'s random seed.
DEFAULT_SEED = 13


SearchKind = Literal["flat", "beam"]
VectorBackend = Literal["memory", "pgvector"]


def _option(name: str) -> dict[str, Any]:
    return {"option": name}


class LinkerSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    hub_path: Path = DEFAULT_HUB
    extra_hubs: tuple[Path, ...] = Field(
        default=(), description="a team's own catalogues, one more collection each"
    )
    embedding_model: Path | None = Field(
        default=None,
        description="embedder directory: sentence-transformers, or an int8 ONNX build "
        "(default: the one the trained models record)",
        json_schema_extra=_option("--embedding-model"),
    )
    reranker_model: Path | None = Field(
        default=None,
        description="local CrossEncoder directory (default: none)",
        json_schema_extra=_option("--reranker"),
    )
    models_dir: Path | None = Field(
        default=None,
        description="trained model directory (default: models/ in the home)",
        json_schema_extra=_option("--models"),
    )
    uncalibrated: bool = Field(
        default=False,
        description="run without trained models: raw cosine as confidence, τ 0.80 (declared "
        "in every envelope)",
        json_schema_extra=_option("--uncalibrated"),
    )
    cache_dir: Path | None = Field(
        default=None,
        description="vector caches (default: cache/ in the home)",
        json_schema_extra=_option("--cache-dir"),
    )
    threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="auto-link threshold τ (default: the trained models' own)",
        json_schema_extra=_option("--threshold"),
    )
    rerank_gap: float | None = Field(
        default=None,
        ge=0.0,
        le=2.0,
        description="with --reranker: rerank only sections whose first two retrieval scores "
        "are within this gap",
        json_schema_extra=_option("--rerank-gap"),
    )
    top_k: int = Field(
        default=20,
        ge=1,
        le=1000,
        description="candidates retrieved",
        json_schema_extra=_option("--top-k"),
    )
    top_n: int = Field(
        default=5,
        ge=1,
        le=100,
        description="suggestions kept (and reranked)",
        json_schema_extra=_option("--top-n"),
    )
    min_score: float = Field(default=0.0, ge=-1.0, le=1.0)
    batch_size: int = Field(default=256, ge=1, le=100_000, description="lines per Prefect task")
    routing: RoutingMode = Field(
        default="pins",
        description="off: every collection; pins: an input/--collections pin or a rule may "
        "narrow; auto: also the trained branch classifier (docs/routing.md)",
        json_schema_extra=_option("--routing"),
    )
    collections: tuple[str, ...] = Field(
        default=(),
        description="pin every section to these hub collections (repeatable, or comma-separated)",
        json_schema_extra=_option("--collections"),
    )
    routing_rules: Path | None = Field(
        default=None,
        description="YAML routing rules (docs/routing.md)",
        json_schema_extra=_option("--routing-rules"),
    )
    search: SearchKind = Field(
        default="flat",
        description="flat: score every hub; beam: walk down the hub tree",
        json_schema_extra=_option("--search"),
    )
    beam_width: int = Field(
        default=4,
        ge=1,
        le=100,
        description="beam search: nodes kept a level",
        json_schema_extra=_option("--beam-width"),
    )
    vector_backend: VectorBackend = Field(
        default="memory",
        description="where hub vectors are searched (pgvector: in the PostgreSQL --db)",
        json_schema_extra=_option("--vector-backend"),
    )
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


def bounds_of(field: str) -> dict[str, float]:
    """A field's numeric bounds (`min`, `max`), for the CLI's range checks."""
    out: dict[str, float] = {}
    for constraint in LinkerSettings.model_fields[field].metadata:
        for attr, key in (("ge", "min"), ("le", "max")):
            value = getattr(constraint, attr, None)
            if value is not None:
                out[key] = value
    return out
