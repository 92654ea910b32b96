from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import core as hypothesis_core

ROOT = Path(__file__).resolve().parent.parent
HYPOTHESIS_SEED = pytest.StashKey[str]()


@pytest.fixture(autouse=True)
def librarian_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test reads or writes the user's own librarian home (or LIBRARIAN_DB)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("LIBRARIAN_HOME", str(home))
    monkeypatch.delenv("LIBRARIAN_DB", raising=False)
    return home


@pytest.fixture(autouse=True)
def prefect_log_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command run in this process sets Prefect's log levels in its environment
    (`cli.run.quiet_prefect`: a level already set there stands), and every child started
    after it inherits them: a child `librarian run --verbose` then says no batch. Each
    test starts without them, and what it sets is undone after it (with two workers, a
    worker runs unit and integration tests in any order)."""
    for name in (
        "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL",
        "PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def write_jsonl(tmp_path: Path):  # type: ignore[no-untyped-def]
    def _write(rows: list[Any], name: str = "in.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    return _write


# Hypothesis profiles: `ci` (bounded, the default, in `make test`) and `fuzz` (`make fuzz`).
# Neither is derandomized: each run draws new examples from a seed it prints at the end
# (`pytest --hypothesis-seed=N`, or HYPOTHESIS_SEED=N, replays a run's examples).
settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config: pytest.Config) -> None:
    seed = config.getoption("--hypothesis-seed", default=None)
    if seed is None:
        seed = int(os.environ.get("HYPOTHESIS_SEED") or secrets.randbelow(2**32))
        hypothesis_core.global_force_seed = seed  # type: ignore[assignment]
    config.stash[HYPOTHESIS_SEED] = str(seed)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    seed = config.stash.get(HYPOTHESIS_SEED, None)
    if seed is not None:
        terminalreporter.write_line(f"hypothesis seed {seed} (replay: --hypothesis-seed={seed})")
