"""The review handoff on SQLite and a real PostgreSQL: the upstream C -> D contract query
in exactly its form, two review tools on one table, and the 0004 migration of a store
holding decisions from before reviewers had names."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session

from librarian.review.decisions import DecisionRequest, build_decision, decide
from librarian.store import decisions as store
from librarian.store.db import MIGRATIONS, make_engine, upgrade
from librarian.store.decisions import StoredBatch
from librarian.store.human import (
    AlreadyDecided,
    ReviewError,
    open_row,
    standing_decisions,
    store_decision,
)
from librarian.store.tables import DecisionRow
from tests.rfc import assert_rfc_valid_decisions
from tests.seeded import TEXTS, review_ids, seed, seeded_batch
from tests.stubs import small_hub

pytestmark = pytest.mark.integration

UPSTREAM = text(
    "SELECT id, chunk_id, artifact_id, pipeline_run_id, schema_version, source_label, status, "
    "reason_code, review_id, confidence, envelope, created_at, consumed_at "
    "FROM decision_queue WHERE consumed_at IS NULL AND status = 'review_required' "
    "ORDER BY created_at, id"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return str(request.getfixturevalue("postgres_url"))


def test_two_review_tools_share_the_decision_queue(database: str) -> None:
    engine = make_engine(database)
    upgrade(engine)
    seed(engine, TEXTS)
    with engine.begin() as conn:  # the other tool takes the first open item
        rows = conn.execute(UPSTREAM).all()
        envelope = rows[0].envelope  # raw SQL: JSON text on SQLite, decoded on PostgreSQL
        envelope = json.loads(envelope) if isinstance(envelope, str) else envelope
        assert len(rows) == 4 and envelope["status"] == "review_required"
        assert {(r.schema_version, r.source_label) for r in rows} == {("0.1.0", "KNOWLEDGE")}
        conn.execute(
            text(
                "UPDATE decision_queue SET consumed_at = CURRENT_TIMESTAMP "
                "WHERE id = :i AND consumed_at IS NULL"
            ),
            {"i": rows[0].id},
        )
    ids = review_ids(engine)
    with (
        Session(engine) as session,
        session.begin(),
        pytest.raises(AlreadyDecided, match="another review tool"),
    ):
        decide(session, DecisionRequest(ids[0], "approve", "rita"), small_hub().ids)
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(ids[1], "choose", "rita", ("400-000",)), small_hub().ids)
    with engine.begin() as conn:
        assert [r.review_id for r in conn.execute(UPSTREAM)] == ids[2:]
    with Session(engine) as session:
        decided = [
            d.model_dump(mode="json", exclude_none=True) for d in standing_decisions(session)
        ]
    assert len(decided) == 1
    assert_rfc_valid_decisions(decided)
    engine.dispose()


def test_migration_0004_keeps_earlier_decisions(database: str) -> None:
    engine = make_engine(database)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
        conn.execute(
            text(
                "INSERT INTO decision_queue (chunk_id, content_hash, artifact_id, span_key, "
                "run_id, status, is_update, review_id, text, envelope, created_at, "
                "review_consumed_at) "
                "VALUES ('c', 'h', 'a', 's', 'r0', 'reviewed', false, 'rev-1', 't', '{}', "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        row_id = conn.execute(text("SELECT id FROM decision_queue")).scalar_one()
        conn.execute(
            text(
                "INSERT INTO human_decisions (decision_id, review_id, action, cre_id, text, "
                "imported_from, decided_at) VALUES (:d, 'rev-1', 'accept', '400-000', 't', "
                "'sheet.csv', CURRENT_TIMESTAMP)"
            ),
            {"d": row_id},
        )
    upgrade(engine)
    check(engine)
    engine.dispose()


def check(engine: Engine) -> None:
    with engine.begin() as conn:
        row = conn.execute(
            text("SELECT status, pipeline_run_id, consumed_at FROM decision_queue")
        ).one()
        decision = conn.execute(
            text("SELECT action, final_cre_ids, decided_by, decision_uuid FROM human_decisions")
        ).one()
        assert conn.execute(UPSTREAM).all() == []  # decided before: consumed
    assert (row.status, row.pipeline_run_id) == ("review_required", "r0")
    assert row.consumed_at is not None
    assert (decision.action, decision.final_cre_ids) == ("approve", "400-000")
    assert decision.decided_by.startswith("unnamed") and len(decision.decision_uuid) == 36


def _redecided_by_newer_models(run: str) -> StoredBatch:
    """The seeded items as a run with other models decides them again (all to review)."""
    return replace(seeded_batch(TEXTS, run, chunks_of="r1"), models_digest="new-models")


def test_a_run_never_overwrites_a_decision_made_while_it_ran(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28, item 1: the run read an open item, a reviewer decided it, then the run's
    write replaced the row (review id, envelope) under the person's decision. The window
    is widened by a hook between the run's read and its write, not left to luck."""
    engine = make_engine(database)
    upgrade(engine)
    seed(engine, TEXTS)
    before = review_ids(engine)
    read = store._present

    def reviewer_decides_in_between(session: Session, batch: StoredBatch) -> Any:
        found = read(session, batch)
        with Session(engine) as other, other.begin():
            decide(other, DecisionRequest(before[0], "reject", "rita"), small_hub().ids)
        return found

    monkeypatch.setattr(store, "_present", reviewer_decides_in_between)
    with Session(engine) as session:
        written = store.write(session, _redecided_by_newer_models("r2"))
        session.commit()
    assert (written.lost_to_review, written.redecided) == (1, len(TEXTS) - 1)
    after = review_ids(engine)
    assert after[0] == before[0]  # the person's item kept its review id
    assert all(new != old for new, old in zip(after[1:], before[1:], strict=True))
    with Session(engine) as session:
        kept = session.execute(select(DecisionRow).order_by(DecisionRow.id)).scalars().first()
        assert kept is not None and kept.consumed_at is not None
        assert kept.pipeline_run_id == "r1" and kept.models_digest is None
        standing = standing_decisions(session)
    assert [d.review_id for d in standing] == [before[0]]  # export -> import finds it
    engine.dispose()


