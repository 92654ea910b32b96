"""Issue 56, items 2, 3, 11 and 15: evidence and names cannot be forged.

A source's cut rests on distinct requirements (one span key across its text versions, one
normalised text), each counted once by its latest standing decision; an import that
approves every row is a bulk approval; a decision file's names are provenance, never the
decider; `queue status` says how many open items relink links, and relink links that
many; `review qa sample` acts for a registered reviewer proven by their key. The scenes
here are shared with `tests/integration/test_hardening_seventh_evidence.py`, which plays
items 2 and 3 on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.cli import app
from librarian.pipeline.batches import Admitted
from librarian.pipeline.emit import ScoreStage
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import RunParts, run_source
from librarian.pipeline.stages import CalibratedScaler
from librarian.policy import CutEvidence, DecisionPolicy, text_digest
from librarian.review.decisions import DecisionRequest, decide, import_decisions
from librarian.review.relink import relink
from librarian.review.sheets import read_decisions
from librarian.schemas.records import RawBatch, RunSummary, Section
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import LINKED, REVIEW_REQUIRED
from librarian.store.history import source_history
from librarian.store.human import by_bulk, take_back, undo_last
from librarian.store.policies import record_cuts, store_policy
from librarian.store.progress import decisions_seen, evidence_now, source_progress
from librarian.store.review import review_items
from librarian.store.sink import DatabaseSink, DatabaseStore
from librarian.store.tables import DecisionRow, HumanDecisionRow, QaCheckRow
from librarian.text import key_digest
from tests.seeded import answer, register, review_ids, seed
from tests.stubs import joint_pipeline, small_hub
from tests.unit.test_relink import policy_texts
from tests.unit.test_review import sheet

HUB_IDS = set(small_hub().ids)
# The team's promise in these scenes: small enough for a 40-rule source to certify a cut.
POLICY = DecisionPolicy(budget=0.2, confidence=0.8)


def linking_pipeline(policy: DecisionPolicy = POLICY) -> Pipeline:
    """The joint stub scored as a trained pipeline is (`factory.assemble`): C.7 reads the
    confidences C.5 ordered by, so a row its source's cut certifies is linked."""
    pipeline = joint_pipeline().with_policy(policy)
    model = pipeline.source_level.model
    assert model is not None
    pipeline.stage(ScoreStage).scaler = CalibratedScaler(model.calibrator, "test", model)
    return pipeline


def fresh(url: str) -> Engine:
    engine = make_engine(url)
    upgrade(engine)
    return engine


def run_rows(engine: Engine, pipeline: Pipeline, batch: list[Section], run_id: str) -> RunSummary:
    """A committed run of `batch` (what `librarian run --commit` stores, the cut too)."""
    raw = RawBatch([(s.line, s.text.encode()) for s in batch], 0, 0, 0, eof=True)
    summary = RunSummary(run_id=run_id, input="t", out_dir="", started_at="")
    sink = DatabaseSink(engine, run_id, "t", pipeline.models_digest)
    parts = RunParts(sinks=[sink], store=DatabaseStore(engine, pipeline.models_digest))
    admitted = Admitted(raw, batch, [], [], None)
    run_source(pipeline, [admitted], pipeline.context(run_id), summary, parts)
    return summary


def forty_rules(engine: Engine, pipeline: Pipeline) -> str:
    """The 40 rules of one source run and stored under POLICY; the source's key."""
    summary = run_rows(engine, pipeline, policy_texts(), "run-1")
    store_policy(engine, "run-1", pipeline.policy)
    (key,) = summary.sources
    return key


def open_row(engine: Engine, chunk: str) -> DecisionRow | None:
    with Session(engine) as session:
        return session.execute(
            select(DecisionRow).where(
                DecisionRow.chunk_id == chunk,
                DecisionRow.status == REVIEW_REQUIRED,
                DecisionRow.consumed_at.is_(None),
            )
        ).scalar_one_or_none()


