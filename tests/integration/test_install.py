"""Installed as a package, the librarian works from any folder: a wheel built from this
checkout, installed into a fresh virtual environment, run from an empty directory.

The new environment sees the dependencies of the test environment (a `.pth` line naming
its site-packages: plain paths, so the checkout's editable install is not activated) and
gets `librarian` itself only from the wheel: what is not in the wheel is not there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from librarian.pipeline import components as ids
from librarian.pipeline.components import stage_ids
from tests.integration.conftest import seed_trained_cache

pytestmark = pytest.mark.integration

CHECKOUT = Path(__file__).resolve().parents[2]
TEXT = "Use parameterized queries so user input cannot change SQL statements"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bin directory of a fresh venv holding the librarian wheel."""
    root = tmp_path_factory.mktemp("install")
    wheels = root / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            str(CHECKOUT),
        ],
        check=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("librarian-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", ask], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    (purelib / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        check=True,
        timeout=600,
    )
    yield venv / "bin"


def librarian(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API", "VIRTUAL"))}
    env.update(LIBRARIAN_HOME=str(cwd.parent / "home"), PREFECT_HOME=str(cwd.parent / "prefect"))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [str(bin_dir / "librarian"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_the_installed_package_works_from_an_empty_folder(
    installed: Path, tmp_path: Path, hub_vectors: Path, trained_home: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    # The home's cache holds what earlier runs embedded (the hub on the packaged model and
    # on its int8 build, the linked sections): the wheel's train still builds its int8
    # embedder and fits every model from nothing. A train from an empty home is the
    # session's `trained_home` and CI's `make demo`.
    cache = tmp_path / "home" / "cache"
    shutil.copytree(hub_vectors, cache)
    seed_trained_cache(trained_home, cache)
    where = subprocess.run(
        [str(installed / "python"), "-c", "import librarian; print(librarian.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=folder,
    ).stdout
    assert str(CHECKOUT) not in where, where  # the wheel's copy, not the checkout's

    version = librarian(installed, folder, "--version")
    assert version.returncode == 0 and version.stdout.startswith("librarian "), version.stderr

    untrained = librarian(installed, folder, "explain", TEXT)
    assert untrained.returncode == 2, untrained.stdout + untrained.stderr
    assert "run `librarian train`" in untrained.stderr and "--uncalibrated" in untrained.stderr
    raw = librarian(installed, folder, "explain", TEXT, "--uncalibrated", "--json")
    assert raw.returncode == 0, raw.stderr[-2000:]
    raw_ids = stage_ids(json.loads(raw.stdout)["retrieval"]["retriever"])
    assert raw_ids["score"] == ids.SCORE_RAW_COSINE

    trained = librarian(installed, folder, "train")
    assert trained.returncode == 0, trained.stderr[-3000:]
    home = tmp_path / "home"
    assert (home / "models" / "card.json").is_file()
    assert (home / "models" / "embedder-int8" / "model.onnx").is_file()
    again = librarian(installed, folder, "train")
    assert again.returncode == 0 and "up to date" in again.stdout, again.stderr[-2000:]

    sample = librarian(installed, folder, "samples", "queue_sample.jsonl").stdout.strip()
    assert Path(sample).is_file() and str(CHECKOUT) not in sample
    run = librarian(installed, folder, "run", sample, "--run-id", "installed")
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((folder / "out" / "installed" / "summary.json").read_text())
    assert summary["read"] == 29
    assert summary["models"]["calibrator"] == str(home / "models")
    assert stage_ids(summary["retriever"])["embed"].endswith("onnx-int8")
    assert stage_ids(summary["retriever"])["score"] == ids.SCORE_JOINT
    assert stage_ids(summary["retriever"])["source-level"] == ids.SOURCE_LEVEL_JOINT

    explained = librarian(installed, folder, "explain", TEXT, "--json")
    assert explained.returncode == 0, explained.stderr[-2000:]
    explained_ids = stage_ids(json.loads(explained.stdout)["retrieval"]["retriever"])
    assert explained_ids["score"] == ids.SCORE_JOINT

    assert sorted(p.name for p in folder.iterdir()) == ["out"]  # nothing else left behind
