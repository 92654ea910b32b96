"""Issue 56, items 5, 6, 7 and 17: withdrawal and supersession.

5: a header-only CSV (or one with a row it could not read) withdrew a document's decided
work; 6: a withdrawal that raced a reviewer closed a decided item as withdrawn, and
`queue check` said consistent; 7: an update left its old open item open beside it; 17:
undoing a decision on a withdrawn item reopened it for good."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, select, update
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.cli import app
from librarian.job import HandOff, LinkJob, Where, run_job
from librarian.pipeline.run import InProcess
from librarian.review.decisions import DecisionRequest, decide
from librarian.review.myopencre import links_to_export
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import REVIEW_REQUIRED, SUPERSEDED, WITHDRAWN
from librarian.store.human import ReviewError, undo_last, violations
from librarian.store.open_items import open_sections
from librarian.store.status import USER_CONFIRMED, WITHDRAWN_STATUS, status_counts
from librarian.store.tables import DecisionRow
from tests.stubs import small_hub, stub_pipeline
from tests.unit.test_shapes import _one_rule_a_page

ROWS = {
    "R1": "Rotate the session token after login.",
    "R2": "Hash passwords with a slow function.",
    "R3": "Encrypt data at rest with AES.",
    "R4": "Log every failed login.",
    "R5": "Lock the account after five failed logins.",
    "R6": "Use parameterized queries for every SQL statement.",
}
SOURCE = "Acme"


def csv(rows: dict[str, str]) -> str:
    return "id,text\n" + "".join(f"{key},{text}\n" for key, text in rows.items())


def without(*gone: str) -> dict[str, str]:
    return {k: v for k, v in ROWS.items() if k not in gone}


@pytest.fixture
def db(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(make_engine(url))
    yield url


def link(tmp_path: Path, text: str, db: str, run_id: str, allow: bool = False) -> list[str]:
    """A committed run of `text` as version `run_id` of document Acme: what it said of
    withdrawal."""
    policy = tmp_path / "policy.csv"
    policy.write_text(text)
    pipeline = stub_pipeline(threshold=0.99)  # every item to review
    settings = LinkerSettings(allow_withdraw=allow)
    job = LinkJob(policy, tmp_path / run_id, settings, run_id, db, source_name=SOURCE)
    where = Where(InProcess(pipeline), lambda _: pipeline, lambda _: None)
    return run_job(job, where, HandOff()).withdrawn


def rows_of(engine: Engine, name: str) -> list[DecisionRow]:
    with Session(engine) as session:
        found = session.scalars(
            select(DecisionRow)
            .where(DecisionRow.chunk_id.endswith(f":{name}"))
            .order_by(DecisionRow.id)
        ).all()
        session.expunge_all()
        return list(found)


def decide_row(engine: Engine, name: str, reviewer: str = "ana") -> None:
    (row,) = [r for r in rows_of(engine, name) if r.status == REVIEW_REQUIRED]
    with Session(engine) as session:
        request = DecisionRequest(str(row.review_id), "choose", reviewer, ("200-001",))
        decide(session, request, small_hub().ids)
        session.commit()


def still_in_document(engine: Engine) -> set[str]:
    with Session(engine) as session:
        gone = session.scalars(
            select(DecisionRow.chunk_id).where(DecisionRow.withdrawn_at.is_not(None))
        ).all()
    return set(ROWS) - {c.rsplit(":", 1)[-1] for c in gone}


# --- item 5: only a complete, well-read version withdraws -------------------------------


def test_a_header_only_csv_withdraws_nothing_and_says_why(tmp_path: Path, db: str) -> None:
    engine = make_engine(db)
    assert link(tmp_path, csv(ROWS), db, "v1") == []
    for name in ("R1", "R2", "R4"):
        decide_row(engine, name)
    said = link(tmp_path, "id,text\n", db, "v2")
    assert len(said) == 1 and said[0].startswith("withdrawal held back: this version holds 0")
    assert "would have withdrawn 6 requirements (R1, R2, R3, R4, R5, R6)" in said[0]
    assert "--allow-withdraw" in said[0]
    assert still_in_document(engine) == set(ROWS)
    with Session(engine) as session:
        assert status_counts(session)[USER_CONFIRMED] == 3
        assert {link.section_id for link in links_to_export(session, False)} == {"R1", "R2", "R4"}
    # Asked for: the same empty version withdraws everything.
    said = link(tmp_path, "id,text\n", db, "v3", allow=True)
    assert said[0].startswith("3 requirements no longer in the document: open item closed")
    assert still_in_document(engine) == set()


def test_a_version_with_a_row_it_could_not_read_withdraws_nothing(tmp_path: Path, db: str) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    decide_row(engine, "R2")
    # R2's row has a cell too many (an unquoted comma): rejected, so R2 is not "gone".
    broken = csv(without("R3")).replace(ROWS["R2"], "Hash passwords, slowly.")
    said = link(tmp_path, broken, db, "v2")
    assert said == [
        "withdrawal held back: 1 of this version's rows or pages could not be read or were "
        "refused, so it may not hold all the document does; it would have withdrawn 2 "
        "requirements (R2, R3); nothing was withdrawn (run again with --allow-withdraw to "
        "withdraw them)"
    ]
    assert still_in_document(engine) == set(ROWS)
    assert rows_of(engine, "R3")[0].status == REVIEW_REQUIRED


def with_page_2_damaged(path: Path) -> Path:
    """The PDF with its second page's content stream damaged: that page cannot be read."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import EncodedStreamObject, NameObject

    writer = PdfWriter()
    for number, page in enumerate(PdfReader(str(path)).pages, start=1):
        if number == 2:
            broken = EncodedStreamObject()
            broken[NameObject("/Filter")] = NameObject("/FlateDecode")
            broken._data = b"\x78\x9c not deflate at all"
            page[NameObject("/Contents")] = writer._add_object(broken)
        writer.add_page(page)
    out = path.with_name("damaged.pdf")
    with out.open("wb") as handle:
        writer.write(handle)
    return out