def new_version(engine: Engine, pipeline: Pipeline, chunk: str, n: int) -> None:
    """Version `n` of requirement `chunk` (its text changed, same span) run and stored."""
    index = int(chunk.removeprefix("c"))
    text = f"{policy_texts()[index].text} version {n}"
    section = section_from_text(text).model_copy(
        update={"chunk_id": chunk, "line": 1, "span_index": index}
    )
    run_rows(engine, pipeline, [section], f"v{n}")


def approve(engine: Engine, review_id: str, who: str = "mallory") -> None:
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(review_id, "approve", who), HUB_IDS)


def approve_twenty_versions(engine: Engine, pipeline: Pipeline) -> str:
    """The attack of item 2: one requirement (the most confident) approved, a new version
    of its text run, approved again, twenty times. Returns its chunk."""
    with Session(engine) as session:
        chunk = session.execute(
            select(DecisionRow.chunk_id).order_by(DecisionRow.confidence.desc()).limit(1)
        ).scalar_one()
    for n in range(1, 21):
        row = open_row(engine, chunk)
        assert row is not None, f"version {n} went to review"
        approve(engine, str(row.review_id))
        new_version(engine, pipeline, chunk, n)
    return chunk


def attack_certifies_nothing(engine: Engine) -> None:
    """Item 2, done when: twenty approved versions of one requirement certify nothing,
    and relink links nothing on them."""
    pipeline = linking_pipeline()
    key = forty_rules(engine, pipeline)
    chunk = approve_twenty_versions(engine, pipeline)
    with Session(engine) as session:
        (progress,) = source_progress(session)
        decided = session.execute(
            select(HumanDecisionRow.id).where(HumanDecisionRow.standing())
        ).all()
    assert len(decided) == 20  # twenty standing decisions...
    assert progress.decisions == 1, progress  # ...of one requirement
    assert progress.certified.startswith("review plan: right so far 1 of 1"), progress.certified
    done = relink(engine, pipeline, key, "relink-after", commit=True)
    assert done.summary is not None and done.summary.linked == 0, done.status["says"]
    assert done.status["cut"]["basis"] == "none", done.status["says"]
    assert "exact test on 20" not in done.status["says"]
    with Session(engine) as session:
        linked = session.execute(select(DecisionRow.id).where(DecisionRow.status == LINKED))
        assert linked.all() == []
    # An undo/redo loop on the open version, and QA's blind answers, add nothing either.
    row = open_row(engine, chunk)
    assert row is not None
    for _ in range(5):
        approve(engine, str(row.review_id))
        with Session(engine) as session, session.begin():
            assert undo_last(session, "mallory") == row.review_id
    approve(engine, str(row.review_id))
    with Session(engine) as session:
        assert decisions_seen(session, key) == 1
        history = source_history(session, [key])[key]
    assert len(history.reviewed) == 1


def test_twenty_approved_versions_of_one_requirement_certify_nothing(tmp_path: Path) -> None:
    """Item 2 (severe): 20 approvals of 20 text versions of one requirement were "an exact
    test on 20 reviewed items of this source above it (0 wrong)", and relink linked six
    other rules on them."""
    attack_certifies_nothing(fresh(f"sqlite:///{tmp_path / 'attack.db'}"))


def test_a_duplicate_text_under_another_key_is_one_reviewed_item(tmp_path: Path) -> None:
    """Item 2: the same requirement twice in a source (two spans, one normalised text) is
    one item to C.5: decided twice, it counts once."""
    engine = fresh(f"sqlite:///{tmp_path / 'dup.db'}")
    seed(engine, ["Rotate the session token after login", "rotate the  SESSION token after login"])
    for review_id in review_ids(engine):
        approve(engine, review_id, "rita")
    with Session(engine) as session:
        (key,) = {str(r.source_key) for r in session.execute(select(DecisionRow)).scalars()}
        assert decisions_seen(session, key) == 1
        assert len(source_history(session, [key])[key].reviewed) == 1


