"""`librarian train`: builds the model directory the pipeline reads, from link data.

What ships is what beat zero-shot on leave-one-framework-out dev (docs/quality.md):
today that is the confidence calibrator and the auto-link threshold chosen from
out-of-fold confidences. The retriever stays zero-shot: every trained ranker tried
(exemplar kNN, learned score combinations, a cross-encoder from the MiniLM weights)
lost to it on dev.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from librarian.catalogue.hub import Hub, load_hub
from librarian.errors import RunError
from librarian.integrity import files_problem, sha256_of
from librarian.learning.calibrate import (
    CalibrationError,
    Calibrator,
    choose_threshold,
    fit_calibrator,
    reliability,
    top_features,
)
from librarian.learning.links import LinkedSection, TrainingLink, curated_sections, links_digest
from librarian.learning.modeldir import (
    CALIBRATOR_NAME,
    CARD_NAME,
    CardData,
    CardModels,
    ModelCard,
    ModelDirError,
    OutOfFold,
    read_card,
)
from librarian.models.load import load_embedder
from librarian.models.seams import Embedder, Vectors
from librarian.retrieval.flat import RETRIEVER_ID, retrieve
from librarian.retrieval.index import HubIndex, build_index
from librarian.routing.classifier import ROUTER_NAME, BranchClassifier
from librarian.routing.collections import hub_collections
from librarian.routing.router import Router
from librarian.stages.ingest import section_from_text

# Bumped whenever what training computes changes: a model directory built by an older
# version is rebuilt, never reused.
TRAINING_VERSION = "2"

# At most this share of auto-links may be wrong at the shipped threshold.
MAX_WRONG_RATE = 0.03

Progress = Callable[[str, int, int], None]


class TrainingError(RunError):
    """Training cannot go on (no data left, one class only); the message says why."""


@dataclass(frozen=True)
class TrainOptions:
    links: tuple[TrainingLink, ...]
    links_sources: tuple[str, ...]  # where the links came from, for the card
    links_sha256: str
    exclude_frameworks: tuple[str, ...] = ()
    top_k: int = 20
    max_wrong_rate: float = MAX_WRONG_RATE
    seed: int = 13


@dataclass(frozen=True)
class ScoredSection:
    section: LinkedSection
    scores: tuple[float, ...]  # retriever scores, best first
    ids: tuple[str, ...]

    @property
    def top_correct(self) -> bool:
        return bool(self.ids) and self.ids[0] in self.section.cre_ids


@dataclass
class TrainResult:
    calibrator: Calibrator
    threshold: float
    card: ModelCard
    router: BranchClassifier | None = None


def score_sections(
    sections: Sequence[LinkedSection],
    embedder: Embedder,
    index: HubIndex,
    top_k: int,
    vectors: Vectors | None = None,
) -> list[ScoredSection]:
    if vectors is None:
        vectors = embedder.encode([s.text for s in sections])
    hits = retrieve(vectors, index, top_k)
    return [
        ScoredSection(s, tuple(h.score for h in row), tuple(h.cre_id for h in row))
        for s, row in zip(sections, hits, strict=True)
    ]


def out_of_fold_confidence(
    scored: Sequence[ScoredSection], progress: Progress | None = None
) -> list[float]:
    """Each framework's confidences from a calibrator fitted without that framework."""
    frameworks = sorted({s.section.framework_id for s in scored})
    confidence = [0.0] * len(scored)
    for done, held in enumerate(frameworks, start=1):
        fit_rows = [s for s in scored if s.section.framework_id != held]
        calibrator = fit_calibrator(
            [top_features(s.scores) for s in fit_rows],
            [s.top_correct for s in fit_rows],
            "retrieval",
        )
        for i, s in enumerate(scored):
            if s.section.framework_id == held:
                confidence[i] = calibrator.probability(*top_features(s.scores))
        if progress:
            progress("calibration folds", done, len(frameworks))
    return confidence


