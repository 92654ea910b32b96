"""`librarian train`: builds the model directory the pipeline reads, from link data.

Three things are learnt, all from the sections already linked into OpenCRE (titles and,
where the shared data has it, prose):
- the **evidence** each hub gets from the sections linked to it (`evidence.npz`);
- the **calibrator**, fitted on prose and title sections scored as a run scores them,
  each with the evidence of every framework but its own; and the auto-link threshold,
  chosen from out-of-fold confidences (leave one framework out);
- the **branch classifier** `--routing auto` uses.
What ships, and what was tried and did not: docs/quality.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from librarian.artifacts.calibrator import CalibrationError, Calibrator
from librarian.artifacts.card import (
    CALIBRATOR_NAME,
    CARD_NAME,
    CardData,
    CardModels,
    ModelCard,
    ModelDirError,
    OutOfFold,
    read_card,
)
from librarian.artifacts.source_model import JOINT_FEATURES, SOURCE_MODEL_NAME, SourceModel
from librarian.catalogue.hub import Hub, load_hub
from librarian.errors import RunError
from librarian.factory import retrieve_stage
from librarian.integrity import files_problem, sha256_of
from librarian.models.cache import CachingEmbedder, SqliteVectorCache
from librarian.models.load import load_embedder
from librarian.models.seams import Embedder
from librarian.policy.threshold import pick_threshold
from librarian.retrieval.collective import NO_RULE
from librarian.retrieval.evidence import (
    EVIDENCE_NAME,
    EVIDENCE_WEIGHT,
    RETRIEVER_ID,
    EvidenceIndex,
    Exemplar,
)
from librarian.retrieval.index import HubIndex, build_index
from librarian.routing.classifier import ROUTER_NAME, BranchClassifier
from librarian.settings import DEFAULT_SEED, LinkerSettings, default_of
from librarian.training.branch import fit_router
from librarian.training.calibrate import reliability
from librarian.training.links import (
    LinkedSection,
    TrainingLink,
    linked_sections,
    links_digest,
    load_section_texts,
)
from librarian.training.risk import fit_prior
from librarian.training.scoring import (
    Progress,
    ScoredSection,
    calibrate,
    out_of_fold_confidence,
    score_sections,
)
from librarian.training.sources import fit_shrinkage, fit_sources
from librarian.training.verifier import fit_verifier

# Bumped whenever what training computes changes: a model directory built by an older
# version is rebuilt, never reused.
TRAINING_VERSION = "10"

# At most this share of auto-links may be wrong at the shipped threshold.
MAX_WRONG_RATE = default_of("wrong_budget")  # the one budget: settings.wrong_budget


class TrainingError(RunError):
    """Training cannot go on (no data left, one class only); the message says why."""


@dataclass(frozen=True)
class TrainOptions:
    links: tuple[TrainingLink, ...]
    links_sources: tuple[str, ...]  # where the links came from, for the card
    links_sha256: str
    prose: Mapping[tuple[str, str], str]  # section prose by (framework, section id)
    prose_sha256: str = ""
    exclude_frameworks: tuple[str, ...] = ()
    top_k: int = default_of("top_k")
    max_wrong_rate: float = MAX_WRONG_RATE
    seed: int = DEFAULT_SEED


@dataclass
class TrainResult:
    calibrator: Calibrator
    threshold: float
    evidence: EvidenceIndex
    card: ModelCard
    source_model: SourceModel
    router: BranchClassifier | None = None


def training_sections(options: TrainOptions, hub: Hub) -> list[LinkedSection]:
    """Every linked section training reads (both styles), the excluded frameworks left out."""
    excluded = set(options.exclude_frameworks)
    unknown = excluded - {link.framework_id for link in options.links}
    if unknown:
        raise TrainingError(
            f"frameworks to exclude are not in the links: {', '.join(sorted(unknown))}"
        )
    sections = [
        s
        for s in linked_sections(options.links, options.prose, known_cres=hub.by_id)
        if s.framework_id not in excluded
    ]
    curated = {s.framework_id for s in sections if s.curated}
    if len(curated) < 2:
        raise TrainingError(
            "calibration is fitted on framework-held-out folds and needs curated links with "
            f"text from at least two frameworks; {len(curated)} left after exclusions"
        )
    return sections


def build_evidence(
    sections: Sequence[LinkedSection], hub: Hub, embedder: Embedder
) -> tuple[EvidenceIndex, list[ScoredInput]]:
    """Every section describes the hubs it is linked to; the curated ones are also the
    labelled rows the calibrator learns from (with their vectors)."""
    exemplars = [
        Exemplar(s.framework_id, s.section_id, s.style, s.text, s.cre_ids) for s in sections
    ]
    vectors = embedder.encode([s.text for s in sections])
    labelled = [ScoredInput(s, i) for i, s in enumerate(sections) if s.curated]
    return EvidenceIndex.build(hub.ids, exemplars, vectors), labelled


@dataclass(frozen=True)
class ScoredInput:
    section: LinkedSection
    row: int  # its row in the evidence vectors


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
        progress("embedding linked sections", 0, len(sections))
    evidence, labelled = build_evidence(sections, hub, embedder)
    if progress:
        progress("embedding linked sections", len(sections), len(sections))
    vectors = evidence.vectors[[x.row for x in labelled]]
    stage = retrieve_stage(LinkerSettings(top_k=options.top_k), hub, index, evidence)
    column = {c: i for i, c in enumerate(index.ids)}
    scored = score_sections([x.section for x in labelled], vectors, stage, evidence, column)
    try:
        oof, alone_folds = out_of_fold_confidence(scored, progress)
        calibrator = calibrate(scored)
    except CalibrationError as exc:
        raise TrainingError(f"cannot calibrate on these links: {exc}") from exc
    styles = [s.section.style for s in scored]
    threshold, threshold_rule = pick_threshold(
        styles, [s.top_correct for s in scored], oof, options.max_wrong_rate
    )
    source_model, source_card = fit_source_model(
        scored, hub, options.max_wrong_rate, progress, (calibrator, alone_folds), threshold
    )
    router, router_card = fit_router([x.section for x in labelled], vectors, hub)
    card = ModelCard(
        trained_at=datetime.now(UTC).isoformat(timespec="seconds"),
        seconds=round(time.perf_counter() - started, 1),
        data=card_data(options, hub, sections),
        models=card_models(embedder, evidence),
        parameters={
            "top_k": options.top_k,
            "max_wrong_rate": options.max_wrong_rate,
            "evidence_weight": EVIDENCE_WEIGHT,
            "threshold_rule": threshold_rule,
            "seed": options.seed,
        },
        threshold=threshold,
        out_of_fold=out_of_fold(scored, oof, threshold),
        out_of_fold_by_style={
            style: out_of_fold(
                [s for s in scored if s.section.style == style],
                [c for s, c in zip(scored, oof, strict=True) if s.section.style == style],
                threshold,
            )
            for style in sorted({s.section.style for s in scored})
        },
        source_level=source_card,
        router=router_card,
        environment={"python": platform.python_version()},
    )
    return TrainResult(calibrator, threshold, evidence, card, source_model, router)


def solo_source_model(calibrator: Calibrator, threshold: float) -> SourceModel:
    extra = len(JOINT_FEATURES) - len(calibrator.weights)
    weights = (*calibrator.weights, *([0.0] * extra))
    joint = Calibrator(weights, calibrator.intercept, calibrator.fitted_on, JOINT_FEATURES)
    return SourceModel(NO_RULE, joint, threshold)


def fit_source_model(
    scored: Sequence[ScoredSection],
    hub: Hub,
    max_wrong: float,
    progress: Progress | None,
    alone: tuple[Calibrator, Mapping[str, Calibrator]],
    threshold: float,
) -> tuple[SourceModel, dict[str, Any]]:
    """The source-level model, its threshold chosen out of fold as the global one is,
    on the verifier's confidences (`alone`: the section-alone calibrator, and those
    fitted without each framework)."""
    calibrator, alone_folds = alone
    try:
        fit = fit_sources(scored, hub, progress)
    except CalibrationError as exc:
        # Too few frameworks large enough to link as a whole: sources keep their
        # retrieval order and the global calibrator (collective features weigh nothing).
        return solo_source_model(calibrator, threshold), {"not_fitted": str(exc)}
    verifier = fit_verifier(fit, alone_folds, hub)
    oof = verifier.oof
    styles = [r.scored.section.style for r in fit.rows]
    correct = fit.correct
    threshold, rule = pick_threshold(styles, correct, oof, max_wrong)
    shrinkage, losses = fit_shrinkage(fit.rows, oof, correct)
    frameworks = [r.scored.section.framework_id for r in fit.rows]
    prior_weight, prior_scale, prior_fit = fit_prior(frameworks, oof, correct)
    card = {
        "verifier": verifier.card,
        "rule": fit.rule.as_json(),
        "threshold": threshold,
        "threshold_rule": rule,
        "shrinkage": shrinkage,
        "shrinkage_log_loss": losses,
        "chosen_margin": fit.chosen_margin,
        "prior": {"weight": prior_weight, "scale": prior_scale, "log_likelihood": prior_fit},
        "top1_by_chosen_margin": fit.by_margin,
        "out_of_fold": joint_out_of_fold(oof, correct, threshold),
        "top1_by_framework": {
            f: {"rows": n, "alone": before, "as_a_whole": after}
            for f, (n, before, after) in sorted(fit.lofo.items())
        },
    }
    model = SourceModel(
        fit.rule,
        fit.calibrator,
        threshold,
        shrinkage,
        fit.chosen_margin,
        prior_weight,
        prior_scale,
        verifier.model,
    )
    return model, card


def joint_out_of_fold(
    oof: Sequence[float], correct: Sequence[bool], threshold: float
) -> dict[str, Any]:
    """The source model's rows out of fold, for the card: top-1, ECE and the auto-links
    at `threshold`."""
    ece, _ = reliability(oof, correct)
    auto = [ok for ok, c in zip(correct, oof, strict=True) if c >= threshold]
    return {
        "rows": len(correct),
        "top1": round(sum(correct) / max(1, len(correct)), 4),
        "ece": round(ece, 4),
        "auto_linked": len(auto),
        "auto_link_wrong": len(auto) - sum(auto),
    }


def out_of_fold(
    scored: Sequence[ScoredSection], oof: Sequence[float], threshold: float
) -> OutOfFold:
    correct = [s.top_correct for s in scored]
    auto = [ok for ok, conf in zip(correct, oof, strict=True) if conf >= threshold]
    ece, _ = reliability(oof, correct)
    return OutOfFold(
        how="leave-one-framework-out over the training frameworks",
        top1=round(sum(correct) / max(1, len(correct)), 4),
        ece=round(ece, 4),
        auto_linked=len(auto),
        auto_link_wrong=len(auto) - sum(auto),
        rows=len(correct),
    )


def card_data(options: TrainOptions, hub: Hub, sections: Sequence[LinkedSection]) -> CardData:
    curated = [s for s in sections if s.curated]
    return CardData(
        links_sources=list(options.links_sources),
        links_sha256=options.links_sha256,
        prose_sha256=options.prose_sha256,
        hub_sha256=hub.content_hash,
        hub_nodes=len(hub.ids),
        sections=len(curated),
        sections_by_style=dict(sorted(Counter(s.style for s in curated).items())),
        frameworks_seen=dict(sorted(Counter(s.framework_id for s in curated).items())),
        frameworks_excluded=sorted(set(options.exclude_frameworks)),
    )


def card_models(embedder: Embedder, evidence: EvidenceIndex) -> CardModels:
    described = int((evidence.counts() > 0).sum())
    return CardModels(
        embedding=embedder.name,
        embedding_fingerprint=embedder.fingerprint,
        retriever=RETRIEVER_ID,
        evidence=(
            f"{evidence.size} linked sections (titles and prose) describing {described} of "
            f"{len(evidence.hub_ids)} hubs; best-exemplar cosine x {EVIDENCE_WEIGHT}"
        ),
        calibrator="logistic(score, margin, best exemplar cosine, has evidence)",
    )


def save(result: TrainResult, out_dir: Path, embedding_model: Path | None = None) -> ModelCard:
    """Write the calibrator, evidence and router, then the card last: a directory with a
    card is complete.

    `embedding_model` (None = the packaged MiniLM) is recorded relative to `out_dir`, so
    `run` reads scores on the scale the calibrator was fitted on."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / CARD_NAME).unlink(missing_ok=True)
    replace(result.calibrator, threshold=result.threshold).save(out_dir / CALIBRATOR_NAME)
    result.evidence.save(out_dir / EVIDENCE_NAME)
    result.source_model.save(out_dir / SOURCE_MODEL_NAME)
    (out_dir / ROUTER_NAME).unlink(missing_ok=True)
    names = [CALIBRATOR_NAME, EVIDENCE_NAME, SOURCE_MODEL_NAME]
    if result.router is not None:
        result.router.save(out_dir / ROUTER_NAME)
        names.append(ROUTER_NAME)
    recorded = (
        None
        if embedding_model is None
        else os.path.relpath(embedding_model.resolve(), out_dir.resolve())
    )
    card = result.card.model_copy(
        update={
            "models": result.card.models.model_copy(update={"embedding_model": recorded}),
            "files": {name: sha256_of(out_dir / name) for name in names},
        }
    ).sealed()
    tmp = out_dir / (CARD_NAME + ".part")
    tmp.write_text(card.model_dump_json(indent=2) + "\n")
    tmp.replace(out_dir / CARD_NAME)
    return card


