"""Plain inputs end to end through the console script (real Prefect flow, real MiniLM):
a CSV table, a simple JSONL table and a Markdown document, each with accounting and
RFC-valid envelopes. The files are the README's examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from librarian.pipeline.sinks import read_jsonl
from tests.integration.conftest import RawRun, run_librarian
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
def test_a_plain_input_runs_end_to_end(tmp_path: Path, raw_run: RawRun, name: str) -> None:
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
        "--embedding-model",
        str(raw_run.embedder),
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


def test_the_sample_policy_as_word_and_pdf_decides_as_its_csv(
    tmp_path: Path, raw_run: RawRun
) -> None:
    """Issue 30, items 2 and 3: the packaged sample policy, built as a .docx and a PDF,
    gives the same sections and the same decisions as the CSV it was built from."""
    from librarian.paths import packaged_data
    from tests.documents import policy_docx, policy_pdf, policy_rows

    policy = packaged_data("samples") / "sample_policy.csv"
    rows = policy_rows(policy)
    inputs = {
        "csv": policy,
        "docx": policy_docx(rows, tmp_path / "policy.docx"),
        "pdf": policy_pdf(rows, tmp_path / "policy.pdf"),
    }
    decided = {}
    for kind, path in inputs.items():
        out = tmp_path / kind
        done = run_librarian(
            "run", str(path), "--source", "Acme Security Policy", "--out", str(out),
            "--uncalibrated", "--embedding-model", str(raw_run.embedder),
            "--cache-dir", str(tmp_path / "cache"),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        envelopes = read_jsonl(out / "proposals.jsonl") + read_jsonl(out / "reviews.jsonl")
        assert_rfc_valid(envelopes)
        decided[kind] = sorted(
            (
                e["chunk_id"],
                e["knowledge"]["text"],
                e.get("reason_code"),
                [(s["cre_id"], round(s["confidence"], 4)) for s in _links(e)],
            )
            for e in envelopes
        )
    assert len(decided["csv"]) == 13
    assert decided["docx"] == decided["csv"] and decided["pdf"] == decided["csv"]


def _links(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    links = envelope.get("suggested_links") or envelope.get("links") or []
    assert isinstance(links, list)
    return links
