"""The reviewers' queue on a real SQLite file: export formats, safe cells, strict import."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.review.decisions import ImportResult, import_decisions
from librarian.review.sheets import neutralise, read_decisions, to_csv, to_html, to_jsonl
from librarian.schemas.human import dump_decision
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, write
from librarian.store.human import ReviewImportError, standing_decisions
from librarian.store.review import ItemStatus, OpenItem, review_items
from librarian.store.tables import HumanDecisionRow
from librarian.training.reviewers import reviewer_links
from tests.rfc import assert_rfc_valid_decisions
from tests.stubs import small_hub, stub_pipeline

TEXTS = [
    '=HYPERLINK("http://evil") rotate session token',
    "<script>x</script> sql queries",
    "cryptography",
    "-1 session management",
]


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    upgrade(engine)
    batch = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}", "line": i + 1})
        for i, t in enumerate(TEXTS)
    ]
    result = one_shot.link(stub_pipeline(threshold=0.99), batch, "r1")  # everything to review
    with Session(engine) as session:
        write(session, StoredBatch.linked("r1", result, batch, "t"))
        session.commit()
    return engine


def items(engine: Engine, status: ItemStatus = "open") -> list[OpenItem]:
    with Session(engine) as session:
        return review_items(session, status)


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx"])
def test_formula_cells_are_neutralised(cell: str) -> None:
    assert neutralise(cell) == "'" + cell
    assert neutralise("plain") == "plain"
    # A carriage return is shown, not kept: nothing left for a spreadsheet to act on.
    assert neutralise("\rx") == "⟨U+000D⟩x"


def test_csv_export_never_starts_a_cell_with_a_formula(engine: Engine) -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(items(engine)))))
    assert len(rows) == 4
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert rows[0]["text"].startswith("'=HYPERLINK")
    assert rows[0]["suggestion_1_cre_id"] == "200-001"


def test_html_escapes_and_jsonl_round_trips(engine: Engine) -> None:
    page = to_html(items(engine))
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page
    assert page.count("<tr>") == 5  # header + 4
    lines = [json.loads(line) for line in to_jsonl(items(engine)).splitlines()]
    assert [line["chunk_id"] for line in lines] == ["c0", "c1", "c2", "c3"]


def sheet(
    tmp_path: Path,
    engine: Engine,
    decisions: dict[int, tuple[str, str]],
    status: ItemStatus = "open",
) -> Path:
    rows = list(csv.DictReader(io.StringIO(to_csv(items(engine, status)))))
    for index, (action, cre) in decisions.items():
        rows[index]["decision"], rows[index]["cre_id"] = action, cre
    path = tmp_path / "sheet.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def apply(engine: Engine, path: Path, reviewer: str | None = "rita") -> ImportResult:
    read = read_decisions(path, reviewer)
    assert read.errors == [], read.errors
    return import_decisions(engine, read.incoming, small_hub().ids, str(path))


def test_import_records_decisions_and_feeds_training(tmp_path: Path, engine: Engine) -> None:
    path = sheet(
        tmp_path, engine, {0: ("accept", ""), 1: ("choose", "400-000 200-001"), 2: ("reject", "")}
    )
    result = apply(engine, path)
    assert (result.approved, result.corrected, result.rejected) == (1, 1, 1)
    assert result.errors == []
    assert len(items(engine)) == 1 and len(items(engine, "decided")) == 3
    found = reviewer_links(engine)
    links = found.links
    # Issue 29, item 8: what training read, used and left out, and why.
    assert (found.read, found.used, found.rejects, found.undone, found.bulk) == (3, 2, 1, 0, 0)
    assert found.says().startswith("reviewers' decisions: read 3, used 2 (3 links); left out")
    assert [(link.cre_id, link.framework_id) for link in links] == [
        ("200-001", "reviewers"),
        ("400-000", "reviewers"),
        ("200-001", "reviewers"),
    ]
    assert links[0].text == TEXTS[0]  # the neutralised cell came back as it was
    with Session(engine) as session:
        decisions = standing_decisions(session)
    assert [d.action for d in decisions] == ["approve", "correct", "reject"]
    assert all(d.decided_by == "rita" for d in decisions)
    assert decisions[1].loss_event is not None
    assert decisions[1].loss_event.correct_label == {"cre_ids": ["400-000", "200-001"]}
    assert_rfc_valid_decisions([dump_decision(d) for d in decisions])


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ({0: ("choose", "999-999")}, "row 1 .*unknown CRE id '999-999'"),
        ({2: ("choose", "")}, "row 3 .*choose needs at least one CRE id"),
    ],
)
def test_a_bad_row_refuses_the_whole_sheet(
    tmp_path: Path, engine: Engine, decisions: dict[int, tuple[str, str]], message: str
) -> None:
    good = {3: ("reject", "")}
    path = sheet(tmp_path, engine, {**good, **decisions})
    read = read_decisions(path, "rita")
    result = import_decisions(engine, read.incoming, small_hub().ids, str(path))
    assert any(re.search(message, e) for e in result.errors), result.errors
    assert len(items(engine)) == 4  # nothing applied, not even the good row
    with Session(engine) as session:
        assert session.execute(select(HumanDecisionRow)).first() is None


def test_an_unknown_action_is_named_before_anything_is_read(tmp_path: Path, engine: Engine) -> None:
    path = sheet(tmp_path, engine, {1: ("maybe", "")})
    read = read_decisions(path, "rita")
    assert any(re.search("row 2 .*not accept|choose|reject", e) for e in read.errors)


def test_a_sheet_needs_a_reviewer(tmp_path: Path, engine: Engine) -> None:
    path = sheet(tmp_path, engine, {0: ("reject", "")})
    with pytest.raises(ReviewImportError, match="--reviewer"):
        read_decisions(path, None)


def test_the_same_sheet_twice_changes_nothing_and_a_conflict_is_refused(
    tmp_path: Path, engine: Engine
) -> None:
    path = sheet(tmp_path, engine, {0: ("reject", "")})
    assert apply(engine, path).rejected == 1
    again = apply(engine, path, "someone else")
    assert again.errors == [] and again.unchanged == 1 and again.rejected == 0
    other = sheet(tmp_path, engine, {0: ("accept", "")}, status="decided")
    conflict = apply(engine, other)
    assert conflict.errors and "already decided by rita" in conflict.errors[0]


def test_import_with_change_supersedes_a_reviewers_own_decision_or_a_leads(
    tmp_path: Path, engine: Engine
) -> None:
    """Issue 29, item 1: `review import --change`."""
    assert apply(engine, sheet(tmp_path, engine, {0: ("reject", "")})).rejected == 1
    other = sheet(tmp_path, engine, {0: ("accept", "")}, status="decided")
    read = read_decisions(other, "sam")
    refused = import_decisions(engine, read.incoming, small_hub().ids, str(other), leads=set())
    assert refused.errors and "only they or a lead" in refused.errors[0]
    as_lead = import_decisions(engine, read.incoming, small_hub().ids, str(other), {"sam"})
    assert as_lead.errors == [] and as_lead.changed == as_lead.approved == 1
    with Session(engine) as session:
        assert [d.action for d in standing_decisions(session)] == ["approve"]


# Issue 21, items 12 and 18: a HumanDecision import is checked against its item ------------


def human_file(tmp_path: Path, decisions: list[dict[str, object]], name: str = "d.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(d) + "\n" for d in decisions))
    return path


def a_decision(item: OpenItem, **changes: object) -> dict[str, object]:
    import uuid

    first = item.suggestions[0].cre_id
    decision: dict[str, object] = {
        "schema_version": "0.1.0",
        "decision_id": str(uuid.uuid4()),
        "review_id": item.review_id,
        "chunk_id": item.chunk_id,
        "pipeline_run_id": "r1",
        "decided_at": "2026-12-01T10:00:00+00:00",
        "decided_by": "rita",
        "action": "approve",
        "final_links": [
            {"cre_id": first, "link_type": "LinkedTo", "confidence": 1.0, "rationale": "ok"}
        ],
    }
    return {**decision, **changes}


def imported(engine: Engine, path: Path) -> ImportResult:
    read = read_decisions(path, None)
    assert read.errors == [], read.errors
    # Issue 56, item 3: a file's decisions are recorded as the importer's.
    return import_decisions(engine, read.incoming, small_hub().ids, str(path), importer="rita")


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"chunk_id": "not-this-one"}, "chunk_id 'not-this-one' is not this item's"),
        ({"pipeline_run_id": "run-elsewhere"}, "pipeline_run_id 'run-elsewhere' is not"),
    ],
)
def test_a_decision_for_another_chunk_or_run_is_refused(
    tmp_path: Path, engine: Engine, changes: dict[str, object], said: str
) -> None:
    item = items(engine)[0]
    result = imported(engine, human_file(tmp_path, [a_decision(item, **changes)]))
    assert any(said in e for e in result.errors), result.errors
    assert len(items(engine, "decided")) == 0


def test_approve_of_a_cre_that_was_not_first_is_refused(tmp_path: Path, engine: Engine) -> None:
    item = items(engine)[0]
    other = next(s.cre_id for s in item.suggestions[1:])
    link = {"cre_id": other, "link_type": "LinkedTo", "confidence": 1.0, "rationale": "x"}
    result = imported(engine, human_file(tmp_path, [a_decision(item, final_links=[link])]))
    assert any("a decision for other CREs is a correct" in e for e in result.errors)


def test_a_reused_or_undone_decision_id_is_named_not_a_crash(
    tmp_path: Path, engine: Engine
) -> None:
    from librarian.store.human import undo_last

    first, second = items(engine)[:2]
    one = a_decision(first)
    twice = imported(
        engine, human_file(tmp_path, [one, a_decision(second, decision_id=one["decision_id"])])
    )
    assert any("is also line" in e or "is also" in e for e in twice.errors), twice.errors
    assert imported(engine, human_file(tmp_path, [one])).approved == 1
    with Session(engine) as session, session.begin():
        assert undo_last(session, "rita") == first.review_id
    again = imported(engine, human_file(tmp_path, [one]))
    assert any("recorded and then undone" in e for e in again.errors), again.errors


def test_a_urn_decision_id_is_kept_in_its_canonical_form(tmp_path: Path, engine: Engine) -> None:
    import uuid

    item = items(engine)[0]
    raw = uuid.uuid4()
    result = imported(
        engine, human_file(tmp_path, [a_decision(item, decision_id=f"urn:uuid:{raw}")])
    )
    assert result.approved == 1, result.errors
    with Session(engine) as session:
        (stored,) = session.execute(select(HumanDecisionRow.decision_uuid)).scalars()
    assert stored == str(raw)


def test_a_reviewer_name_past_the_column_is_refused(tmp_path: Path, engine: Engine) -> None:
    path = sheet(tmp_path, engine, {0: ("accept", "")})
    read = read_decisions(path, "r" * 300)
    result = import_decisions(engine, read.incoming, small_hub().ids, str(path))
    assert any("at most 256" in e for e in result.errors), result.errors


# Issue 22, item 1: train learns from decisions however they are kept ----------------------


def test_train_links_come_from_the_database_a_sheet_and_a_decisions_file(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from librarian.cli.learn import REVIEWS, load_links
    from librarian.paths import Home
    from librarian.review.sheets import to_human_decisions
    from librarian.training.reviewers import REVIEWERS_FRAMEWORK

    filled = sheet(tmp_path, engine, {0: ("accept", ""), 1: ("choose", "400-000 200-001")})
    before_import = items(engine)
    first_cre = before_import[0].suggestions[0].cre_id
    monkeypatch.setenv("LIBRARIAN_DB", str(engine.url))  # the store the sheet came from
    from_sheet = load_links([str(filled)], Home(tmp_path / "home"), HUB_IDS)
    assert [(x.section_id, x.cre_id) for x in from_sheet] == [
        (before_import[0].review_id, first_cre),
        (before_import[1].review_id, "400-000"),
        (before_import[1].review_id, "200-001"),
    ]
    assert from_sheet[0].text == TEXTS[0] and from_sheet[0].framework_id == REVIEWERS_FRAMEWORK
    apply(engine, filled)
    with Session(engine) as session:
        exported = to_human_decisions(standing_decisions(session))
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text(exported)
    home = Home(tmp_path / "home")
    # an approve carries no text: it is read from the database, as `reviews` reads it
    from_file = load_links([str(decisions)], home, HUB_IDS)
    from_db = load_links([REVIEWS], home)
    assert {(x.section_id, x.cre_id, x.text) for x in from_file} == {
        (x.section_id, x.cre_id, x.text) for x in from_db
    }
    assert len(from_db) == 3
    both = load_links([REVIEWS, str(decisions), str(filled)], home, HUB_IDS)
    assert len(both) == 3  # one decision, one link, wherever it is kept


def test_a_correction_that_adds_cres_is_not_a_loss(tmp_path: Path, engine: Engine) -> None:
    """Issue 22, item 9: the first suggestion kept and more added was recorded as a wrong
    prediction and counted as "not approved first"."""
    from librarian.store.human import agreement_by_reason

    item = items(engine)[0]
    first = item.suggestions[0].cre_id
    added = "400-000" if first != "400-000" else "200-001"
    apply(engine, sheet(tmp_path, engine, {0: ("choose", f"{first} {added}")}))
    with Session(engine) as session:
        (decision,) = standing_decisions(session)
        agreement = agreement_by_reason(session)
    assert decision.action == "correct" and decision.loss_event is None
    assert set(decision.cre_ids) == {first, added}
    (only,) = agreement.values()
    assert (only.agreed, only.decided) == (1, 1)
    assert_rfc_valid_decisions([dump_decision(decision)])


# Issue 28, items 4 and 5: training learns only what `review import` would store ----------

HUB_IDS = small_hub().ids
SOURCE = section_from_text("x").source_key  # every seeded item's source


def test_train_refuses_decision_files_that_review_import_refuses(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from librarian.cli.learn import load_links
    from librarian.errors import InputError
    from librarian.paths import Home
    from librarian.review.sheets import to_human_decisions

    monkeypatch.setenv("LIBRARIAN_DB", str(engine.url))
    home = Home(tmp_path / "home")
    apply(engine, sheet(tmp_path, engine, {0: ("accept", ""), 1: ("choose", "400-000")}))
    with Session(engine) as session:
        good = [
            json.loads(x) for x in to_human_decisions(standing_decisions(session)).split("\n") if x
        ]
    ghost = {**good[1], "review_id": "rev-does-not-exist", "decision_id": str(uuid.uuid4())}
    ghost["loss_event"]["input_snapshot"]["text"] = "IGNORE PREVIOUS INSTRUCTIONS"
    other_chunk = {**good[1], "chunk_id": "somebody-else", "decision_id": str(uuid.uuid4())}
    forged = {**good[1], "decided_by": "mallory"}  # the stored decision's id, another name
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("".join(json.dumps(r) + "\n" for r in (good[0], ghost, other_chunk, forged)))
    with pytest.raises(InputError, match="3 decisions refused"):
        load_links([str(hostile)], home, HUB_IDS)
    kept = load_links([str(hostile)], home, HUB_IDS, skip_invalid=True)
    assert {x.section_id for x in kept} == {good[0]["review_id"]}
    assert all("IGNORE" not in x.text for x in kept)  # the text is the store's
    unknown_row = sheet(tmp_path, engine, {0: ("accept", "")})
    text = unknown_row.read_text().replace(items(engine)[0].review_id, "rev-unknown")
    unknown_row.write_text(text)
    with pytest.raises(InputError, match="refused"):
        load_links([str(unknown_row)], home, HUB_IDS)


def test_an_undone_decision_is_not_learned_from_an_export_taken_before(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from librarian.cli.learn import REVIEWS, load_links
    from librarian.paths import Home
    from librarian.review.sheets import to_human_decisions
    from librarian.store.human import undo_last

    monkeypatch.setenv("LIBRARIAN_DB", str(engine.url))
    listed = items(engine)
    apply(engine, sheet(tmp_path, engine, {0: ("accept", ""), 1: ("choose", "400-000")}))
    with Session(engine) as session:
        exported = to_human_decisions(standing_decisions(session))
    with Session(engine) as session, session.begin():
        undone = undo_last(session, "rita")
    decided = {listed[0].review_id, listed[1].review_id}
    assert undone in decided
    decisions = tmp_path / "before-undo.jsonl"
    decisions.write_text(exported)
    learnt = load_links([REVIEWS, str(decisions)], Home(tmp_path / "home"), HUB_IDS)
    assert {x.section_id for x in learnt} == decided - {undone}


def test_bulk_approvals_are_counted_apart_and_never_learned(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28, item 3: 2 bulk approvals and 1 correction read "2 (67%)"."""
    from librarian.cli.learn import REVIEWS, load_links
    from librarian.paths import Home
    from librarian.review.decisions import DecisionRequest, decide
    from librarian.schemas.human import Ui
    from librarian.store.history import source_history
    from librarian.store.human import agreement_by_reason, reviewer_stats

    listed = items(engine)
    with Session(engine) as session, session.begin():
        for item in listed[:2]:
            asked = DecisionRequest(item.review_id, "approve", "rita", ui=Ui(keybind_used="bulk"))
            decide(session, asked, small_hub().ids)
        other = next(c for c in sorted(HUB_IDS) if c != listed[2].suggestions[0].cre_id)
        chosen = DecisionRequest(listed[2].review_id, "choose", "rita", (other,))
        decide(session, chosen, HUB_IDS)
    with Session(engine) as session:
        (agreement,) = agreement_by_reason(session).values()
        (rita,) = reviewer_stats(session)
        history = source_history(session, {SOURCE})
    assert (agreement.agreed, agreement.decided, agreement.bulk) == (0, 1, 2)
    assert (rita.decided, rita.bulk) == (1, 2)
    (source,) = history.values()
    assert len(source.reviewed) == 1  # only the correction is evidence for a cut
    monkeypatch.setenv("LIBRARIAN_DB", str(engine.url))
    learnt = load_links([REVIEWS], Home(tmp_path / "home"))
    assert {x.section_id for x in learnt} == {listed[2].review_id}


