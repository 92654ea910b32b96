"""docs/guide.md's commands, run as written: every `sh` block, in order, in a fresh folder
with its own librarian home, each block a bash script that stops at its first failing
command. The home starts as the guide's first `librarian train` leaves it (the session's
`trained_home`: that train then finds its models current, as a second one does); its
`train --links` really trains."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import start_trained

pytestmark = pytest.mark.integration

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def test_every_command_in_the_guide_works_as_written(tmp_path: Path, trained_home: Path) -> None:
    blocks = BLOCK.findall(GUIDE.read_text())
    assert len(blocks) >= 6
    start_trained(trained_home, tmp_path / "home")
    env = {
        **os.environ,
        "LIBRARIAN_HOME": str(tmp_path / "home"),
        "USER": "guide-test",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    env.pop("LIBRARIAN_DB", None)
    for number, block in enumerate(blocks, start=1):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, f"block {number}:\n{block}\n{done.stderr[-3000:]}"
    assert (tmp_path / "out" / "first" / "summary.json").is_file()
    assert (tmp_path / "decisions.jsonl").is_file() and (tmp_path / "sheet.csv").is_file()
    # Issue 41, item 2: the small source's next version, as the guide says it goes: its 12
    # decided, unchanged rules skipped; the changed one and the two new ones to review.
    version_2 = json.loads((tmp_path / "v2.json").read_text())
    assert version_2["read"] == 15 and version_2["by_reason"]["skipped"] == {"UNCHANGED": 12}
    assert version_2["linked"] + version_2["review"] == 3
