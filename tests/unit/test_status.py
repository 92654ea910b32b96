"""Issue 30, items 5 and 6: every stored section has OpenCRE's status (AUTO_MAPPED,
NEEDS_REVIEW, UNMAPPABLE, USER_CONFIRMED, USER_REJECTED), shown in the exports, `queue
status` and the workbench; a run never maps a person's decision again unless the text
changed; the unmappable gate marks what no CRE covers, with RFC-valid envelopes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.pipeline import one_shot
from librarian.pipeline.accounting import count_envelopes
from librarian.pipeline.ingest import section_from_text
from librarian.review.bench import Workbench
from librarian.review.decisions import DecisionRequest, decide
from librarian.review.web import create_app
from librarian.schemas.envelopes import UNMAPPABLE, dump_envelope
from librarian.schemas.records import RunSummary
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, read_back, write
from librarian.store.review import review_items
from librarian.store.status import section_status, status_counts
from librarian.store.tables import DecisionRow
from tests.rfc import assert_rfc_valid
from tests.seeded import seeded_batch
from tests.stubs import small_hub, stub_pipeline

HUB_IDS = set(small_hub().ids)
TEXTS = [
    "rotate session token after login",
    "sql injection queries must be parameterized",
    "session management cryptography",
    "the cafeteria opens at eight for the session",
]


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'status.db'}")
    upgrade(engine)
    return engine


def statuses(engine: Engine) -> dict[str, str]:
    with Session(engine) as session:
        return {i.chunk_id: i.section_status for i in review_items(session, "all")}


def test_the_status_of_each_state() -> None:
    assert section_status("linked", None, False, None) == "AUTO_MAPPED"
    assert section_status("review_required", "BELOW_THRESHOLD", False, None) == "NEEDS_REVIEW"
    assert section_status("review_required", UNMAPPABLE, False, None) == "UNMAPPABLE"
    assert section_status("review_required", "BELOW_THRESHOLD", True, "approve") == "USER_CONFIRMED"
    assert section_status("review_required", "BELOW_THRESHOLD", True, "correct") == "USER_CONFIRMED"
    assert section_status("review_required", UNMAPPABLE, True, "reject") == "USER_REJECTED"


def test_a_run_never_maps_a_persons_decision_again_unless_its_text_changed(
    engine: Engine,
) -> None:
    with Session(engine) as session, session.begin():
        write(session, seeded_batch(TEXTS, "r1"))
    ids = {i.chunk_id: i.review_id for i in review_items(Session(engine), "all")}
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(ids["r1-c0"], "approve", "rita"), HUB_IDS)
        decide(session, DecisionRequest(ids["r1-c1"], "reject", "rita"), HUB_IDS)
    assert statuses(engine) == {
        "r1-c0": "USER_CONFIRMED",
        "r1-c1": "USER_REJECTED",
        "r1-c2": "NEEDS_REVIEW",
        "r1-c3": "NEEDS_REVIEW",
    }
    # New models decide the same texts again: open items are decided again, decided ones
    # are left as the person decided them.
    again = replace(seeded_batch(TEXTS, "r2", chunks_of="r1"), models_digest="new models")
    with Session(engine) as session, session.begin():
        result = write(session, again)
    assert (result.redecided, result.already_there) == (2, 2)
    assert statuses(engine)["r1-c0"] == "USER_CONFIRMED"
    assert statuses(engine)["r1-c1"] == "USER_REJECTED"
    # The rejected section's text changes: the new text is mapped (a new item); the
    # person's decision on the old text stands.
    changed = [TEXTS[0], "sql injection: queries must use bound parameters", *TEXTS[2:]]
    with Session(engine) as session, session.begin():
        write(session, seeded_batch(changed, "r3", chunks_of="r1"))
    with Session(engine) as session:
        rows = session.execute(
            select(DecisionRow.chunk_id, DecisionRow.text).where(DecisionRow.chunk_id == "r1-c1")
        ).all()
        assert len(rows) == 2
        counts = status_counts(session)
    assert counts == {
        "AUTO_MAPPED": 0,
        "NEEDS_REVIEW": 3,  # two still open, and the changed text
        "UNMAPPABLE": 0,
        "USER_CONFIRMED": 1,
        "USER_REJECTED": 1,
        "WITHDRAWN": 0,
    }


def test_the_unmappable_gate_marks_review_items_and_keeps_envelopes_valid(
    engine: Engine,
) -> None:
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"u-c{i}", "line": i + 1})
        for i, t in enumerate(TEXTS)
    ]
    gated = one_shot.link(stub_pipeline(threshold=0.99, unmappable_cut=0.5), sections, "u")
    off = one_shot.link(stub_pipeline(threshold=0.99), sections, "u")
    gate = {chunk: facts.unmappable for chunk, facts in gated.facts.items()}
    assert gate["u-c3"]  # the cafeteria: one word of one CRE (0.19)
    assert not gate["u-c0"]  # a session rule: below the auto-link cut, not unmappable
    assert not any(facts.unmappable for facts in off.facts.values())
    # The facts are the decision's own, not read from its audit text; a dry run's file
    # holds the envelope alone, and reading it back finds the same.
    for envelope in gated.envelopes:
        assert read_back(envelope) == gated.facts[envelope.chunk_id]
    dumped = [dump_envelope(e) for e in gated.envelopes]
    assert_rfc_valid(dumped)  # the RFC has no UNMAPPABLE: BELOW_THRESHOLD, and why in words
    cafeteria = next(d for d in dumped if d["chunk_id"] == "u-c3")
    assert cafeteria["reason_code"] == "BELOW_THRESHOLD"
    assert "unmappable: best hub cosine" in cafeteria["retrieval"]["retriever"]
    summary = RunSummary(run_id="u", input="x", out_dir="o", started_at="now")
    count_envelopes(summary, gated.envelopes, gated.facts)
    assert summary.by_reason["review"][UNMAPPABLE] == 1
    batch = StoredBatch.linked("u", gated, sections, "t")
    with Session(engine) as session, session.begin():
        write(session, batch)
    assert statuses(engine)["u-c3"] == "UNMAPPABLE"
    with Session(engine) as session:  # a column of its own, as the decision said it
        linked = session.execute(select(DecisionRow.source_linked)).scalars().all()
    assert linked and set(linked) == {gated.facts["u-c3"].linked_as} and linked[0]
    # Grouped: the workbench filters by it, the export picks it.
    bench = Workbench(engine, small_hub(), "rita", csrf="c")
    web = TestClient(create_app(bench), base_url="http://127.0.0.1:8765")
    page = web.get("/", params={"reason": UNMAPPABLE}).text
    assert page.count('<tr data-href="/item/') == 1 and "UNMAPPABLE" in page
    from librarian.cli import app

    exported = CliRunner().invoke(
        app,
        ["review", "export", "--db", str(engine.url), "--reason", UNMAPPABLE, "--format", "jsonl"],
    )
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [(r["chunk_id"], r["section_status"]) for r in rows] == [("u-c3", "UNMAPPABLE")]
    status = CliRunner().invoke(app, ["queue", "status", "--db", str(engine.url)])
    said = " ".join(status.output.split())
    assert (
        "sections by status (OpenCRE's names; WITHDRAWN ours): AUTO_MAPPED 0, NEEDS_REVIEW 3, "
        "UNMAPPABLE 1" in said
    )
    item = next(i for i in review_items(Session(engine), "all") if i.chunk_id == "u-c3")
    assert 'id="section-status"' in web.get(f"/item/{item.review_id}").text


def test_queue_check_names_an_item_with_a_standing_decision_that_is_open(
    tmp_path: Path,
) -> None:
    """Issue 38: the invariant `librarian queue check` keeps, run by the tests."""
    from librarian.cli import app

    engine = make_engine(f"sqlite:///{tmp_path / 'check.db'}")
    upgrade(engine)
    with Session(engine) as session:
        write(session, seeded_batch(["rotate session tokens", "use parameterized queries"], "r1"))
        session.commit()
    first = review_items(Session(engine), "open")[0].review_id
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(first, "approve", "rita"), small_hub().ids)
    fine = CliRunner().invoke(app, ["queue", "check", "--db", str(engine.url)])
    assert fine.exit_code == 0 and "consistent" in fine.output, fine.output
    with Session(engine) as session, session.begin():  # what the undo race left behind
        row = session.execute(
            select(DecisionRow).where(DecisionRow.review_id == first)
        ).scalar_one()
        row.consumed_at = None
    broken = CliRunner().invoke(app, ["queue", "check", "--db", str(engine.url)])
    assert broken.exit_code == 1
    assert (
        f"inconsistent: {first}" in broken.output
        and "open, with a standing decision" in broken.output
    )


def test_counts_take_the_right_number() -> None:
    """Issue 41, item 9: "these 1 decide", "of 1 items"."""
    from librarian.cli.queue import _these
    from librarian.text import counted

    assert (counted(1, "item"), counted(2, "item"), counted(0, "entry", "entries")) == (
        "1 item",
        "2 items",
        "0 entries",
    )
    assert (_these(1), _these(3)) == ("this one decides", "these 3 decide")


def test_migration_0011_fills_source_linked_from_the_audit_of_rows_stored_before(
    tmp_path: Path,
) -> None:
    from tests.seeded import old_row, store_at_revision

    audit = "dense retrieval; source=linked as a whole (12 rows); unmappable: best hub cosine 0.2"
    envelopes = [json.dumps({"retrieval": {"retriever": audit}}), json.dumps({})]
    rows = [old_row(n, e, pipeline_run_id="r0") for n, e in enumerate(envelopes, start=1)]
    engine = store_at_revision(tmp_path / "old.db", "0010", rows)
    upgrade(engine)
    with Session(engine) as session:
        linked = session.execute(
            select(DecisionRow.source_linked).order_by(DecisionRow.id)
        ).scalars()
        assert list(linked) == ["linked as a whole (12 rows)", None]
