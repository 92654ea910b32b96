from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def librarian_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test reads or writes the user's own librarian home (or LIBRARIAN_DB)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("LIBRARIAN_HOME", str(home))
    monkeypatch.delenv("LIBRARIAN_DB", raising=False)
    return home


@pytest.fixture
def write_jsonl(tmp_path: Path):  # type: ignore[no-untyped-def]
    def _write(rows: list[Any], name: str = "in.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    return _write


# Hypothesis profiles: `ci` (bounded, the default, in `make test`) and `fuzz` (`make fuzz`).
settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