def test_a_decision_on_an_item_re_decided_meanwhile_is_refused(database: str) -> None:
    """The other order: the reviewer opened the item, the run re-decided it (a new review
    id, new suggestions), then the reviewer's decision arrived for what they saw."""
    engine = make_engine(database)
    upgrade(engine)
    seed(engine, TEXTS)
    seen = review_ids(engine)[0]
    with Session(engine) as reviewer:
        row = open_row(reviewer, seen)
        decision = build_decision(
            row, DecisionRequest(seen, "approve", "rita"), small_hub().ids, datetime.now(UTC)
        )
        with Session(engine) as run:
            assert store.write(run, _redecided_by_newer_models("r2")).redecided == len(TEXTS)
            run.commit()
        with pytest.raises(ReviewError, match="decided again by newer models"):
            store_decision(reviewer, row, decision, None, "workbench")
        reviewer.rollback()
    with Session(engine) as session:
        assert standing_decisions(session) == []
    engine.dispose()


def test_a_run_waits_for_and_then_yields_to_a_reviewer_on_postgresql(
    postgres_url: str,
) -> None:
    """On PostgreSQL the two really overlap: the reviewer's compare-and-set holds the row
    lock, the run's UPDATE waits on it, then finds the row decided and leaves it."""
    engine = make_engine(postgres_url)
    upgrade(engine)
    seed(engine, TEXTS)
    first = review_ids(engine)[0]
    reviewer = Session(engine)
    decide(reviewer, DecisionRequest(first, "reject", "rita"), small_hub().ids)  # not committed
    outcome: list[store.WriteResult] = []

    def run() -> None:
        with Session(engine) as session:
            outcome.append(store.write(session, _redecided_by_newer_models("r2")))
            session.commit()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=1.0)
    assert worker.is_alive()  # blocked on the reviewer's row lock
    reviewer.commit()
    reviewer.close()
    worker.join(timeout=30)
    assert (outcome[0].lost_to_review, outcome[0].redecided) == (1, len(TEXTS) - 1)
    assert review_ids(engine)[0] == first
    engine.dispose()


# Issue 38, defect 2: change and undo racing left two standing decisions ------------------


def _decided(database: str) -> tuple[Engine, str]:
    engine = make_engine(database)
    upgrade(engine)
    seed(engine, TEXTS)
    review_id = review_ids(engine)[0]
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(review_id, "approve", "rita"), small_hub().ids)
    return engine, review_id


