"""Builds a Linker from settings: construction only, no rows read.

Everything a run needs is loaded and checked here, before any row: the hub (and team
catalogues), the trained models (required unless the uncalibrated scorer is asked for),
the embedder they were calibrated with, the hub index, the routing rules and classifier,
and the vector search (in memory, beam, or pgvector in the store).
"""

from __future__ import annotations

from pathlib import Path

from librarian.artifacts.card import (
    ModelDirError,
    TrainedModels,
    load_evidence,
    load_trained,
    recorded_embedder,
)
from librarian.catalogue.hub import Hub
from librarian.catalogue.teams import load_hubs
from librarian.errors import UsageError
from librarian.models.load import load_embedder
from librarian.models.transformer import CrossEncoderScorer
from librarian.pipeline.linker import Linker
from librarian.retrieval.beam import BeamRetriever
from librarian.retrieval.flat import Retriever
from librarian.retrieval.index import HubIndex, build_index
from librarian.retrieval.pgvector import PgVectorRetriever
from librarian.routing.classifier import ROUTER_NAME, BranchClassifier
from librarian.routing.collections import hub_collections
from librarian.routing.router import Router
from librarian.routing.rules import load_rules
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine


def build_linker(settings: LinkerSettings) -> Linker:
    """Load everything `settings` names, refusing what cannot serve a run."""
    hub = load_hubs(settings.hub_path, settings.extra_hubs)
    embedder = load_embedder(embedding_model_of(settings))
    index = build_index(hub, embedder, settings.cache_dir)
    trained = None
    if not settings.uncalibrated:
        assert settings.models_dir is not None  # embedding_model_of refused otherwise
        trained = load_trained(settings.models_dir, hub.content_hash, embedder.fingerprint)
        trained = load_evidence(trained, hub.ids, embedder.dimension)
    scorer = CrossEncoderScorer(settings.reranker_model) if settings.reranker_model else None
    retriever = build_retriever(settings, index, hub)
    router = build_router(settings, hub, trained)
    return Linker(hub, embedder, index, scorer, settings, trained, retriever, router)


def embedding_model_of(settings: LinkerSettings) -> Path | None:
    """The embedder to load: the one asked for, else the one the trained models record
    (None = the packaged torch MiniLM, for the uncalibrated scorer only)."""
    if settings.uncalibrated:
        return settings.embedding_model
    if settings.models_dir is None:
        raise ModelDirError("no trained model directory configured: run `librarian train`")
    recorded = recorded_embedder(settings.models_dir)
    return settings.embedding_model or recorded


def build_retriever(settings: LinkerSettings, index: HubIndex, hub: Hub) -> Retriever | None:
    """None = the in-memory flat search the Linker makes itself."""
    if settings.vector_backend == "pgvector":
        if settings.search == "beam":
            raise UsageError("beam search runs in memory, not in pgvector")
        if not settings.vector_db:
            raise UsageError("the pgvector backend needs a PostgreSQL database URL")
        return PgVectorRetriever(make_engine(settings.vector_db), index)
    if settings.search == "beam":
        return BeamRetriever(index, hub, settings.beam_width)
    return None


def build_router(settings: LinkerSettings, hub: Hub, trained: TrainedModels | None) -> Router:
    collections = hub_collections(hub)
    rules = load_rules(settings.routing_rules, list(collections)) if settings.routing_rules else ()
    classifier = None
    if settings.routing == "auto" and trained is not None:
        path = trained.directory / ROUTER_NAME
        classifier = BranchClassifier.load(path) if path.is_file() else None
    router = Router(collections, settings.routing, settings.collections, rules, classifier)
    router.check_pin()
    return router
