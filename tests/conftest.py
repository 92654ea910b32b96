from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def write_jsonl(tmp_path: Path):  # type: ignore[no-untyped-def]
    def _write(rows: list[Any], name: str = "in.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    return _write