@dataclass(frozen=True)
class TrainRequest:
    """What `librarian train` was asked to build, and from what."""

    out_dir: Path
    links: tuple[TrainingLink, ...]
    links_sources: tuple[str, ...]
    section_texts: Path
    hub_path: Path
    embedding_model: Path | None
    cache_dir: Path | None
    exclude_frameworks: tuple[str, ...] = ()
    seed: int = DEFAULT_SEED
    force: bool = False


def recipe_of(request: TrainRequest, hub: Hub, embedder: Embedder) -> str:
    """Everything a model directory is a function of: same recipe, same models."""
    material = {
        "training": TRAINING_VERSION,
        "links": links_digest(request.links),
        "prose": sha256_of(request.section_texts),
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
    embedder: Embedder = load_embedder(request.embedding_model)
    recipe = recipe_of(request, hub, embedder)
    if not request.force and (card := current_card(request.out_dir, recipe)) is not None:
        return card, False
    if request.cache_dir is not None:
        embedder = cached(embedder, request.cache_dir)
    index = build_index(hub, embedder, request.cache_dir)
    options = TrainOptions(
        links=request.links,
        links_sources=request.links_sources,
        links_sha256=links_digest(request.links),
        prose=load_section_texts(request.section_texts),
        prose_sha256=sha256_of(request.section_texts),
        exclude_frameworks=request.exclude_frameworks,
        seed=request.seed,
    )
    with one_blas_thread():
        result = train(options, hub, embedder, index, progress)
    result.card = result.card.model_copy(update={"recipe": recipe})
    return save(result, request.out_dir, request.embedding_model), True


def one_blas_thread() -> threadpool_limits:
    """numpy's and scipy's BLAS held to one thread while fitting: the products here are
    small (logistic regressions on a few thousand rows), where a second thread costs more
    than it gains (a whole train 47 s -> 34 s on the project's 2 cores, docs/benchmarks.md)
    and the fit would depend on how many cores the machine has."""
    import scipy.linalg  # noqa: F401  loads scipy's own BLAS, so that the limit reaches it

    return threadpool_limits(limits=1, user_api="blas")


def cached(embedder: Embedder, cache_dir: Path) -> Embedder:
    """Section vectors by content hash, shared with runs: retraining embeds only new text."""

    name = f"queries-{embedder.fingerprint[:16]}.sqlite"
    return CachingEmbedder(embedder, SqliteVectorCache(cache_dir / name, embedder.dimension))