def test_a_lead_change_committed_while_an_undo_runs_wins_and_one_decision_stands(
    database: str,
) -> None:
    """`undo_last` read the standing decision, a lead's change committed, then the undo
    stamped the superseded decision undone and reopened the item: the lead's decision stood
    on an open item, and a second reviewer's made two (`queue status` counted the item
    twice; the myopencre export linked what the lead rejected)."""
    from librarian.review.decisions import change
    from librarian.store.human import latest_standing, take_back, violations

    engine, review_id = _decided(database)
    postgres = database.startswith("postgresql")
    undoing = Session(engine, expire_on_commit=False)
    try:
        undoing.begin()
        last = latest_standing(undoing, "rita")  # the undo has read what stands
        assert last is not None
        if not postgres:  # SQLite: a reader would block the writer's commit
            undoing.commit()
            undoing.begin()
        with Session(engine) as lead, lead.begin():
            rejected = DecisionRequest(
                review_id, "reject", "lena", rejection_code="NO_CRE_FITS", note="no"
            )
            change(lead, rejected, small_hub().ids, leads={"lena"})
        with pytest.raises(ReviewError, match="changed or undone meanwhile"):
            take_back(undoing, last)
        undoing.rollback()
    finally:
        undoing.close()
    with Session(engine) as session:
        assert violations(session) == []
        (standing,) = [d for d in standing_decisions(session) if d.review_id == review_id]
        assert standing.action == "reject" and standing.decided_by == "lena"
        row = session.execute(
            select(DecisionRow).where(DecisionRow.review_id == review_id)
        ).scalar_one()
        assert row.consumed_at is not None  # still decided: no second reviewer can take it
    engine.dispose()


def test_an_undo_committed_before_a_change_leaves_the_change_refused(database: str) -> None:
    from librarian.review.decisions import change
    from librarian.store.human import undo_last, violations

    engine, review_id = _decided(database)
    with Session(engine) as session, session.begin():
        assert undo_last(session, "rita") == review_id
    with Session(engine) as lead, lead.begin(), pytest.raises(ReviewError):
        change(
            lead,
            DecisionRequest(review_id, "reject", "lena", rejection_code="NO_CRE_FITS"),
            small_hub().ids,
            leads={"lena"},
        )
    with Session(engine) as session:
        assert violations(session) == []
        assert not [d for d in standing_decisions(session) if d.review_id == review_id]
    engine.dispose()


def test_relink_the_rescorer_and_a_reviewer_at_once_leave_one_standing_decision(
    database: str,
) -> None:
    """Issue 38: a live race of `relink --commit`, the workbench's re-scorer and a
    reviewer's decision on the same source; each write is conditional, so the reviewer's
    decision stands on the item it was made on and nothing holds two."""
    from librarian.review.relink import Rescorer, relink
    from librarian.store.human import violations
    from tests.stubs import stub_pipeline

    engine = make_engine(database)
    upgrade(engine)
    seed(engine, [f"{t} number {i}" for i in range(8) for t in TEXTS[:1]])
    ids = review_ids(engine)
    with Session(engine) as session:
        source = str(session.execute(select(DecisionRow.source_key)).scalars().first())
    pipeline = stub_pipeline(threshold=0.0, top_k=6, top_n=5)  # re-deciding links all
    decided: list[str] = []

    def reviewer() -> None:
        for review_id in ids:
            with Session(engine) as session, session.begin():
                decide(
                    session,
                    DecisionRequest(review_id, "reject", "rita", rejection_code="NO_CRE_FITS"),
                    small_hub().ids,
                )
            decided.append(review_id)

    race(
        lambda: relink(engine, pipeline, source, "relink-r", True),
        lambda: Rescorer(engine, lambda: pipeline)(source),
        reviewer,
    )
    with Session(engine) as session:
        assert violations(session) == []
        standing = {d.review_id: d for d in standing_decisions(session)}
        rows = {r.review_id: r for r in session.execute(select(DecisionRow)).scalars()}
    for review_id in decided:  # every decision recorded stands, on a closed item
        assert review_id in standing and rows[review_id].consumed_at is not None
        assert rows[review_id].status == "review_required"
    engine.dispose()


# Issue 38: every state change of a decision is a compare-and-set; each pair at once ------


