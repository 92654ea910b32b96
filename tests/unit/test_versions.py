"""Issue 48, item 3: versions end cleanly. Version 2 of a policy removed a requirement:
its open item stayed open and nothing said so, and the OpenCRE export carried the
version-1 text of a changed requirement as a confirmed link, unmarked."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from librarian.job import HandOff, LinkJob, Where, run_job
from librarian.pipeline.aligned import Item, align
from librarian.pipeline.run import InProcess
from librarian.review.decisions import DecisionRequest, decide
from librarian.review.myopencre import links_to_export, withdrawn_links
from librarian.schemas.records import RunSummary
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import WITHDRAWN
from librarian.store.review import item_detail
from librarian.store.status import WITHDRAWN_STATUS, status_counts
from librarian.store.tables import DecisionRow
from librarian.store.versions import decided_but_gone, row_name
from tests.stubs import small_hub, stub_pipeline

V1 = (
    "id,text\n"
    "R1,Rotate the session token after login.\n"
    "R2,Hash passwords with a slow function.\n"
    "R3,Encrypt data at rest with AES.\n"
    "R4,Log every failed login.\n"
)
# R2 changed, R3 removed, R5 added.
V2 = (
    "id,text\n"
    "R1,Rotate the session token after login.\n"
    "R2,Hash passwords with a slow salted function.\n"
    "R4,Log every failed login.\n"
    "R5,Lock the account after five failed logins.\n"
)


def _run(tmp_path: Path, text: str, db: str, run_id: str) -> list[str]:
    policy = tmp_path / "policy.csv"
    policy.write_text(text)
    pipeline = stub_pipeline(threshold=0.99)  # every item to review
    job = LinkJob(policy, tmp_path / run_id, LinkerSettings(), run_id, db, source_name="Acme")
    where = Where(InProcess(pipeline), lambda _: pipeline, lambda _: None)
    return run_job(job, where, HandOff()).withdrawn


def _decide(engine: Engine, row_name: str) -> None:
    with Session(engine) as session:
        row = session.scalars(
            select(DecisionRow).where(DecisionRow.chunk_id.endswith(f":{row_name}"))
        ).one()
        decide(
            session,
            DecisionRequest(str(row.review_id), "choose", "ana", ("200-001",)),
            small_hub().ids,
        )
        session.commit()


def test_a_requirement_removed_from_the_document_is_withdrawn_and_said(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    engine = make_engine(db)
    upgrade(engine)
    assert _run(tmp_path, V1, db, "v1") == []
    _decide(engine, "R2")  # confirmed: its text then changes
    _decide(engine, "R4")  # confirmed, and unchanged
    said = _run(tmp_path, V2, db, "v2")
    assert said == ["1 requirement no longer in the document: open item closed as withdrawn (R3)"]
    with Session(engine) as session:
        gone = session.scalars(
            select(DecisionRow).where(DecisionRow.chunk_id.endswith(":R3"))
        ).one()
        assert gone.status == WITHDRAWN and gone.withdrawn_at is not None
        assert status_counts(session)[WITHDRAWN_STATUS] == 1
        links = {link.section_id: link for link in links_to_export(session, with_auto=False)}
        # R2's confirmed link is of its old text, and the new one waits for review.
        assert links["R2"].pending_update and not links["R4"].pending_update
        assert withdrawn_links(session) == 0
    # Version 3 drops R4, which a person had confirmed: kept, marked, out of the export.
    v3 = V2.replace("R4,Log every failed login.\n", "")
    assert _run(tmp_path, v3, db, "v3") == [
        "1 requirement no longer in the document: decided, marked so and left out of the "
        "OpenCRE export (R4)"
    ]
    with Session(engine) as session:
        assert decided_but_gone(session) == 1 and withdrawn_links(session) == 1
        assert "R4" not in {link.section_id for link in links_to_export(session, False)}
    # Back in version 4: restored, its open item open again.
    assert (
        _run(tmp_path, V1, db, "v4")[-1] == "2 requirements back in the document: restored (R3, R4)"
    )


def _run_document(path: Path, db: str, run_id: str) -> RunSummary:
    pipeline = stub_pipeline(threshold=0.99)  # every item to review
    job = LinkJob(path, path.parent / run_id, LinkerSettings(), run_id, db, source_name="ISP-01")
    where = Where(InProcess(pipeline), lambda _: pipeline, lambda _: None)
    return run_job(job, where, HandOff())


def test_a_version_is_matched_by_text_when_its_clauses_are_relettered(tmp_path: Path) -> None:
    """Issue 58, item 4: version 2 of a policy removed IV.e and X.d, changed three clauses
    and added two, and re-lettered the clauses after each removal and insertion (the new
    IV.e is the old IV.f). Matched by text, the removed two are withdrawn, not the last
    letter of each section; the three changed are updates of themselves; the re-lettered
    keep their items; no requirement has two open items; the ids shown are version 2's."""
    from tests.blind_policies import POLICIES, version_two

    db = f"sqlite:///{tmp_path / 'store.db'}"
    engine = make_engine(db)
    upgrade(engine)
    logistics = next(p for p in POLICIES if p.name == "logistics")
    v2, changes = version_two()
    first = _run_document(logistics.save("docx", tmp_path / "v1"), db, "v1")
    assert first.withdrawn == []
    second = _run_document(v2.save("docx", tmp_path / "v2"), db, "v2")
    gone = sorted(changes["removed"])
    assert second.withdrawn == [
        f"2 requirements no longer in the document: open item closed as withdrawn "
        f"({', '.join(gone)})"
    ]
    assert any("3 changed, 2 new, 2 no longer in it" in line for line in second.reading)
    with Session(engine) as session:
        open_rows = session.scalars(
            select(DecisionRow).where(
                DecisionRow.status == "review_required", DecisionRow.consumed_at.is_(None)
            )
        ).all()
        texts = [" ".join(r.text.split()) for r in open_rows]
        assert len(texts) == len(set(texts)) == len(v2.requirements)  # one open item each
        shown = {
            r.envelope["knowledge"]["locator"]["id"].split("#")[1].split(" (")[0] for r in open_rows
        }
        assert shown == {r.label for r in v2.requirements}
        updates = [r for r in open_rows if r.is_update]
        assert sorted(row_name(r.chunk_id) for r in updates) == sorted(changes["changed"])
        for update in updates:  # the page shows the old text beside the new, not twice
            detail = item_detail(session, str(update.review_id))
            assert detail is not None and detail.prior_text is not None
            assert " ".join(detail.prior_text.split()) != " ".join(update.text.split())


