"""The model directory `librarian train` writes and `run`/`explain`/`eval` read.

JSON only: nothing executes on load. `card.json` is a typed `ModelCard` listing the
sha256 of every other file; a changed, missing or stale file is refused, and the
directory is refused when it was built for another retriever or another embedder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from librarian.artifacts.calibrator import CalibrationError, Calibrator
from librarian.artifacts.source_model import SOURCE_MODEL_NAME, SourceModel
from librarian.errors import UsageError
from librarian.integrity import files_problem
from librarian.retrieval.evidence import EVIDENCE_NAME, RETRIEVER_ID, EvidenceIndex

CARD_NAME = "card.json"
CALIBRATOR_NAME = "calibrator.json"


class ModelDirError(UsageError):
    """The model directory is missing, incomplete, damaged or was built for other inputs."""


class _Card(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CardData(_Card):
    links_sources: list[str]
    links_sha256: str
    prose_sha256: str = ""
    hub_sha256: str
    hub_nodes: int
    sections: int  # curated sections with text (the calibrator's rows), both styles
    sections_by_style: dict[str, int] = {}
    frameworks_seen: dict[str, int]
    frameworks_excluded: list[str]


class CardModels(_Card):
    embedding: str
    embedding_fingerprint: str
    # The embedder the calibrator was fitted with, relative to the model directory;
    # None = the packaged torch MiniLM.
    embedding_model: str | None = None
    retriever: str
    evidence: str = ""
    reranker: str | None = None
    calibrator: str


class OutOfFold(_Card):
    how: str
    top1: float
    ece: float
    auto_linked: int
    auto_link_wrong: int
    rows: int


class ModelCard(_Card):
    trained_at: str
    seconds: float
    data: CardData
    models: CardModels
    parameters: dict[str, Any]
    threshold: float
    out_of_fold: OutOfFold
    out_of_fold_by_style: dict[str, OutOfFold] = {}
    # Each source linked as a whole (source.json): the rule, its threshold, the joint
    # calibrator out of fold, and each framework's top-1 before / with the rule fitted
    # without it.
    source_level: dict[str, Any] = {}
    router: dict[str, Any]
    environment: dict[str, str]
    # sha256 of what the directory was built from (`train.recipe_of`): `train` skips a
    # rebuild when it matches.
    recipe: str = ""
    files: dict[str, str] = {}
    # sha256 of this card's canonical JSON with this field empty: an edited card (its
    # threshold lowered, say) is refused. Tamper-evident, not tamper-proof: there is no key.
    card_sha256: str = ""

    def digest(self) -> str:
        canonical = self.model_copy(update={"card_sha256": ""}).model_dump_json()
        return hashlib.sha256(
            json.dumps(json.loads(canonical), sort_keys=True).encode()
        ).hexdigest()

    def sealed(self) -> ModelCard:
        return self.model_copy(update={"card_sha256": self.digest()})


@dataclass(frozen=True)
class TrainedModels:
    directory: Path
    card: ModelCard
    calibrator: Calibrator
    threshold: float
    same_hub: bool = True
    evidence: EvidenceIndex | None = None
    source_model: SourceModel | None = None

    @property
    def description(self) -> str:
        seen = self.card.data.frameworks_seen
        # The calibrator reads scores, not hub ids, so a team catalogue beside OpenCRE works.
        caveat = "" if self.same_hub else ", trained on another hub catalogue"
        return f"{self.directory} ({len(seen)} frameworks{caveat})"


def has_models(directory: Path) -> bool:
    return (directory / CARD_NAME).is_file()


def read_card(directory: Path) -> ModelCard:
    card_path = directory / CARD_NAME
    if not directory.is_dir():
        raise ModelDirError(f"no trained models: {directory} does not exist; run `librarian train`")
    if not card_path.is_file():
        raise ModelDirError(
            f"{directory} holds no trained models (no {CARD_NAME}); run `librarian train`"
        )
    try:
        card = ModelCard.model_validate(json.loads(card_path.read_text()))
    except (OSError, ValueError, RecursionError, ValidationError) as exc:
        raise ModelDirError(
            f"{card_path} is damaged ({_first_line(exc)}); run `librarian train`"
        ) from exc
    if card.card_sha256 != card.digest():
        raise ModelDirError(
            f"{card_path} was changed after training (its digest does not match); "
            "run `librarian train`"
        )
    return card


def recorded_embedder(directory: Path) -> Path | None:
    """The embedding model the calibrator was fitted with (None = the packaged MiniLM):
    runs use it unless told otherwise, so scores stay on the fitted scale."""
    recorded = read_card(directory).models.embedding_model
    if recorded is None:
        return None
    path = (directory / recorded).resolve()
    if not path.is_dir():
        raise ModelDirError(
            f"{directory} was calibrated with the embedding model {path}, which is missing: "
            "run `librarian train` to build it"
        )
    return path


def load_trained(
    directory: Path, hub_hash: str | None = None, embedder_fingerprint: str | None = None
) -> TrainedModels:
    """Load and verify a trained model directory; every file must match its card."""
    card = read_card(directory)
    if problem := files_problem(directory, card.files):
        raise ModelDirError(f"{directory}: {problem}; run `librarian train`")
    if card.models.retriever != RETRIEVER_ID:
        # The calibrator reads retrieval scores: another retriever means another scale.
        raise ModelDirError(
            f"{directory} was calibrated for retriever {card.models.retriever!r}, this build "
            f"scores with {RETRIEVER_ID!r}: run `librarian train` again"
        )
    if embedder_fingerprint is not None:
        check_embedder(directory, card, embedder_fingerprint)
    try:
        calibrator = Calibrator.load(directory / CALIBRATOR_NAME)
    except CalibrationError as exc:
        raise ModelDirError(str(exc)) from exc
    if calibrator.threshold is not None and calibrator.threshold != card.threshold:
        raise ModelDirError(
            f"{directory}: the card's threshold {card.threshold} is not the one trained "
            f"({calibrator.threshold}); run `librarian train`"
        )
    if SOURCE_MODEL_NAME not in card.files:
        raise ModelDirError(
            f"{directory} holds no source-level model ({SOURCE_MODEL_NAME}): it was trained "
            "by an older build; run `librarian train` again"
        )
    try:
        source_model = SourceModel.load(directory / SOURCE_MODEL_NAME)
    except CalibrationError as exc:
        raise ModelDirError(str(exc)) from exc
    same_hub = hub_hash is None or card.data.hub_sha256 == hub_hash
    return TrainedModels(
        directory, card, calibrator, card.threshold, same_hub, source_model=source_model
    )


def check_embedder(directory: Path, card: ModelCard, fingerprint: str) -> None:
    """The calibrator reads the scores of one embedder: refuse any other."""
    if card.models.embedding_fingerprint != fingerprint:
        raise ModelDirError(
            f"{directory} was calibrated on the scores of embedder {card.models.embedding!r} "
            f"({card.models.embedding_fingerprint[:12]}), not the one configured "
            f"({fingerprint[:12]}): train with that embedder, or use the recorded one"
        )


def load_evidence(models: TrainedModels, hub_ids: Sequence[str], dimension: int) -> TrainedModels:
    """The models with their evidence loaded, over this hub's order."""
    path = models.directory / EVIDENCE_NAME
    if EVIDENCE_NAME not in models.card.files:
        raise ModelDirError(f"{models.directory} holds no evidence: run `librarian train` again")
    return replace(models, evidence=EvidenceIndex.load(path, hub_ids, dimension))


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
