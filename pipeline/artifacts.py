"""Reads the model directory `librarian train` writes (JSON only: nothing executes on load)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.calibrate import CalibrationError, Calibrator
from pipeline.cards import files_problem
from pipeline.retrieve import RETRIEVER_ID

DEFAULT_MODELS_DIR = Path("models")
CARD_NAME = "card.json"
CALIBRATOR_NAME = "calibrator.json"


class ArtifactError(RuntimeError):
    """The model directory is incomplete, damaged or was built for other inputs."""


@dataclass(frozen=True)
class TrainedModels:
    directory: Path
    card: dict[str, Any]
    calibrator: Calibrator
    threshold: float
    same_hub: bool = True
    same_embedder: bool = True

    @property
    def description(self) -> str:
        seen = self.card.get("data", {}).get("frameworks_seen", {})
        # The calibrator reads scores, not hub ids, so another hub still works; say so.
        caveat = "" if self.same_hub else ", trained on another hub catalogue"
        if not self.same_embedder:
            # e.g. torch-trained models read by the int8 embedder: close, not the same scale.
            caveat += ", calibrated on another embedder's scores"
        return f"{self.directory} ({len(seen)} frameworks{caveat})"


def has_models(directory: Path) -> bool:
    return (directory / CARD_NAME).is_file()


def recorded_embedder(directory: Path) -> Path | None:
    """The embedding model the calibrator was fitted with, when it was not the packaged
    MiniLM: run and eval use it unless told otherwise, so scores stay on the fitted scale."""
    try:
        recorded = json.loads((directory / CARD_NAME).read_text())["models"].get("embedding_model")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ArtifactError(f"{directory / CARD_NAME} is damaged: {exc}") from exc
    if recorded is None:
        return None
    path = (directory / str(recorded)).resolve()
    if not path.is_dir():
        raise ArtifactError(
            f"{directory} was calibrated with the embedding model {path}, which is missing: "
            "build it (`librarian quantize`, or `make train`) or pass --embedding-model"
        )
    return path


def load_trained(
    directory: Path, hub_hash: str | None = None, embedder_fingerprint: str | None = None
) -> TrainedModels:
    """Load and verify a trained model directory; every file must match its card."""
    card_path = directory / CARD_NAME
    if not card_path.is_file():
        raise ArtifactError(
            f"{directory} holds no trained models (no {CARD_NAME}); run `librarian train`"
        )
    try:
        card = json.loads(card_path.read_text())
        files: dict[str, str] = card["files"]
        threshold = float(card["threshold"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArtifactError(f"{card_path} is damaged: {exc}") from exc
    if problem := files_problem(directory, files):
        raise ArtifactError(f"{directory}: {problem}")
    trained_for = card.get("models", {}).get("retriever")
    if trained_for != RETRIEVER_ID:
        # The calibrator reads retrieval scores: another retriever means another scale.
        raise ArtifactError(
            f"{directory} was calibrated for retriever {trained_for!r}, this build scores "
            f"with {RETRIEVER_ID!r}: run `librarian train` again"
        )
    trained_hub = card.get("data", {}).get("hub_sha256")
    try:
        calibrator = Calibrator.load(directory / CALIBRATOR_NAME)
    except CalibrationError as exc:
        raise ArtifactError(str(exc)) from exc
    same_hub = hub_hash is None or trained_hub == hub_hash
    trained_with = card.get("models", {}).get("embedding_fingerprint")
    same_embedder = embedder_fingerprint is None or trained_with == embedder_fingerprint
    return TrainedModels(directory, card, calibrator, threshold, same_hub, same_embedder)