def test_alignment_follows_the_text_not_the_label() -> None:
    old = [Item("a", "Backups are daily."), Item("b", "Logs are kept."), Item("c", "Keys rotate.")]
    # "a" removed, "b" and "c" re-lettered, "c" reworded, a new "c" added.
    new = [
        Item("a", "Logs are kept."),
        Item("b", "Keys rotate every year."),
        Item("c", "Screens lock after five minutes."),
    ]
    found = align(new, old)
    assert found.identities == ["b", "c", "c~2"]  # the new "c" never takes an old identity
    assert found.gone == ["a"] and found.edited == ["c"] and found.new == ["c"]
    assert found.relabelled == [("b", "a"), ("c", "b")]
    assert align(old, old).lines() == []  # the same version again: nothing to say


def test_a_file_matched_to_its_last_version_is_not_read_again(tmp_path: Path) -> None:
    """The command reads a plain input once (its rows count the progress bar); a commit
    run matching it to its last version reuses what was read."""
    from librarian.pipeline.sources import PlainFile

    policy = tmp_path / "policy.csv"
    policy.write_text(V2)
    first = PlainFile(policy, "Acme")
    assert first.rows.chunk_ids
    matched = first.matched_to((Item("R3", "Encrypt data at rest with AES."),))
    assert matched.read is first.read
    assert any("no longer in it" in line for line in matched.rows.version)


def test_a_source_is_as_large_as_its_document_whatever_its_versions(tmp_path: Path) -> None:
    """Issue 58, item 6: `queue status` called a 23-item document "a 29-item source": a
    requirement whose text changed has a row for each text, and each was counted. Its
    size is its document's requirements (withdrawn ones out), each once; and the run
    that reads the version counts the same (the open item of a requirement it no longer
    holds was one of its items, taking part in linking it, until withdrawn after)."""
    import json

    from librarian.store.progress import source_progress, source_sizes

    db = f"sqlite:///{tmp_path / 'store.db'}"
    engine = make_engine(db)
    upgrade(engine)
    _run(tmp_path, V1, db, "v1")
    _decide(engine, "R2")  # its text changes in version 2: a second row, one requirement
    _run(tmp_path, V2, db, "v2")
    with Session(engine) as session:
        assert session.scalar(select(func.count(DecisionRow.id))) == 6  # R1-R5 and R2's old
        assert list(source_sizes(session).values()) == [4]  # R1, R2, R4, R5
        (progress,) = source_progress(session)
    assert progress.expect().startswith("a 4-item source")
    run = json.loads((tmp_path / "v2" / "summary.json").read_text())
    assert [source["items"] for source in run["sources"].values()] == [4]