def training_sections(options: TrainOptions, hub: Hub) -> list[LinkedSection]:
    """The curated sections training reads, the excluded frameworks left out."""
    excluded = set(options.exclude_frameworks)
    unknown = excluded - {link.framework_id for link in options.links}
    if unknown:
        raise TrainingError(
            f"frameworks to exclude are not in the links: {', '.join(sorted(unknown))}"
        )
    sections = [
        s
        for s in curated_sections(options.links, known_cres=hub.by_id)
        if s.framework_id not in excluded
    ]
    frameworks = {s.framework_id for s in sections}
    if len(frameworks) < 2:
        raise TrainingError(
            "calibration is fitted on framework-held-out folds and needs curated links with "
            f"text from at least two frameworks; {len(frameworks)} left after exclusions"
        )
    return sections


def card_data(options: TrainOptions, hub: Hub, sections: Sequence[LinkedSection]) -> CardData:
    frameworks = Counter(s.framework_id for s in sections)
    return CardData(
        links_sources=list(options.links_sources),
        links_sha256=options.links_sha256,
        hub_sha256=hub.content_hash,
        hub_nodes=len(hub.ids),
        sections=len(sections),
        frameworks_seen=dict(sorted(frameworks.items())),
        frameworks_excluded=sorted(set(options.exclude_frameworks)),
    )


def train(
    options: TrainOptions,
    hub: Hub,
    embedder: Embedder,
    index: HubIndex,
    progress: Progress | None = None,
) -> TrainResult:
    started = time.perf_counter()
    sections = training_sections(options, hub)
    if progress:
        progress("embedding sections", 0, len(sections))
    vectors = embedder.encode([s.text for s in sections])
    scored = score_sections(sections, embedder, index, options.top_k, vectors)
    if progress:
        progress("embedding sections", len(sections), len(sections))

    correct = [s.top_correct for s in scored]
    try:
        oof = out_of_fold_confidence(scored, progress)
        calibrator = fit_calibrator([top_features(s.scores) for s in scored], correct, "retrieval")
    except CalibrationError as exc:
        raise TrainingError(f"cannot calibrate on these links: {exc}") from exc
    threshold = choose_threshold(oof, correct, options.max_wrong_rate)
    oof_ece, _ = reliability(oof, correct)
    auto = [c for c, conf in zip(correct, oof, strict=True) if conf >= threshold]
    router, router_card = fit_router(sections, vectors, hub)
    card = ModelCard(
        trained_at=datetime.now(UTC).isoformat(timespec="seconds"),
        seconds=round(time.perf_counter() - started, 1),
        data=card_data(options, hub, sections),
        models=CardModels(
            embedding=embedder.name,
            embedding_fingerprint=embedder.fingerprint,
            retriever=RETRIEVER_ID,
            calibrator="logistic(top score, margin over the runner-up)",
        ),
        parameters={
            "top_k": options.top_k,
            "max_wrong_rate": options.max_wrong_rate,
            "seed": options.seed,
        },
        threshold=threshold,
        out_of_fold=OutOfFold(
            how="leave-one-framework-out over the training frameworks",
            top1=round(sum(correct) / len(correct), 4),
            ece=round(oof_ece, 4),
            auto_linked=len(auto),
            auto_link_wrong=len(auto) - sum(auto),
            rows=len(correct),
        ),
        router=router_card,
        environment={"python": platform.python_version()},
    )
    return TrainResult(calibrator=calibrator, threshold=threshold, card=card, router=router)


def fit_router(
    sections: Sequence[LinkedSection], vectors: Vectors, hub: Hub
) -> tuple[BranchClassifier | None, dict[str, object]]:
    """The branch classifier `--routing auto` uses, and how often, out of fold, the router's
    selection held a collection of the section's CRE (what narrowing would have lost)."""
    collections = hub_collections(hub)
    branch_of = {cre: name for name, ids in collections.items() for cre in ids}
    rows = [(i, branch_of[c]) for i, s in enumerate(sections) for c in sorted(s.cre_ids)]
    rows = list(dict.fromkeys(rows))
    if len({b for _, b in rows}) < 2:
        return None, {"trained": False, "why": "links reach fewer than two collections"}
    x = vectors[[i for i, _ in rows]]
    labels = [b for _, b in rows]
    held_in, narrowed, total = 0, 0, 0
    for held in sorted({s.framework_id for s in sections}):
        fit = [j for j, (i, _) in enumerate(rows) if sections[i].framework_id != held]
        if len({labels[j] for j in fit}) < 2:
            continue
        fold = BranchClassifier.fit(x[fit], [labels[j] for j in fit], {})
        router = Router(collections, mode="auto", classifier=fold)
        for i, s in enumerate(sections):
            if s.framework_id != held:
                continue
            decision = router.route(section_from_text(s.text), vectors[i])
            total += 1
            narrowed += len(decision.selected) < len(collections)
            held_in += any(branch_of[c] in decision.selected for c in s.cre_ids)
    card: dict[str, object] = {
        "trained": True,
        "what": "logistic regression: section vector -> collection (root branch) of its CRE",
        "collections": {name: len(ids) for name, ids in collections.items()},
        "samples": len(rows),
        "out_of_fold": {
            "how": "leave-one-framework-out, router rule as shipped",
            "sections": total,
            "narrowed": narrowed,
            "answer_kept": held_in,
        },
    }
    return BranchClassifier.fit(x, labels, {"collections": sorted(collections)}), card