def test_a_sheet_that_accepts_every_row_is_a_bulk_approval(tmp_path: Path) -> None:
    """Item 2: the workbench's "approve all" certifies no cut; a sheet whose every row is
    accepted did, one decision a row. Now it is recorded as bulk, and says so."""
    engine = fresh(f"sqlite:///{tmp_path / 'bulk.db'}")
    seed(engine, [f"requirement {i}: rotate the session token after login" for i in range(6)])
    accepted = sheet(tmp_path, engine, {n: ("accept", "") for n in range(4)})
    said = CliRunner().invoke(
        app, ["review", "import", str(accepted), "--db", str(engine.url), "--reviewer", "rita"]
    )
    assert said.exit_code == 0, said.output
    assert "the 4 approvals are recorded as bulk approvals" in " ".join(said.output.split())
    with Session(engine) as session:
        records = session.execute(select(HumanDecisionRow.record)).scalars().all()
        (key,) = {str(r.source_key) for r in session.execute(select(DecisionRow)).scalars()}
        assert len(records) == 4 and all(by_bulk(r) for r in records)
        assert decisions_seen(session, key) == 0
    # A sheet that weighs its rows (one rejected) is decisions, one a row.
    mixed = sheet(tmp_path, engine, {0: ("accept", ""), 1: ("reject", "")})
    read = read_decisions(mixed, "rita")
    result = import_decisions(engine, read.incoming, HUB_IDS, str(mixed), importer="rita")
    assert (result.approved, result.rejected, result.bulk, result.errors) == (1, 1, 0, [])
    with Session(engine) as session:
        assert decisions_seen(session, key) == 2


def test_the_sample_asked_for_is_drawn_from_the_items_the_plan_reads(tmp_path: Path) -> None:
    """Item 2: the items `queue status` asks to decide first are the plan's draw, over the
    confidences its cut reads. An open item the stored evidence never saw was drawn at the
    confidence it was shown with, beside cold ones, and is no part of that sample."""
    engine = fresh(f"sqlite:///{tmp_path / 'sample.db'}")
    seed(engine, [f"requirement number {i} about session tokens" for i in range(9)])
    with Session(engine) as session:
        rows = list(session.execute(select(DecisionRow).order_by(DecisionRow.id)).scalars())
    seen, unseen = rows[:8], rows[8]
    entries = tuple((key_digest(r.span_key), 0.5, r.top_cre_id or "") for r in seen)
    evidence = CutEvidence(entries, ())
    with Session(engine) as session, session.begin():
        record_cuts(
            session,
            "r1",
            {str(rows[0].source_key): {"threshold": 1.0, "evidence": evidence.as_json()}},
        )
    with Session(engine) as session:
        (progress,) = source_progress(session)
    assert sorted(progress.review_first) == sorted(str(r.review_id) for r in seen)
    assert str(unseen.review_id) not in progress.review_first


def forged_file(tmp_path: Path, engine: Engine, decided_by: str) -> Path:
    """A HumanDecision file approving the first open item, in `decided_by`'s name."""
    with Session(engine) as session:
        item = review_items(session, "open")[0]
    record = {
        "schema_version": "0.1.0",
        "decision_id": str(uuid.uuid4()),
        "review_id": item.review_id,
        "chunk_id": item.chunk_id,
        "pipeline_run_id": "r1",
        "decided_at": "2026-12-01T10:00:00+00:00",
        "decided_by": decided_by,
        "action": "approve",
        "final_links": [
            {"cre_id": item.suggestions[0].cre_id, "link_type": "LinkedTo", "confidence": 1.0}
        ],
    }
    path = tmp_path / "forged.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def standing(engine: Engine) -> list[tuple[str, str | None]]:
    with Session(engine) as session:
        found = session.execute(
            select(HumanDecisionRow.decided_by, HumanDecisionRow.note).where(
                HumanDecisionRow.standing()
            )
        )
        return [(str(by), note) for by, note in found.all()]


