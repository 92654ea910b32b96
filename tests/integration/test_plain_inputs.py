"""Plain inputs end to end through the console script (real Prefect flow, real MiniLM):
a CSV table, a simple JSONL table and a Markdown document, each with accounting and
RFC-valid envelopes. The files are the README's examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from librarian.pipeline.sinks import read_jsonl
from tests.integration.conftest import run_librarian
from tests.rfc import assert_rfc_valid

pytestmark = pytest.mark.integration

EXAMPLES = {
    "reqs.csv": (
        "id,text,title\n"
        "R1,Passwords must be stored with a salted and slow hash function.,Password storage\n"
        "R2,All traffic between services must use TLS 1.2 or later.,Transport security\n"
    ),
    "reqs.jsonl": (
        '{"id": "R1", "text": "Lock an account after five failed logins.", '
        '"section_path": "Authentication > Lockout"}\n'
        '{"id": "R2", "text": "Session tokens must be rotated after login."}\n'
    ),
    "standard.md": (
        "# Our Standard\n\n## Sessions\n\nSession tokens must be rotated after login.\n\n"
        "## Logging\n\nEvery access decision must be logged.\n"
    ),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_plain_input_runs_end_to_end(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(EXAMPLES[name])
    out = tmp_path / "out"
    done = run_librarian(
        "run",
        str(path),
        "--source",
        "Our Standard 2.0",
        "--out",
        str(out),
        "--uncalibrated",
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["read"] == 2 == summary["linked"] + summary["review"]
    assert summary["rejected"] == summary["skipped"] == 0
    envelopes = read_jsonl(out / "proposals.jsonl") + read_jsonl(out / "reviews.jsonl")
    assert_rfc_valid(envelopes)
    locators = sorted(e["knowledge"]["locator"]["id"] for e in envelopes)
    if name == "standard.md":
        assert locators == [
            "Our Standard 2.0#our-standard/logging-1",
            "Our Standard 2.0#our-standard/sessions-1",
        ]
    else:
        assert locators == ["Our Standard 2.0#R1", "Our Standard 2.0#R2"]
    assert all(
        e["knowledge"]["source"]["url"].startswith("urn:librarian:plain:") for e in envelopes
    )
