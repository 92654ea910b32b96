"""Run settings: every model path is configurable; defaults need nothing outside the repo."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.artifacts import DEFAULT_MODELS_DIR
from pipeline.hub import DEFAULT_HUB_PATH
from schemas.routing import RoutingMode

# Used only when no trained model directory supplies a threshold.
UNCALIBRATED_THRESHOLD = 0.80

DEFAULT_CACHE_DIR = Path(".cache") / "librarian"


class LinkerSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    hub_path: Path = DEFAULT_HUB_PATH
    extra_hubs: tuple[Path, ...] = Field(
        default=(), description="a team's own catalogues, one more collection each"
    )
    embedding_model: Path | None = Field(
        default=None, description="local sentence-transformers directory; None = packaged MiniLM"
    )
    reranker_model: Path | None = Field(
        default=None, description="local CrossEncoder directory; None = no rerank (declared)"
    )
    models_dir: Path | None = Field(
        default=DEFAULT_MODELS_DIR,
        description="what `librarian train` wrote; None or missing = uncalibrated (declared)",
    )
    cache_dir: Path | None = DEFAULT_CACHE_DIR
    threshold: float | None = Field(
        default=None, ge=0.0, le=1.0, description="None = the trained models' threshold"
    )
    rerank_gap: float | None = Field(
        default=None,
        ge=0.0,
        le=2.0,
        description="rerank only where the first two retrieval scores are within this; None = all",
    )
    top_k: int = Field(default=20, ge=1, le=1000)
    top_n: int = Field(default=5, ge=1, le=100)
    min_score: float = Field(default=0.0, ge=-1.0, le=1.0)
    batch_size: int = Field(default=256, ge=1, le=100_000)
    routing: RoutingMode = Field(
        default="pins",
        description="off: search every collection; pins: pins and rules may narrow; "
        "auto: also the trained branch classifier (docs/routing.md)",
    )
    collections: tuple[str, ...] = Field(default=(), description="pin every section to these")
    routing_rules: Path | None = Field(default=None, description="YAML routing rules")
    search: Literal["flat", "beam"] = Field(
        default="flat", description="flat: score every hub; beam: walk down the hub tree"
    )
    beam_width: int = Field(default=4, ge=1, le=100)
    vector_backend: Literal["memory", "pgvector"] = "memory"
    vector_db: str | None = Field(default=None, description="PostgreSQL URL for pgvector")
