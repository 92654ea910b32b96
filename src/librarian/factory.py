"""Builds a Pipeline from settings: construction only, no rows read.

Everything a run needs is loaded and checked here, before any row: the hub (and team
catalogues), the trained models (required unless the uncalibrated scorer is asked for),
the embedder they were calibrated with, the hub index, the routing rules and classifier,
and the vector search (in memory, beam, or pgvector in the store).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from librarian.artifacts.card import (
    ModelDirError,
    TrainedModels,
    check_embedder,
    load_evidence,
    load_trained,
    recorded_embedder,
)
from librarian.artifacts.source_model import SourceModel
from librarian.artifacts.verifier import Verifier
from librarian.catalogue.hub import Hub
from librarian.catalogue.teams import load_hubs
from librarian.errors import UsageError
from librarian.models.cache import CachingEmbedder, SqliteVectorCache
from librarian.models.load import EMBEDDER_MARKS, load_embedder
from librarian.models.seams import Embedder, PairScorer
from librarian.models.transformer import CrossEncoderScorer
from librarian.pipeline.batches import CompleteStage, PrepareStage
from librarian.pipeline.emit import DecideStage, EmitStage, SafetyStage, ScoreStage
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.plugins import plugged_stages
from librarian.pipeline.safety import NegationAndUpdateGuard
from librarian.pipeline.source_level import SourceLevelSlot
from librarian.pipeline.stages import (
    CalibratedScaler,
    EmbedStage,
    ExplicitStage,
    RawScaler,
    RerankStage,
    RetrieveStage,
    Scaler,
)
from librarian.policy import DecisionPolicy
from librarian.retrieval.beam import BeamRetriever
from librarian.retrieval.evidence import EvidenceIndex
from librarian.retrieval.flat import MemoryRetriever, Retriever
from librarian.retrieval.index import HubIndex, build_index
from librarian.routing.classifier import ROUTER_NAME, BranchClassifier
from librarian.routing.collections import hub_collections
from librarian.routing.router import Router
from librarian.routing.rules import Rule, load_rules
from librarian.settings import UNCALIBRATED_THRESHOLD, LinkerSettings

# Loaded models, one pipeline per settings per process: a Dask worker loads its own once,
# never receives one by pickle (hundreds of MB), and keeps it for every later batch.
_PIPELINES: dict[str, Pipeline] = {}


def pipeline_for(settings: LinkerSettings) -> Pipeline:
    """The pipeline `settings` name, built once per worker process (a Dask worker's tasks;
    the command that starts a run hands its own to the flow: `job.HandOff.pipeline`)."""
    key = settings.model_dump_json()
    if key not in _PIPELINES:
        _PIPELINES[key] = build_pipeline(settings)
    return _PIPELINES[key]


def check(settings: LinkerSettings) -> None:
    """Everything `build_pipeline` would refuse, without loading a model (for commands
    that hand the settings to a later run: `serve`, `deploy`)."""
    check_options(settings)
    if not settings.uncalibrated:
        assert settings.models_dir is not None
        load_trained(settings.models_dir)
        if settings.embedding_model is None:
            recorded_embedder(settings.models_dir)


@dataclass(frozen=True)
class Checked:
    """What checking the options loaded: the hub catalogue and the routing rules."""

    hub: Hub
    rules: tuple[Rule, ...]


def check_options(settings: LinkerSettings) -> Checked:
    """Refuse what cannot run before anything slow starts (exit 2, naming the option)."""
    hub = load_hubs(settings.hub_path, settings.extra_hubs)
    rules = check_routing(settings, hub)
    if settings.search == "beam" and settings.vector_backend != "memory":
        raise UsageError("--search beam runs in memory: not with --vector-backend pgvector")
    for what, path, marks in (
        ("--embedding-model", settings.embedding_model, EMBEDDER_MARKS),
        ("--reranker", settings.reranker_model, ("config.json",)),
    ):
        if path is not None and not any((path / mark).is_file() for mark in marks):
            raise UsageError(f"{what} {path} is not a model directory (no {' or '.join(marks)})")
    if settings.rerank_gap is not None and settings.reranker_model is None:
        raise UsageError("--rerank-gap needs --reranker")
    return Checked(hub, rules)


def check_routing(settings: LinkerSettings, hub: Hub) -> tuple[Rule, ...]:
    if settings.routing == "off" and (settings.collections or settings.routing_rules):
        raise UsageError("--routing off searches everything: drop --collections/--routing-rules")
    if settings.routing_rules is not None and not settings.routing_rules.is_file():
        raise UsageError(f"--routing-rules {settings.routing_rules} does not exist")
    collections = hub_collections(hub)
    Router(collections, settings.routing, settings.collections).check_pin()
    if settings.routing_rules is None:
        return ()
    return tuple(load_rules(settings.routing_rules, list(collections)))


def build_pipeline(settings: LinkerSettings, urls: Mapping[str, str] | None = None) -> Pipeline:
    """Check and load everything `settings` names, refusing what cannot serve a run.
    `urls`: the database URLs the caller holds, by reference (`store.db.known_urls`): a
    worker has none, and resolves `settings.vector_db` from its environment."""
    checked = check_options(settings)
    hub = checked.hub
    trained = None
    if not settings.uncalibrated:  # every file whole before any model loads
        if settings.models_dir is None:
            raise ModelDirError("no trained model directory configured: run `librarian train`")
        trained = load_trained(settings.models_dir, hub.content_hash)
    embedder = load_embedder(embedding_model_of(settings))
    if trained is not None:
        check_embedder(trained.directory, trained.card, embedder.fingerprint)
        trained = load_evidence(trained, hub.ids, embedder.dimension)
    index = build_index(hub, embedder, settings.cache_dir)
    if settings.cache_dir is not None:
        # Section vectors by content hash: a re-run of unchanged text does no model work.
        name = f"queries-{embedder.fingerprint[:16]}.sqlite"
        embedder = CachingEmbedder(
            embedder, SqliteVectorCache(settings.cache_dir / name, embedder.dimension)
        )
    scorer = CrossEncoderScorer(settings.reranker_model) if settings.reranker_model else None
    return assemble(
        settings,
        hub,
        embedder,
        index,
        scorer,
        trained,
        build_retriever(settings, index, hub, urls),
        build_router(settings, checked, trained),
    )


# The team's choices a run's settings make of its policy: each setting and the
# DecisionPolicy field it sets. Read by `decision_policy` and by `relink` (which applies
# those given on its command line to a source's stored policy): one map, so a new choice
# reaches both.
POLICY_SETTINGS = {
    "wrong_budget": "budget",
    "risk_confidence": "confidence",
    "risk": "risk",
    "threshold": "fixed_cut",
    "unmappable_cut": "unmappable_cut",
    "tolerated_wrong": "tolerated_wrong",
}


def decision_policy(
    settings: LinkerSettings, global_cut: float, joint: SourceModel | None = None
) -> DecisionPolicy:
    """How the run decides, built once: the team's risk (POLICY_SETTINGS: budget,
    confidence, guarantee, a cut set by hand, the unmappable cut, the wrong ones a band
    may hold) and the trained models' cuts (`global_cut`, and the joint model's margin)."""
    chosen = {field: getattr(settings, option) for option, field in POLICY_SETTINGS.items()}
    margin = joint.chosen_margin if joint is not None else 0.0
    return DecisionPolicy(**chosen, global_cut=global_cut, margin=margin).checked()


def assemble(
    settings: LinkerSettings,
    hub: Hub,
    embedder: Embedder,
    index: HubIndex,
    scorer: PairScorer | None = None,
    trained: TrainedModels | None = None,
    retriever: Retriever | None = None,
    router: Router | None = None,
) -> Pipeline:
    """The stages, in order, from loaded parts (tests hand in stand-ins for the models)."""
    evidence = trained.evidence if trained is not None else None
    retrieve = retrieve_stage(settings, hub, index, evidence, retriever, router)
    scaler, global_cut = scaler_of(settings, trained, scorer)
    joint = scaler.joint if isinstance(scaler, CalibratedScaler) else None
    models = {
        "embedding": embedder.name,
        "embedding_fingerprint": embedder.fingerprint[:16],
        "reranker": scorer.name if scorer else None,
        "calibrator": str(trained.directory)
        if isinstance(scaler, CalibratedScaler) and trained
        else None,
        "card": trained.card.card_sha256[:16] if trained else None,
    }
    guard = NegationAndUpdateGuard()
    preparing: list[PrepareStage] = [ExplicitStage(hub, guard), EmbedStage(embedder), retrieve]
    completing: list[CompleteStage] = [
        RerankStage(scorer, hub, settings.rerank_gap),
        ScoreStage(scaler, hub, settings.top_n),
        SafetyStage(guard),
        DecideStage(),
        EmitStage(index, evidence),
    ]
    for plugged in plugged_stages():
        plugged.join(preparing, completing, settings, hub)
    verifier = (
        Verifier.of(joint.verifier, scaler.calibrator, {n.cre_id: n.name for n in hub.nodes})
        if isinstance(scaler, CalibratedScaler) and joint is not None and joint.verifier
        else None
    )
    slot = SourceLevelSlot(joint, hub, decision_policy(settings, global_cut, joint), verifier)
    return Pipeline(hub, index, tuple(preparing), slot, tuple(completing), models)


def retrieve_stage(
    settings: LinkerSettings,
    hub: Hub,
    index: HubIndex,
    evidence: EvidenceIndex | None,
    retriever: Retriever | None = None,
    router: Router | None = None,
) -> RetrieveStage:
    """C.4 as a run has it; training scores its rows through the same stage."""
    router = router or Router(hub_collections(hub), mode=settings.routing, pin=settings.collections)
    search: Retriever = retriever or MemoryRetriever(index)
    return RetrieveStage(router, search, evidence, settings.top_k, settings.min_score)


def scaler_of(
    settings: LinkerSettings, trained: TrainedModels | None, scorer: PairScorer | None
) -> tuple[Scaler, float]:
    """C.7 and the global cut chosen with it. The calibrator was fitted on retrieval
    scores; a reranker's scores are another scale, so with one it stands aside."""
    if trained is not None and scorer is None:
        joint = trained.source_model if settings.source_level == "joint" else None
        scaler: Scaler = CalibratedScaler(trained.calibrator, trained.description, joint)
        threshold = trained.threshold
    elif trained is not None:
        why = "uncalibrated reranker score (the calibrator fits retrieval scores only)"
        scaler, threshold = RawScaler(True, why), UNCALIBRATED_THRESHOLD
    else:
        why = "uncalibrated cosine (asked for: no trained models used)"
        scaler, threshold = RawScaler(scorer is not None, why), UNCALIBRATED_THRESHOLD
    return scaler, threshold