def import_in_anothers_name(tmp_path: Path, url: str) -> None:
    """Item 3, done when: a decision file in alice's name, imported with no --reviewer and
    no key, records nothing; imported by a proven lead, it is the lead's decision, alice's
    name kept as where it came from."""
    engine = fresh(url)
    seed(engine, ["rotate session token after login", "sql injection queries parameterized"])
    register(engine, "alice", lead=True)
    lena = register(engine, "lena", lead=True)
    path = forged_file(tmp_path, engine, "alice")
    hub = tmp_path / "hub.jsonl"  # the tests' small hub, whose CREs the items suggest
    hub.write_text("".join(n.model_dump_json() + "\n" for n in small_hub().nodes))
    command = ["review", "import", str(path), "--db", url, "--hub", str(hub)]
    forged = CliRunner().invoke(app, command, env={"LIBRARIAN_KEY": ""})
    assert forged.exit_code == 2, forged.output
    assert "an import is recorded as the importer's" in " ".join(forged.output.split())
    assert standing(engine) == []
    as_lena = [*command, "--change", "--lead", "lena"]
    done = CliRunner().invoke(app, as_lena, env={"LIBRARIAN_KEY": lena})
    assert done.exit_code == 0 and "approved 1" in done.output, done.output
    ((by, note),) = standing(engine)
    assert by == "lena" and note is not None and "decided by alice" in note
    with Session(engine) as session:
        record = session.execute(select(HumanDecisionRow.record)).scalar_one()
    assert record["decided_by"] == "lena"
    engine.dispose()


def test_a_decision_file_is_recorded_as_the_importers_never_in_its_own_names(
    tmp_path: Path,
) -> None:
    """Item 3 (severe): `review import forged.jsonl`, its lines `decided_by: alice` (a
    registered lead), no --reviewer and no key, was recorded as alice's."""
    import_in_anothers_name(tmp_path, f"sqlite:///{tmp_path / 'forged.db'}")
    # Where nobody is registered, a file's names are still no decider: no --reviewer,
    # nothing recorded; a --reviewer label records the importer's decision.
    engine = fresh(f"sqlite:///{tmp_path / 'nobody.db'}")
    seed(engine, ["rotate session token after login"])
    path = forged_file(tmp_path, engine, "alice")
    read = read_decisions(path, None)
    unnamed = import_decisions(engine, read.incoming, HUB_IDS, str(path))
    assert "recorded as the importer's" in unnamed.errors[0] and standing(engine) == []
    named = import_decisions(engine, read.incoming, HUB_IDS, str(path), {"rita"}, "rita")
    assert named.errors == [] and [by for by, _ in standing(engine)] == ["rita"]


def test_review_qa_sample_acts_for_a_registered_reviewer_proven_by_their_key(
    tmp_path: Path,
) -> None:
    """Item 15: `review qa sample --by NAME` took any label and no key."""
    engine = fresh(f"sqlite:///{tmp_path / 'qa.db'}")
    seed(engine, ["rotate session token after login", "sql injection queries parameterized"])
    approve(engine, review_ids(engine)[0], "ann")
    register(engine, "ann")
    bob = register(engine, "bob")
    sample = ["review", "qa", "sample", "--share", "1", "--db", str(engine.url), "--by"]
    for who, key, refused in (
        ("anyone", bob, "'anyone' is not a registered reviewer"),
        ("bob", "", "acting as bob needs their key"),
        ("bob", "guess", "not bob's key"),
    ):
        said = CliRunner().invoke(app, [*sample, who], env={"LIBRARIAN_KEY": key})
        assert said.exit_code == 2 and refused in said.output, (who, said.output)
    with Session(engine) as session:
        assert session.execute(select(QaCheckRow)).first() is None
    done = CliRunner().invoke(app, [*sample, "bob"], env={"LIBRARIAN_KEY": bob})
    assert done.exit_code == 0, done.output
    with Session(engine) as session:
        assert session.execute(select(QaCheckRow.created_by)).scalars().all() == ["bob"]
    answer(engine, 1, "cy", ("200-001",))  # a blind answer is no decision
    with Session(engine) as session:
        source = session.execute(select(DecisionRow.source_key)).scalars().first()
        assert decisions_seen(session, str(source)) == 1


def promised(status: str) -> int:
    """How many open items `queue status` says the next relink links (before this issue
    it said "now certify N undecided items … `librarian relink` links them")."""
    flat = " ".join(status.split())
    for said in (
        r"links them \((\d+) open items\)",
        r"links the (\d+) still open",
        r"now certify (\d+) undecided items",
    ):
        if found := re.search(said, flat):
            return int(found[1])
    return 0