def _ops(engine: Engine, review_id: str) -> dict[str, Any]:
    """The state changes of one decided item (rita's approve of it stands)."""
    from librarian.review.decisions import change
    from librarian.review.qa import adjudicate
    from librarian.review.relink import relink
    from librarian.store.human import undo_last
    from librarian.store.qa import pending_check, sample_double
    from tests.seeded import answer
    from tests.stubs import stub_pipeline

    hub = small_hub().ids
    with Session(engine) as session, session.begin():
        sample_double(session, 1.0, "lena", datetime.now(UTC), seed=1)
    with Session(engine) as session:
        check = pending_check(session, "sam")
    assert check is not None
    answer(engine, check.id, "sam", ("400-000",))  # a disagreement for the lead to rule on
    source = None
    with Session(engine) as session:
        source = str(session.execute(select(DecisionRow.source_key)).scalars().first())
    pipeline = stub_pipeline(threshold=0.0, top_k=6, top_n=5)

    def in_transaction(work: Any) -> Any:
        def run() -> None:
            with Session(engine) as session, session.begin():
                work(session)

        return run

    reject = DecisionRequest(review_id, "reject", "lena", rejection_code="NO_CRE_FITS")
    return {
        "undo": in_transaction(lambda s: undo_last(s, "rita")),
        "change": in_transaction(lambda s: change(s, reject, hub, leads={"lena"})),
        "ruling": in_transaction(lambda s: adjudicate(s, check.id, "lena", "second", hub)),
        "bulk": in_transaction(
            lambda s: decide(s, DecisionRequest(review_id, "approve", "bob"), hub)
        ),
        "rescore": lambda: relink(engine, pipeline, source, "rescore-race", True),
    }


PAIRS = [
    ("undo", "change"),
    ("undo", "ruling"),
    ("undo", "bulk"),
    ("change", "ruling"),
    ("undo", "rescore"),
    ("bulk", "rescore"),
]


@pytest.mark.parametrize(("one", "other"), PAIRS, ids=["-".join(p) for p in PAIRS])
def test_each_pair_of_state_changes_at_once_leaves_one_standing_decision(
    database: str, one: str, other: str
) -> None:
    from librarian.store.human import violations

    engine, review_id = _decided(database)
    ops = _ops(engine, review_id)
    race(ops[one], ops[other])
    with Session(engine) as session:
        assert violations(session) == []
    engine.dispose()


def race(*work: Any) -> None:
    """Run each of `work` at once (a barrier starts them together); a loser that is told
    (ReviewError, AlreadyDecided) recorded nothing; anything else fails the test."""
    start = threading.Barrier(len(work))
    errors: list[BaseException] = []

    def run(one: Any) -> None:
        start.wait()
        try:
            one()
        except (ReviewError, AlreadyDecided):
            pass  # lost the race, and was told: nothing recorded
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(one,)) for one in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []


@pytest.mark.parametrize(
    "check",
    [
        "signed_in_sessions_end_with_their_key",  # item 1, severe
        "sign_ins_are_throttled",  # item 3
        "no_sign_in_by_address",  # item 4
        "roles_come_from_the_store",  # item 7
    ],
)
def test_sign_in_and_roles_hold_on_every_store(database: str, check: str) -> None:
    """Issue 47, items 1, 3, 4 and 7, on SQLite and PostgreSQL: re-keying and removal end
    every earlier session; failed sign-ins are limited; no sign-in by an address; a lead
    is the store's, proven by their key."""
    from tests.unit import test_signin

    engine = make_engine(database)
    upgrade(engine)
    seed(engine, TEXTS)
    getattr(test_signin, check)(engine)


def test_migrators_at_once_on_a_fresh_postgresql_database_both_succeed(postgres_url: str) -> None:
    """Issue 47, item 15: two commit runs at once on a fresh PostgreSQL database, and one
    failed with a duplicate key from concurrent migrations. Migrations now take an advisory
    lock: six migrators at once, every one succeeds, and the schema is current."""
    from librarian.store.db import check_current

    errors: list[BaseException] = []
    engines = [make_engine(postgres_url) for _ in range(6)]

    def migrate(engine: Engine) -> None:
        try:
            upgrade(engine)
        except BaseException as exc:  # the test reports them all
            errors.append(exc)

    race(*[lambda e=e: migrate(e) for e in engines])
    assert errors == []
    check_current(postgres_url)  # raises when the schema is not the newest
    for engine in engines:
        engine.dispose()
