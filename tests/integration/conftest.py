from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def prefect_server() -> Iterator[None]:
    """A real, temporary Prefect server and database for the session's flow runs."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def dev_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Models trained by the real CLI on the shipped links, without the dev frameworks."""
    from typer.testing import CliRunner

    from pipeline.cli import app

    out = tmp_path_factory.mktemp("models-dev")
    result = CliRunner().invoke(app, ["train", "--out", str(out), "--holdout-dev"])
    assert result.exit_code == 0, result.output
    return out