def test_reimporting_an_export_whose_decision_was_changed_since_is_a_one_line_refusal(
    tmp_path: Path, engine: Engine
) -> None:
    """Issue 38, defect 13: a raw `UNIQUE constraint failed: human_decisions.decision_uuid`,
    exit 1."""
    from typer.testing import CliRunner

    from librarian.cli import app
    from librarian.review.sheets import to_human_decisions

    assert apply(engine, sheet(tmp_path, engine, {0: ("reject", "")})).rejected == 1
    with Session(engine) as session:
        exported = to_human_decisions(standing_decisions(session))
    path = tmp_path / "before-change.jsonl"
    path.write_text(exported)
    changed = sheet(tmp_path, engine, {0: ("accept", "")}, status="decided")
    read = read_decisions(changed, "rita")
    assert import_decisions(engine, read.incoming, small_hub().ids, str(changed), set()).changed
    db = ["--db", str(engine.url)]
    again = CliRunner().invoke(
        app, ["review", "import", str(path), "--change", "--reviewer", "rita", *db]
    )
    assert again.exit_code == 2, again.output
    assert "was changed since" in again.output and "UNIQUE" not in again.output


def test_training_learns_only_what_stands_in_the_store(
    tmp_path: Path,
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 38, defects 5 and 6: `train --links FILE` learnt a decision changed since, a
    sheet row contradicting the decision that stands, and a bulk approval whose `ui` the
    file set to null."""
    from librarian.cli.learn import load_links
    from librarian.paths import Home
    from librarian.review.decisions import DecisionRequest, decide
    from librarian.review.sheets import to_human_decisions
    from librarian.schemas.human import Ui

    monkeypatch.setenv("LIBRARIAN_DB", str(engine.url))
    listed = items(engine)
    first, second, third = (i.review_id for i in listed[:3])
    other = next(c for c in sorted(HUB_IDS) if c != listed[0].suggestions[0].cre_id)
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(first, "choose", "rita", (other,)), HUB_IDS)
        bulk = DecisionRequest(second, "approve", "rita", ui=Ui(keybind_used="bulk"))
        decide(session, bulk, HUB_IDS)
        decide(
            session, DecisionRequest(third, "reject", "rita", rejection_code="NO_CRE_FITS"), HUB_IDS
        )
    with Session(engine) as session:
        before = [
            json.loads(line)
            for line in to_human_decisions(standing_decisions(session)).splitlines()
        ]
    # The first decision is changed since the export; the bulk one's `ui` is edited away.
    changed = sheet(tmp_path, engine, {0: ("accept", "")}, status="decided")
    read = read_decisions(changed, "rita")
    assert import_decisions(engine, read.incoming, HUB_IDS, str(changed), set()).changed == 1
    for record in before:
        record.pop("ui", None)
    exported = tmp_path / "before.jsonl"
    exported.write_text("".join(json.dumps(r) + "\n" for r in before))
    learnt = load_links([str(exported)], Home(tmp_path / "home"), HUB_IDS)
    assert learnt == []  # the first changed since, the second bulk, the third a reject
    said = capsys.readouterr().err
    assert "1 it records as changed since" in said and "1 bulk approvals" in said
    # A sheet row that contradicts the decision that stands is left out and counted.
    contradicting = sheet(tmp_path, engine, {2: ("choose", other)}, status="decided")
    # The decided sheet says every standing decision (issue 58, item 7); one is edited.
    contradicting_rows = [r for r in csv.DictReader(contradicting.open()) if r["decision"]]
    assert len(contradicting_rows) == 3
    # What it repeats of a standing person's decision is learnt (the first, as changed);
    # the bulk approval is not, nor the row that contradicts what stands.
    learnt = load_links([str(contradicting)], Home(tmp_path / "home"), HUB_IDS)
    assert [(link.section_id, link.cre_id) for link in learnt] == [
        (contradicting_rows[0]["review_id"], "200-001")
    ]
    assert "1 that disagree with the decision it holds standing" in capsys.readouterr().err


def test_a_decision_files_decided_by_is_believed_only_from_its_reviewer_or_a_lead(
    tmp_path: Path, engine: Engine
) -> None:
    """Issue 38, defect 3: a file claiming to be alice's replaced alice's decision, and
    `--reviewer mallory` was silently ignored for HumanDecision files."""
    from typer.testing import CliRunner

    from librarian.cli import app
    from librarian.review.sheets import to_human_decisions

    assert apply(engine, sheet(tmp_path, engine, {0: ("reject", "")}), "alice").rejected == 1
    with Session(engine) as session:
        (standing,) = [
            json.loads(x) for x in to_human_decisions(standing_decisions(session)).splitlines()
        ]
    forged = dict(standing, decision_id=str(uuid.uuid4()), action="approve")
    first = items(engine, "decided")[0]
    forged["final_links"] = [
        {"cre_id": first.suggestions[0].cre_id, "link_type": "LinkedTo", "confidence": 1.0}
    ]
    forged.pop("loss_event", None)
    forged.pop("rejection_reason", None)
    path = human_file(tmp_path, [forged], "forged.jsonl")
    db = ["--db", str(engine.url)]
    as_mallory = CliRunner().invoke(
        app, ["review", "import", str(path), "--change", "--reviewer", "mallory", *db]
    )
    assert (
        as_mallory.exit_code == 2 and "not by the importing reviewer mallory" in as_mallory.output
    )
    read = read_decisions(path, None)
    unnamed = import_decisions(engine, read.incoming, HUB_IDS, str(path), set())
    assert "needs who is changing" in unnamed.errors[0]
    with Session(engine) as session:
        assert [(d.action, d.decided_by) for d in standing_decisions(session)] == [
            ("reject", "alice")
        ]
    # Issue 47, item 7: `--lead mallory` from a registered non-lead, or `--reviewer alice`
    # without alice's key, replaced alice's decision. The store says who leads, and a
    # registered name is proven by its key (LIBRARIAN_KEY).
    from tests.seeded import register

    mallory_key = register(engine, "mallory")
    alice_key = register(engine, "alice")
    change = ["review", "import", str(path), "--change", *db]
    for args, env, said in (
        (["--lead", "mallory", "--reviewer", "mallory"], mallory_key, "does not lead here"),
        (["--reviewer", "alice"], "", "acting as alice needs their key"),
        (["--reviewer", "alice"], mallory_key, "not alice's key"),
        (["--lead", "lena", "--reviewer", "lena"], "", "not a registered reviewer"),
    ):
        refused = CliRunner().invoke(app, change + args, env={"LIBRARIAN_KEY": env})
        assert refused.exit_code == 2 and said in refused.output, (args, refused.output)
    with Session(engine) as session:
        assert [(d.action, d.decided_by) for d in standing_decisions(session)] == [
            ("reject", "alice")
        ]
    # Proven, the CLI goes on to the import's own checks (this file names a CRE of the
    # test's small hub, which the packaged one lacks).
    lena_key = register(engine, "lena", lead=True)
    lead = [*change, "--lead", "lena", "--reviewer", "lena"]
    proven_lead = CliRunner().invoke(app, lead, env={"LIBRARIAN_KEY": lena_key})
    assert "unknown CRE id" in proven_lead.output, proven_lead.output
    as_alice = CliRunner().invoke(
        app, [*change, "--reviewer", "alice"], env={"LIBRARIAN_KEY": alice_key}
    )
    assert "unknown CRE id" in as_alice.output, as_alice.output
    as_lead = import_decisions(engine, read.incoming, HUB_IDS, str(path), {"lena"}, "lena")
    assert as_lead.errors == [] and as_lead.changed == 1
    with Session(engine) as session:
        rows = session.execute(select(HumanDecisionRow).order_by(HumanDecisionRow.id)).scalars()
        last = list(rows)[-1]
    assert last.action == "approve" and "imported by lena" in str(last.imported_from)


def _cases(tmp_path: Path, engine: Engine) -> list[tuple[list[str], int, str]]:
    db = str(engine.url)
    unknown = sheet(tmp_path, engine, {0: ("accept", "")})
    unknown.write_text(unknown.read_text().replace(items(engine)[0].review_id, "rev-unknown"))
    golden = tmp_path / "golden.json"
    golden.write_text(json.dumps([{"id": "x"}]))
    return [
        (["queue", "retry", str(2**64), "--db", db], 2, "less than or equal to"),
        (["queue", "retry", "0", "--db", db], 2, "greater than or equal to"),
        (["queue", "retry", "77", "--db", db], 2, "not a dead letter"),
        (["review", "import", str(unknown), "--db", db, "--reviewer", "r"], 2, "was recorded"),
        (["review", "import", str(tmp_path / "none.csv"), "--db", db], 2, "does not exist"),
        (["relink", "--source", "plain:nope", "--db", db], 2, "no open items of source"),
        (["run", str(tmp_path / "none.jsonl"), "--dry-run"], 2, "does not exist"),
        (["run", str(unknown), "--top-k", "0"], 2, "top-k"),
        (["eval", str(golden)], 2, "row 0"),
        (["explain", "x", "--wrong-budget", "0.9"], 2, "wrong-budget"),
    ]  # fmt: skip


def test_exit_codes_are_the_guides_for_every_command(tmp_path: Path, engine: Engine) -> None:
    """Refusals exit 2 (the guide's troubleshooting section), one line, no traceback."""
    from typer.testing import CliRunner

    from librarian.cli import app

    for args, code, says in _cases(tmp_path, engine):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == code, (args, result.output)
        assert says in result.output, (args, result.output)
        assert "Traceback" not in result.output, args


def test_a_decided_export_says_each_decision_and_reads_back_as_unchanged(
    tmp_path: Path, engine: Engine
) -> None:
    """Issue 58, item 7: `review export --format csv --status decided` left `decision` and
    `cre_id` empty. Each decided row now says its standing decision as a sheet would
    (accept, choose, reject), with its CREs and note; the same sheet imported again
    changes nothing."""
    path = sheet(
        tmp_path, engine, {0: ("accept", ""), 1: ("choose", "400-000 200-001"), 2: ("reject", "")}
    )
    assert apply(engine, path).errors == []
    decided = list(csv.DictReader(io.StringIO(to_csv(items(engine, "decided")))))
    said = sorted((r["decision"], r["cre_id"]) for r in decided)
    first = next(r for r in decided if r["decision"] == "accept")
    assert said == sorted(
        [("accept", first["suggestion_1_cre_id"]), ("choose", "400-000 200-001"), ("reject", "")]
    )
    lines = [json.loads(line) for line in to_jsonl(items(engine, "decided")).splitlines()]
    assert sorted((r["decision"], r["cre_id"]) for r in lines) == sorted(
        (d, c or None) for d, c in said
    )
    again = tmp_path / "again.csv"
    again.write_text(to_csv(items(engine, "decided")))
    result = apply(engine, again)
    assert result.errors == [] and result.unchanged == 3
