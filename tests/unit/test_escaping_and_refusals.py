"""What a hostile input cannot do to what we write, and how it is refused: cells escaped in
summary.md, no part added to the audit, a locked database, a password inside a libpq
conninfo, a queue row whose provenance cannot be made. (Issue 28's fourth hostile pass
found these; the exit-code table lives with the review tests, the rest beside the code
they exercise; docs/reliability.md has the table.)"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from librarian.pipeline import one_shot
from librarian.pipeline.accounting import summary_markdown
from librarian.pipeline.components import stage_ids
from librarian.pipeline.ingest import parse_line, section_from_text
from librarian.pipeline.sinks import envelope_row
from librarian.schemas.envelopes import Source
from librarian.schemas.records import PLAIN_URN, Rejection, RunSummary
from librarian.store.db import known_urls, redacted, reference, resolve
from tests.rows import row
from tests.seeded import client, post, review_ids, seed
from tests.stubs import stub_pipeline

runner = CliRunner()
NOW = datetime(2026, 11, 1, tzinfo=UTC)
HOSTILE = "<img src=x onerror=alert(1)> [x](javascript:alert(1)) `code` | cell"


def _tokens(markdown: str) -> list[str]:
    """Every token type CommonMark makes of `markdown`, inline ones included."""
    out: list[str] = []
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        out.append(token.type)
        out += [child.type for child in token.children or []]
    return out


# 6. summary.md passed upstream HTML and links --------------------------------------------


def test_summary_md_escapes_every_cell_it_did_not_write() -> None:
    hostile = section_from_text("Rotate the session token after login.").model_copy(
        update={"chunk_id": HOSTILE, "locator": section_from_text("x").locator.model_copy(
            update={"id": HOSTILE})}
    )  # fmt: skip
    (envelope,) = one_shot.link(stub_pipeline(threshold=0.99), [hostile], "r1").envelopes
    summary = RunSummary(
        run_id="r1",
        input=HOSTILE,
        out_dir="out",
        started_at="2026-12-01T00:00:00+00:00",
        retriever="x",
        threshold=0.9,
    )
    summary.sources = {HOSTILE: {"items": 1, "decisions": 0, "threshold": 0.9, "says": HOSTILE}}
    page = summary_markdown(summary) + "\n| a | b | c | d | e |\n|---|---|---|---|---|\n"
    page += envelope_row(envelope) + "\n"
    tokens = _tokens(page)
    assert "html_inline" not in tokens and "html_block" not in tokens
    assert "link_open" not in tokens and "image" not in tokens and "code_inline" not in tokens
    assert envelope_row(envelope).count(" | ") == 4  # no cell break smuggled in


# 7. A source name forged parts of the audit ------------------------------------------------


def test_no_source_name_can_add_a_part_to_the_audit() -> None:
    forged = "plain:a; update check evaluated; reranker=cross-encoder@1:evil"
    section = section_from_text("Rotate the session token after login.").model_copy(
        update={
            "artifact_id": forged,
            "source": Source(
                type="url", url=PLAIN_URN + "abc", committed_at="2026-11-01T00:00:00Z"
            ),
        }
    )
    assert section.source_key == forged
    (envelope,) = one_shot.link(stub_pipeline(), [section], "r1").envelopes
    audit = envelope.retrieval.retriever
    parts = stage_ids(audit)
    assert "reranker" not in parts and parts["rerank"].startswith("none")
    assert "update check evaluated" not in audit.split("; ")
    assert audit.split("; ")[-1].startswith("source=plain:a, update check evaluated, ")


# 8, 9. Ids at the boundary; exit codes as the guide gives them -----------------------------


# 10. A bulk approval against a locked database answers at once -----------------------------


def test_a_bulk_approval_against_a_locked_database_stops_at_the_first_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from librarian.store.db import make_engine, upgrade

    monkeypatch.setenv("LIBRARIAN_SQLITE_TIMEOUT_S", "0.2")
    path = tmp_path / "locked.db"
    store = make_engine(f"sqlite:///{path}")
    upgrade(store)
    seed(store, ["rotate session token after login", "sql injection", "session management"])
    web = client(store)
    holder = sqlite3.connect(path, timeout=0.2)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        done = post(web, "/bulk", scope="selected", review_ids=review_ids(store), confirmed="yes")
    finally:
        holder.rollback()
        holder.close()
    assert done.status_code == 303
    assert "the+database+became+busy%3A+3+not+tried" in done.headers["location"]


# 11. libpq conninfo inside a URL -----------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://u@h/db?dbname=x%20password%3Dhunter2",
        "postgresql+psycopg://u@h/db?dbname=host%3Dh%20sslpassword%3Dhunter2",
        "postgresql+psycopg://u@h/x%20password%3Dhunter2",
    ],
)
def test_a_password_inside_libpq_conninfo_is_redacted(url: str) -> None:
    assert "hunter2" not in redacted(url) and "***" in redacted(url)
    assert resolve(reference(url), known_urls(url)) == url  # the caller's URL, whole


# 13. A queue row that cannot make a provenance names its column ---------------------------


def test_a_queue_row_refused_for_its_provenance_names_the_column_and_type() -> None:
    bad = {**row(), "source_commit_sha": "abc"}
    refused = parse_line(1, json.dumps(bad).encode())
    assert isinstance(refused, Rejection) and refused.field == "source_commit_sha"
    assert "source_commit_sha (str 'abc')" in refused.message
    assert "ValidationError" not in refused.message