def test_a_pdf_whose_page_cannot_be_read_withdraws_nothing(tmp_path: Path, db: str) -> None:
    engine = make_engine(db)
    pipeline = stub_pipeline(threshold=0.99)
    where = Where(InProcess(pipeline), lambda _: pipeline, lambda _: None)

    def version(path: Path, run_id: str) -> list[str]:
        job = LinkJob(path, tmp_path / run_id, LinkerSettings(), run_id, db, source_name=SOURCE)
        return run_job(job, where, HandOff()).withdrawn

    whole = _one_rule_a_page(tmp_path / "rules.pdf", 3)
    assert version(whole, "v1") == []
    decide_row(engine, "SEC-02")
    said = version(with_page_2_damaged(whole), "v2")
    assert said[0].startswith("withdrawal held back: 1 of this version's rows or pages")
    assert "it would have withdrawn 1 requirement (SEC-02)" in said[0]
    (row,) = rows_of(engine, "SEC-02")
    assert row.withdrawn_at is None and row.consumed_at is not None


def test_a_version_that_drops_more_than_half_withdraws_only_when_allowed(
    tmp_path: Path, db: str
) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    cut_short = csv({k: ROWS[k] for k in ("R1", "R2")})
    said = link(tmp_path, cut_short, db, "v2")
    assert said[0].startswith("withdrawal held back: this version holds 2 of the document's 6")
    assert still_in_document(engine) == set(ROWS)
    # Half is not more than half: three of six leave.
    assert link(tmp_path, csv({k: ROWS[k] for k in ("R1", "R2", "R3")}), db, "v3") == [
        "3 requirements no longer in the document: open item closed as withdrawn (R4, R5, R6)"
    ]
    assert still_in_document(engine) == {"R1", "R2", "R3"}


# --- item 6: a withdrawal never closes an item a reviewer decided meanwhile ------------


