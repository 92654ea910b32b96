"""A built embedder's card (`card.json`): what it was built from and how, how closely it
agrees with its source model, and the sha256 of each file, sealed and checked on load.
Both built backends (`onnx_embedder`, `openvino_embedder`) read it here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from librarian.integrity import files_problem
from librarian.models.seams import ModelError

TOKENIZER_NAME = "tokenizer.json"
CARD_NAME = "card.json"


def card_digest(card: dict[str, Any]) -> str:
    """sha256 of the card's canonical JSON without its own digest: the card is sealed, as
    the models card is (an edited `max_tokens` would silently change every answer)."""
    body = {k: v for k, v in card.items() if k != "card_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


def sealed(card: dict[str, Any]) -> dict[str, Any]:
    return {**card, "card_sha256": card_digest(card)}


def read_card(path: Path) -> dict[str, Any]:
    """The card, sealed and unchanged, with every file it lists checked against its sha256."""
    card_path = path / CARD_NAME
    try:
        card: dict[str, Any] = json.loads(card_path.read_text())
        files: dict[str, str] = card["files"]
        seal = card.get("card_sha256")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"built embedder {path}: {CARD_NAME} missing or damaged: {exc}") from exc
    if seal != card_digest(card):
        raise ModelError(
            f"built embedder {path}: {CARD_NAME} was changed after it was built (or built "
            "before cards were sealed); rebuild it: `librarian quantize` (`librarian train` "
            "rebuilds the default one)"
        )
    if problem := files_problem(path, files):
        raise ModelError(f"built embedder {path}: {problem}")
    return card


def encoder_fingerprint(card: dict[str, Any], procedure: str) -> str:
    """What cached vectors are keyed by: the files *and* how they are run, so vectors made
    another way (batched, another backend, before) are never reused."""
    return hashlib.sha256(
        json.dumps({"files": card["files"], "encode": procedure}, sort_keys=True).encode()
    ).hexdigest()
