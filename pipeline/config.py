"""Run settings: every model path is configurable; defaults need nothing outside the repo."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pipeline.hub import DEFAULT_HUB_PATH

DEFAULT_CACHE_DIR = Path(".cache") / "librarian"


class LinkerSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    hub_path: Path = DEFAULT_HUB_PATH
    embedding_model: Path | None = Field(
        default=None, description="local sentence-transformers directory; None = packaged MiniLM"
    )
    reranker_model: Path | None = Field(
        default=None, description="local CrossEncoder directory; None = no rerank (declared)"
    )
    cache_dir: Path | None = DEFAULT_CACHE_DIR
    threshold: float = Field(default=0.80, ge=0.0, le=1.0)
    top_k: int = Field(default=20, ge=1, le=1000)
    top_n: int = Field(default=5, ge=1, le=100)
    min_score: float = Field(default=0.0, ge=-1.0, le=1.0)
    batch_size: int = Field(default=256, ge=1, le=100_000)