def decided_between_read_and_write(engine: Engine, name: str) -> Any:
    """Has the reviewer decide `name` right after the withdrawal reads the document's
    items, before it writes (the race, forced: no timing)."""
    fired: list[str] = []

    def after(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if fired or not statement.lstrip().upper().startswith("SELECT"):
            return
        if "decision_queue.artifact_id = " in statement:
            fired.append(statement)
            decide_row(engine, name)

    event.listen(Engine, "after_cursor_execute", after)
    return fired, lambda: event.remove(Engine, "after_cursor_execute", after)


def test_a_withdrawal_that_races_a_reviewer_keeps_the_decision(tmp_path: Path, db: str) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    fired, stop = decided_between_read_and_write(engine, "R3")
    try:
        said = link(tmp_path, csv(without("R3")), db, "v2")
    finally:
        stop()
    assert fired, "the withdrawal never read the document's items"
    (row,) = rows_of(engine, "R3")
    assert row.status == REVIEW_REQUIRED and row.consumed_at is not None
    assert row.withdrawn_at is not None  # marked: no longer in the document
    assert said == [
        "1 requirement no longer in the document: decided, marked so and left out of the "
        "OpenCRE export (R3)"
    ]
    with Session(engine) as session:
        assert violations(session) == []
        assert status_counts(session)[USER_CONFIRMED] == 1


def test_queue_check_reports_a_withdrawn_item_with_a_standing_decision(
    tmp_path: Path, db: str
) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    decide_row(engine, "R3")
    (row,) = rows_of(engine, "R3")
    with Session(engine) as session, session.begin():  # what the race left before
        session.execute(
            update(DecisionRow).where(DecisionRow.id == row.id).values(status=WITHDRAWN)
        )
    with Session(engine) as session:
        assert violations(session) == [
            f"{row.review_id} (row {row.id}): withdrawn, with a standing decision"
        ]
        counts = status_counts(session)
    assert counts[USER_CONFIRMED] == 1 and counts[WITHDRAWN_STATUS] == 0
    checked = CliRunner().invoke(app, ["queue", "check", "--db", db])
    assert checked.exit_code == 1
    assert "withdrawn, with a standing decision" in checked.output


# --- item 7: an update supersedes its open predecessor ----------------------------------


def test_an_update_supersedes_its_open_predecessor(tmp_path: Path, db: str) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    old_r2 = rows_of(engine, "R2")[0]
    changed = dict(ROWS, R2="Hash passwords with a slow salted function.")
    assert link(tmp_path, csv(changed), db, "v2") == []
    old, new = rows_of(engine, "R2")
    assert old.id == old_r2.id and old.status == SUPERSEDED
    assert new.status == REVIEW_REQUIRED and new.is_update
    with Session(engine) as session:
        r2 = [s for s in open_sections(session, f"plain:{SOURCE}") if s.chunk_id == new.chunk_id]
        assert [s.text for s in r2] == [changed["R2"]]
        # The old text cannot be decided any more; the new one is, once.
        with pytest.raises(ReviewError):
            decide(session, DecisionRequest(str(old.review_id), "reject", "ana"), set())
        session.rollback()
        assert status_counts(session)[WITHDRAWN_STATUS] == 1
    decide_row(engine, "R2")
    with Session(engine) as session:
        links = [x for x in links_to_export(session, False) if x.section_id == "R2"]
    assert len(links) == 1 and not links[0].pending_update
    # The next version, unchanged, leaves it so: nothing restores a superseded item.
    assert link(tmp_path, csv(changed), db, "v3") == []
    assert rows_of(engine, "R2")[0].status == SUPERSEDED


def test_a_withdrawn_item_back_with_other_text_is_superseded_not_restored(
    tmp_path: Path, db: str
) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    link(tmp_path, csv(without("R3")), db, "v2")
    back = dict(ROWS, R3="Encrypt data at rest with AES-256.")
    assert link(tmp_path, csv(back), db, "v3") == []
    old, new = rows_of(engine, "R3")
    assert old.status == SUPERSEDED and new.status == REVIEW_REQUIRED


# --- item 17: undo on a withdrawn item -------------------------------------------------


def test_undo_on_a_withdrawn_item_leaves_it_withdrawn(tmp_path: Path, db: str) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    decide_row(engine, "R4")
    said = link(tmp_path, csv(without("R4")), db, "v2")
    assert said == [
        "1 requirement no longer in the document: decided, marked so and left out of the "
        "OpenCRE export (R4)"
    ]
    with Session(engine) as session, session.begin():
        assert undo_last(session, "ana") is not None
    (row,) = rows_of(engine, "R4")
    assert row.status == WITHDRAWN and row.consumed_at is None
    with Session(engine) as session:
        assert row.chunk_id not in {s.chunk_id for s in open_sections(session, f"plain:{SOURCE}")}
    # Back in the document: open again, for a person.
    assert link(tmp_path, csv(ROWS), db, "v3")[-1].endswith("restored (R4)")
    assert rows_of(engine, "R4")[0].status == REVIEW_REQUIRED


def test_the_next_run_closes_a_withdrawn_item_an_undo_reopened(tmp_path: Path, db: str) -> None:
    engine = make_engine(db)
    link(tmp_path, csv(ROWS), db, "v1")
    decide_row(engine, "R4")
    link(tmp_path, csv(without("R4")), db, "v2")
    (row,) = rows_of(engine, "R4")
    with Session(engine) as session, session.begin():  # what an undo left before
        session.execute(
            update(DecisionRow).where(DecisionRow.id == row.id).values(consumed_at=None)
        )
    said = link(tmp_path, csv(without("R4")), db, "v3")
    assert said == ["1 requirement no longer in the document: open item closed as withdrawn (R4)"]
    assert rows_of(engine, "R4")[0].status == WITHDRAWN