def embedding_model_of(settings: LinkerSettings) -> Path | None:
    """The embedder to load: the one asked for, else the one the trained models record
    (None = the packaged torch MiniLM, for the uncalibrated scorer only)."""
    if settings.uncalibrated:
        return settings.embedding_model
    if settings.models_dir is None:
        raise ModelDirError("no trained model directory configured: run `librarian train`")
    recorded = recorded_embedder(settings.models_dir)
    return settings.embedding_model or recorded


def build_retriever(
    settings: LinkerSettings, index: HubIndex, hub: Hub, urls: Mapping[str, str] | None = None
) -> Retriever | None:
    """None = the in-memory flat search (`assemble` makes it)."""
    if settings.vector_backend == "pgvector":
        if settings.search == "beam":
            raise UsageError("beam search runs in memory, not in pgvector")
        if not settings.vector_db:
            raise UsageError("the pgvector backend needs a PostgreSQL database URL")
        # Imported here: SQLAlchemy costs ~0.4 s, and only this backend needs it here.
        from librarian.retrieval.pgvector import PgVectorRetriever
        from librarian.store.db import make_engine, resolve

        return PgVectorRetriever(make_engine(resolve(settings.vector_db, urls)), index)
    if settings.search == "beam":
        return BeamRetriever(index, hub, settings.beam_width)
    return None


def build_router(
    settings: LinkerSettings, checked: Checked, trained: TrainedModels | None
) -> Router:
    collections = hub_collections(checked.hub)
    classifier = None
    if settings.routing == "auto" and trained is not None:
        path = trained.directory / ROUTER_NAME
        classifier = BranchClassifier.load(path) if path.is_file() else None
    return Router(collections, settings.routing, settings.collections, checked.rules, classifier)
