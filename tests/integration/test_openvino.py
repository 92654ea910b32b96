"""The OpenVINO embedder (`--encoder openvino`), built by the real `librarian quantize` from
the packaged MiniLM and run on this machine's CPU (bf16 where it has it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from librarian.cli import app
from librarian.models.load import load_embedder
from librarian.models.openvino_embedder import OpenVinoEmbedder
from librarian.models.seams import ModelError
from librarian.paths import DEFAULT_LINKS
from librarian.pipeline import components as ids
from librarian.pipeline.components import stage_ids
from tests.integration.conftest import agrees_with_torch, explained_on

pytestmark = pytest.mark.integration

TEXTS = [
    "Use parameterized queries so user input cannot change SQL statements",
    "Rotate the session token after login",
    "Passwords are stored with a slow, salted hash, and the hash function's cost is "
    "raised as hardware gets faster, so that a stolen table stays expensive to crack",
    "word " * 400,  # past the 256-token window: cut the same way as the torch model
]


@pytest.fixture(scope="module")
def openvino_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ov") / "embedder-openvino"
    result = CliRunner().invoke(app, ["quantize", "--encoder", "openvino", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "openvino-ir" in result.output
    return out


def test_openvino_vectors_agree_with_torch_and_depend_on_their_text_alone(
    openvino_dir: Path,
) -> None:
    card = json.loads((openvino_dir / "card.json").read_text())
    assert card["backend"] == "openvino-ir"
    assert card["agreement"]["mean_cosine"] >= 0.999
    embedder = load_embedder(openvino_dir)
    assert isinstance(embedder, OpenVinoEmbedder)
    batched = agrees_with_torch(embedder, TEXTS, 0.999)
    # In a batch padded to its longest text, or alone: the same vector.
    alone = np.vstack([embedder.encode([t]) for t in TEXTS])
    assert float((batched * alone).sum(axis=1).min()) > 0.9999
    assert embedder.precision in embedder.name


def test_explain_runs_on_the_openvino_embedder(openvino_dir: Path, tmp_path: Path) -> None:
    envelope = explained_on(openvino_dir, tmp_path)  # the same first text as there
    embed = stage_ids(envelope["retrieval"]["retriever"])["embed"]
    assert embed == f"{ids.EMBED}:all-MiniLM-L6-v2 openvino-ir"
    assert envelope["retrieval"]["candidates"][0]["cre_id"] == "732-873"


def test_a_changed_openvino_file_is_refused(openvino_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("model.xml", "model.bin", "tokenizer.json", "card.json"):
        (copy / name).write_bytes((openvino_dir / name).read_bytes())
    with (copy / "model.xml").open("a") as handle:
        handle.write(" ")
    with pytest.raises(ModelError, match=r"model\.xml does not match its card"):
        load_embedder(copy)


def test_without_openvino_installed_the_build_says_what_to_install(
    openvino_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openvino", None)  # `import openvino` fails
    with pytest.raises(ModelError, match=r"librarian\[openvino\]"):
        load_embedder(openvino_dir)


def test_train_builds_either_encoder_but_not_beside_a_named_one(tmp_path: Path) -> None:
    args = ["train", "--out", str(tmp_path / "m"), "--encoder", "openvino"]
    result = CliRunner().invoke(app, [*args, "--embedding-model", str(tmp_path)])
    assert result.exit_code == 2
    assert "not both" in " ".join(result.output.split())


def test_train_with_the_openvino_encoder_builds_it_and_runs_on_it(tmp_path: Path) -> None:
    models = tmp_path / "models"
    # Every sixth packaged link (682 of 4,090, every framework): what is built and run on
    # is the encoder; a sixth of the links trains in ~15 s where all of them take ~90.
    links = tmp_path / "links.jsonl"
    links.write_text("".join(DEFAULT_LINKS.read_text().splitlines(keepends=True)[::6]))
    args = ["train", "--out", str(models), "--encoder", "openvino", "--cache-dir", str(tmp_path)]
    args += ["--links", str(links), "--replace-links"]
    trained = CliRunner().invoke(app, args)
    assert trained.exit_code == 0, trained.output
    assert (models / "embedder-openvino" / "model.xml").is_file()
    assert not (models / "embedder-int8").exists()
    card = json.loads((models / "card.json").read_text())
    assert card["models"]["embedding"].startswith("all-MiniLM-L6-v2 openvino-ir (")
    args = ["explain", TEXTS[0], "--models", str(models), "--json"]
    result = CliRunner().invoke(app, [*args, "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    retriever = json.loads(result.output)["retrieval"]["retriever"]
    assert stage_ids(retriever)["embed"] == f"{ids.EMBED}:all-MiniLM-L6-v2 openvino-ir"
    assert stage_ids(retriever)["score"] == ids.SCORE_JOINT


# OpenVINO's telemetry keeps quiet by itself where one of these says "a CI job".
_CI_MARKERS = ("CI", "TF_BUILD", "JENKINS_URL")
_TELEMETRY_LOADED = "\nimport sys\nprint(sys.modules.get('openvino_telemetry') is not None)"


def test_loading_the_openvino_embedder_reports_nothing_to_intel(
    openvino_dir: Path, tmp_path: Path
) -> None:
    """OpenVINO reports each import to Intel's telemetry, keeping its count in ~/intel/,
    unless told not to: a plain import there does, the embedder's does not. Both run as a
    user's shell would: the project's CI sets CI=true, which quiets OpenVINO by itself."""
    user_env = {k: v for k, v in os.environ.items() if k not in _CI_MARKERS}

    def run_in(home: Path, code: str) -> tuple[list[str], str]:
        home.mkdir()
        env = {**user_env, "HOME": str(home)}
        done = subprocess.run(
            [sys.executable, "-c", code + _TELEMETRY_LOADED], env=env, capture_output=True
        )
        assert done.returncode == 0, done.stderr
        return sorted(p.name for p in home.rglob("*")), done.stdout.decode().strip()

    files, loaded = run_in(tmp_path / "plain", "import openvino\nopenvino.Core()")
    assert "stats" in files
    assert loaded == "True"
    ours = (
        "from pathlib import Path\nfrom librarian.models.load import load_embedder\n"
        f"load_embedder(Path({str(openvino_dir)!r})).encode(['x'])"
    )
    assert run_in(tmp_path / "ours", ours) == ([], "False")
