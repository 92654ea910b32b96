"""Run settings: one typed model, whose field defaults are the only place defaults live.

The CLI reads its option defaults from here (`default_of`), so 20, 5, 256 ... are
written once. Paths to state (models, cache) are filled in by the caller from the
librarian home (`paths.librarian_home`); nothing here is relative to the working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from librarian.paths import DEFAULT_HUB
from librarian.schemas.routing import RoutingMode

# Used only when the uncalibrated scorer is asked for explicitly.
UNCALIBRATED_THRESHOLD = 0.80


SearchKind = Literal["flat", "beam"]
VectorBackend = Literal["memory", "pgvector"]


class LinkerSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    hub_path: Path = DEFAULT_HUB
    extra_hubs: tuple[Path, ...] = Field(
        default=(), description="a team's own catalogues, one more collection each"
    )
    embedding_model: Path | None = Field(
        default=None,
        description="embedder directory; None = the one the trained models record "
        "(or the packaged torch MiniLM when uncalibrated)",
    )
    reranker_model: Path | None = Field(
        default=None, description="local CrossEncoder directory; None = no rerank (declared)"
    )
    models_dir: Path | None = Field(
        default=None, description="what `librarian train` wrote; required unless uncalibrated"
    )
    uncalibrated: bool = Field(
        default=False,
        description="run on raw cosine scores without trained models (declared everywhere)",
    )
    cache_dir: Path | None = Field(default=None, description="vector caches; None = no cache")
    threshold: float | None = Field(
        default=None, ge=0.0, le=1.0, description="None = the trained models' threshold"
    )
    rerank_gap: float | None = Field(
        default=None,
        ge=0.0,
        le=2.0,
        description="rerank only where the first two retrieval scores are within this; None = all",
    )
    top_k: int = Field(default=20, ge=1, le=1000, description="candidates retrieved")
    top_n: int = Field(default=5, ge=1, le=100, description="reranked / suggested kept")
    min_score: float = Field(default=0.0, ge=-1.0, le=1.0)
    batch_size: int = Field(default=256, ge=1, le=100_000, description="lines per Prefect task")
    routing: RoutingMode = Field(
        default="pins",
        description="off: search every collection; pins: pins and rules may narrow; "
        "auto: also the trained branch classifier (docs/routing.md)",
    )
    collections: tuple[str, ...] = Field(default=(), description="pin every section to these")
    routing_rules: Path | None = Field(default=None, description="YAML routing rules")
    search: SearchKind = Field(
        default="flat", description="flat: score every hub; beam: walk down the hub tree"
    )
    beam_width: int = Field(default=4, ge=1, le=100, description="beam search: nodes kept a level")
    vector_backend: VectorBackend = "memory"
    vector_db: str | None = Field(default=None, description="PostgreSQL URL for pgvector")


def default_of(field: str) -> Any:
    """A LinkerSettings field's default, for the CLI's option defaults."""
    return LinkerSettings.model_fields[field].default


def bounds_of(field: str) -> dict[str, float]:
    """A field's numeric bounds (`min`, `max`), for the CLI's range checks."""
    out: dict[str, float] = {}
    for constraint in LinkerSettings.model_fields[field].metadata:
        for attr, key in (("ge", "min"), ("le", "max")):
            value = getattr(constraint, attr, None)
            if value is not None:
                out[key] = value
    return out