def save(result: TrainResult, out_dir: Path, embedding_model: Path | None = None) -> ModelCard:
    """Write the calibrator, then the card last: a directory with a card is complete.

    `embedding_model` (None = the packaged MiniLM) is recorded relative to `out_dir`, so
    `run` reads scores on the scale the calibrator was fitted on."""
    out_dir.mkdir(parents=True, exist_ok=True)
    card_path = out_dir / CARD_NAME
    card_path.unlink(missing_ok=True)
    result.calibrator.save(out_dir / CALIBRATOR_NAME)
    files = {CALIBRATOR_NAME: sha256_of(out_dir / CALIBRATOR_NAME)}
    (out_dir / ROUTER_NAME).unlink(missing_ok=True)
    if result.router is not None:
        result.router.save(out_dir / ROUTER_NAME)
        files[ROUTER_NAME] = sha256_of(out_dir / ROUTER_NAME)
    recorded = (
        None
        if embedding_model is None
        else os.path.relpath(embedding_model.resolve(), out_dir.resolve())
    )
    card = result.card.model_copy(
        update={
            "models": result.card.models.model_copy(update={"embedding_model": recorded}),
            "files": files,
        }
    )
    tmp = out_dir / (CARD_NAME + ".part")
    tmp.write_text(card.model_dump_json(indent=2) + "\n")
    tmp.replace(card_path)
    return card


@dataclass(frozen=True)
class TrainRequest:
    """What `librarian train` was asked to build, and from what."""

    out_dir: Path
    links: tuple[TrainingLink, ...]
    links_sources: tuple[str, ...]
    hub_path: Path
    embedding_model: Path | None
    cache_dir: Path | None
    exclude_frameworks: tuple[str, ...] = ()
    seed: int = 13
    force: bool = False


def recipe_of(request: TrainRequest, hub: Hub, embedder: Embedder) -> str:
    """Everything a model directory is a function of: same recipe, same models."""
    material = {
        "training": TRAINING_VERSION,
        "links": links_digest(request.links),
        "hub": hub.content_hash,
        "embedder": embedder.fingerprint,
        "exclude": sorted(request.exclude_frameworks),
        "seed": request.seed,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def current_card(out_dir: Path, recipe: str) -> ModelCard | None:
    """The card of a complete model directory built from `recipe`, else None."""
    try:
        card = read_card(out_dir)
    except ModelDirError:
        return None
    whole = not files_problem(out_dir, card.files)
    return card if whole and card.recipe == recipe else None


def train_directory(
    request: TrainRequest, progress: Progress | None = None
) -> tuple[ModelCard, bool]:
    """Load what training reads, train, and write the model directory. Returns its card and
    whether it was trained now (False: the directory was already built from this recipe)."""
    hub = load_hub(request.hub_path)
    embedder = load_embedder(request.embedding_model)
    recipe = recipe_of(request, hub, embedder)
    if not request.force and (card := current_card(request.out_dir, recipe)) is not None:
        return card, False
    index = build_index(hub, embedder, request.cache_dir)
    options = TrainOptions(
        links=request.links,
        links_sources=request.links_sources,
        links_sha256=links_digest(request.links),
        exclude_frameworks=request.exclude_frameworks,
        seed=request.seed,
    )
    result = train(options, hub, embedder, index, progress)
    result.card = result.card.model_copy(update={"recipe": recipe})
    return save(result, request.out_dir, request.embedding_model), True