def relink_links_what_queue_status_says(engine: Engine, url: str, key: str, step: str) -> int:
    status = CliRunner().invoke(app, ["queue", "status", "--db", url], terminal_width=400)
    assert status.exit_code == 0, status.output
    dry = relink(engine, linking_pipeline(), key, f"dry-{step}", commit=False)
    assert dry.linked == promised(status.stdout), (step, " ".join(status.stdout.split()))
    return dry.linked


def test_queue_status_says_how_many_relink_links_and_relink_links_that_many(
    tmp_path: Path,
) -> None:
    """Item 11: `queue status` said "12 reviewed items above 0.814 now certify 1 undecided
    item … relink links them", and relink linked 0: the item was linked already, and a
    decided requirement's versions were read at one confidence a span key."""
    url = f"sqlite:///{tmp_path / 'claims.db'}"
    engine = fresh(url)
    pipeline = linking_pipeline(DecisionPolicy(budget=0.2, confidence=0.8, min_reviewed=3))
    key = forty_rules(engine, pipeline)
    store_policy(engine, "run-1", pipeline.policy)
    promised_before = 0
    for step in range(40):  # the plan's next item each time, all approved
        with Session(engine) as session:
            (progress,) = source_progress(session)
        if not progress.review_first:
            break
        approve(engine, progress.review_first[0], "rita")
        promised_before = relink_links_what_queue_status_says(engine, url, key, f"plan-{step}")
    assert promised_before > 0  # the plan reached a cut that links open items
    committed = relink(engine, pipeline, key, "relink-1", commit=True)
    assert committed.linked == promised_before
    # Linked now: the cut certifies them still, and nothing is left for a relink to link.
    assert relink_links_what_queue_status_says(engine, url, key, "after-commit") == 0
    # A decided requirement's new version (the least confident: it goes to review),
    # decided in turn, then undone.
    with Session(engine) as session:
        least = session.execute(
            select(DecisionRow)
            .where(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None))
            .order_by(DecisionRow.confidence)
            .limit(1)
        ).scalar_one()
    decided = least.chunk_id
    approve(engine, str(least.review_id), "rita")
    relink_links_what_queue_status_says(engine, url, key, "least-decided")
    new_version(engine, pipeline, decided, 1)
    relink_links_what_queue_status_says(engine, url, key, "new-version")
    row = open_row(engine, decided)
    assert row is not None
    approve(engine, str(row.review_id), "rita")
    relink_links_what_queue_status_says(engine, url, key, "version-decided")
    with Session(engine) as session, session.begin():
        last = session.execute(
            select(HumanDecisionRow).where(HumanDecisionRow.review_id == row.review_id)
        ).scalar_one()
        take_back(session, last)
    relink_links_what_queue_status_says(engine, url, key, "version-undone")
    with Session(engine) as session:
        assert evidence_now(session, key) is not None


def test_a_decision_on_one_version_reads_that_versions_confidence() -> None:
    """Item 11: the evidence a reader without models reads kept one confidence a span key,
    so a decision on a requirement's newer version was read at an older one's."""
    older, newer = text_digest("rule one"), text_digest("rule one, version two")
    evidence = CutEvidence(
        pending=(("k", 0.4, "A"),),
        decided=(("k", 0.9, "A"),),
        pending_texts=(newer,),
        decided_texts=(older,),
    )
    stored = CutEvidence.from_json(json.loads(json.dumps(evidence.as_json())))
    assert stored == evidence
    now = stored.now([("k", newer, ("A",))], present=set(), open_items=set())
    assert now is not None and (now.reviewed, now.correct, now.pending) == ([0.4], [True], [])
    # The older version decided, the newer one open: one reviewed, one open to link.
    both = stored.now([("k", older, ("B",))], {("k", newer)}, {("k", newer)})
    assert both is not None and (both.reviewed, both.correct) == ([0.9], [False])
    assert (both.pending, both.open_items) == ([0.4], [True])
