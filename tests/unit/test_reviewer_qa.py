"""Issue 29, item 10: reviewer QA. Krippendorff's alpha on fixtures whose alpha is known;
blind second reviews and known-answer items through the store and the workbench; bulk
approvals kept apart; a lead's ruling."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.review.agreement import exact, figures, jaccard, krippendorff_alpha
from librarian.review.bench import Workbench
from librarian.review.decisions import DecisionRequest, RequestAction, decide
from librarian.review.qa import adjudicate, qa_report
from librarian.review.web import create_app
from librarian.schemas.human import Ui
from librarian.store.db import make_engine, upgrade
from librarian.store.human import BULK, ReviewError, standing_decision
from librarian.store.qa import add_known, pending_check, sample_double
from librarian.store.tables import DecisionRow, HumanDecisionRow, QaAnswerRow, QaCheckRow
from tests.seeded import answer, post, review_ids, seed
from tests.stubs import small_hub

HUB_IDS = set(small_hub().ids)
NOW = datetime(2026, 12, 2, tzinfo=UTC)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, values 1-5, "." where an observer gave none. Published
# nominal alpha: 0.743.
KRIPPENDORFF_2011 = """\
1 2 3 3 2 1 4 1 2 . . .
1 2 3 3 2 2 4 1 2 5 . 3
. 3 3 3 2 3 4 2 2 5 1 .
1 2 3 3 2 4 4 1 2 5 1 ."""


def units_of(table: str) -> list[list[frozenset[str]]]:
    rows = [line.split() for line in table.splitlines()]
    return [[frozenset({row[u]}) for row in rows if row[u] != "."] for u in range(len(rows[0]))]


def test_alpha_reproduces_krippendorffs_published_example() -> None:
    units = units_of(KRIPPENDORFF_2011)
    assert krippendorff_alpha(units, exact) == pytest.approx(0.743, abs=5e-4)
    # On one-CRE answers the set distance is the nominal one: the same alpha.
    assert krippendorff_alpha(units, jaccard) == pytest.approx(0.743, abs=5e-4)


def test_alpha_over_cre_sets_by_hand() -> None:
    a, b, ab, c = frozenset("a"), frozenset("b"), frozenset("ab"), frozenset("c")
    # Two units: {a} vs {a,b}, and {c} vs {c}. Pooled values: a, ab, c, c (n = 4).
    # Jaccard: d(a,ab) = 1/2, d(a,c) = d(ab,c) = 1, d(c,c) = 0.
    # D_o = (2 * 1/2 / 1 + 0) / 4 = 1/4; pairs: a-ab 1/2, a-c 1, a-c 1, ab-c 1, ab-c 1,
    # c-c 0 -> sum 4.5, D_e = 2 * 4.5 / (4 * 3) = 3/4; alpha = 1 - (1/4) / (3/4) = 2/3.
    units = [[a, ab], [c, c]]
    assert krippendorff_alpha(units, jaccard) == pytest.approx(2 / 3)
    # Exact: d(a,ab) = 1. D_o = 2/4; D_e = 2 * 5 / 12 = 5/6; alpha = 1 - 0.6 = 0.4.
    assert krippendorff_alpha(units, exact) == pytest.approx(0.4)
    assert krippendorff_alpha([[a, a], [a, a]], exact) is None  # no disagreement expected
    assert krippendorff_alpha([[a]], exact) is None  # nothing pairable
    perfect = figures([[a, a], [b, b], [frozenset(), frozenset()]])
    assert (perfect.items, perfect.same, perfect.percent, perfect.alpha_exact) == (3, 3, 100.0, 1.0)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'qa.db'}")
    upgrade(engine)
    seed(engine, [f"session token rule number {i}" for i in range(8)])
    return engine


def decide_as(
    engine: Engine, review_id: str, who: str, cre_ids: tuple[str, ...], bulk: bool = False
) -> None:
    action: RequestAction = "choose" if cre_ids else "reject"
    ui = Ui(keybind_used=BULK) if bulk else None
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(review_id, action, who, cre_ids, ui=ui), HUB_IDS)


def checks_for(engine: Engine, who: str) -> list[int]:
    """Every check `who` is given, in order, answered as they come (with `200-001`)."""
    given: list[int] = []
    while True:
        with Session(engine) as session:
            check = pending_check(session, who)
        if check is None:
            return given
        given.append(check.id)
        answer(engine, check.id, who, ("200-001",))


def test_double_review_is_blind_to_its_decider_and_agreement_keeps_bulk_apart(
    engine: Engine,
) -> None:
    ids = review_ids(engine)
    decide_as(engine, ids[0], "ann", ("200-001",))
    decide_as(engine, ids[1], "ann", ("200-001", "400-000"))
    decide_as(engine, ids[2], "ann", ())
    decide_as(engine, ids[3], "bob", ("200-001",))
    decide_as(engine, ids[4], "ann", ("300-001",), bulk=True)
    with Session(engine) as session, session.begin():
        added, eligible = sample_double(session, 1.0, "lea", NOW, seed=1)
    assert (added, eligible) == (5, 5)
    with Session(engine) as session, session.begin():  # sampled once: nothing left to add
        assert sample_double(session, 1.0, "lea", NOW) == (0, 0)

    # Bob meets ann's four checks, never his own; ann meets bob's; each check once.
    assert len(checks_for(engine, "bob")) == 4
    assert len(checks_for(engine, "ann")) == 1
    assert checks_for(engine, "cat") == []  # every double check has its second answer
    with Session(engine) as session:  # answers are no decisions: none was added
        assert session.execute(select(QaAnswerRow.reviewer)).scalars().all().count("bob") == 4
        assert len(session.execute(select(HumanDecisionRow.id)).all()) == 5

    with Session(engine) as session:
        report = qa_report(session)
    # Weighed pairs (first, second): {200-001} = {200-001}; {200-001, 400-000} vs
    # {200-001}; {} vs {200-001}; bob {200-001} = ann {200-001}. The bulk approval of
    # 300-001, answered 200-001, is counted apart.
    assert (report.overall.items, report.overall.same) == (4, 2)
    assert report.bulk_checked == 1 and report.bulk_same == 0
    expected = figures(
        [
            [frozenset({"200-001"}), frozenset({"200-001"})],
            [frozenset({"200-001", "400-000"}), frozenset({"200-001"})],
            [frozenset(), frozenset({"200-001"})],
            [frozenset({"200-001"}), frozenset({"200-001"})],
        ]
    )
    assert report.overall == expected
    assert report.overall.alpha_jaccard is not None and report.overall.alpha_exact is not None
    assert report.overall.alpha_jaccard > report.overall.alpha_exact  # part credit for 200-001
    assert report.by_reviewer["ann"].items == 4 and report.by_reviewer["bob"].items == 4
    # Three disagreements to rule on, the bulk one among them.
    assert len(report.disagreements) == 3


def test_a_ruling_for_the_second_answer_changes_the_decision(engine: Engine) -> None:
    ids = review_ids(engine)
    decide_as(engine, ids[0], "ann", ("300-001",))
    with Session(engine) as session, session.begin():
        sample_double(session, 1.0, "lea", NOW)
    (check,) = checks_for(engine, "bob")  # bob answers 200-001
    with Session(engine) as session, session.begin():
        said = adjudicate(session, check, "lea", "second", HUB_IDS)
    assert "bob's answer stands" in said
    with Session(engine) as session:
        row = session.execute(
            select(DecisionRow).where(DecisionRow.review_id == ids[0])
        ).scalar_one()
        standing = standing_decision(session, row)
        assert standing is not None
        assert (standing.decided_by, standing.final_cre_ids) == ("lea", "200-001")
        assert qa_report(session).disagreements == []  # ruled on
        # The figures keep the pair as the two reviewers answered it.
        assert qa_report(session).overall.same == 0
    with Session(engine) as session, session.begin(), pytest.raises(ReviewError, match="ruled on"):
        adjudicate(session, check, "lea", "first", HUB_IDS)


def test_known_answer_items_score_each_reviewer_once(engine: Engine) -> None:
    ids = review_ids(engine)
    decide_as(engine, ids[0], "lea", ("200-001",))
    decide_as(engine, ids[1], "lea", ("300-001",))
    with Session(engine) as session, session.begin():
        assert add_known(session, ids[:2], "lea", NOW) == 2
        assert add_known(session, ids[:1], "lea", NOW) == 0  # already one
        with pytest.raises(ReviewError, match="decide it first"):
            add_known(session, ids[5:6], "lea", NOW)
    assert checks_for(engine, "lea") == []  # her own answers
    assert len(checks_for(engine, "bob")) == 2  # answers 200-001 to both
    assert len(checks_for(engine, "cat")) == 2  # a known item is met by every reviewer
    with Session(engine) as session:
        report = qa_report(session)
    assert {r: (k.right, k.answered) for r, k in report.known_by_reviewer.items()} == {
        "bob": (1, 2),
        "cat": (1, 2),
    }
    assert report.overall.items == 0  # known answers are scores, not agreement pairs
    assert len(report.missed_known) == 1


def bench_client(engine: Engine, reviewer: str) -> TestClient:
    bench = Workbench(
        engine, small_hub(), reviewer, csrf="test-csrf", leads=frozenset({"lea"}), qa_every=2
    )
    return TestClient(create_app(bench), base_url="http://127.0.0.1:8765", follow_redirects=False)


def test_the_workbench_mixes_checks_in_blind_and_a_lead_rules(engine: Engine) -> None:
    ids = review_ids(engine)
    decide_as(engine, ids[0], "ann", ("300-001",))
    with Session(engine) as session, session.begin():
        sample_double(session, 1.0, "lea", NOW)
    web = bench_client(engine, "bob")
    locations = []
    for review_id in ids[1:5]:
        done = post(web, f"/item/{review_id}", action="reject", rejection="NO_CRE_FITS")
        assert done.status_code == 303, done.text
        locations.append(done.headers["location"].split("?")[0])
    # One check waits for bob: it comes after every second decision (qa_every=2) until
    # he answers it, at an address shaped as any item's (issue 38, defect 4: `/check/N`
    # said it was a check).
    checks = [loc.removeprefix("/item/") not in ids for loc in locations]
    assert checks == [False, True, False, True]
    check_url = locations[1]
    assert check_url.startswith("/item/rev-") and len(check_url) == len(f"/item/{ids[0]}")
    page = web.get(check_url)
    assert page.status_code == 200
    assert 'id="decided"' not in page.text and "ann" not in page.text  # blind
    assert ids[0] not in page.text  # no review id in the title, the address or the form
    assert f'action="{check_url}"' in page.text
    # Issue 47, item 12: rendered as any open item, with its neighbours and source panel,
    # and listed in the queue at its address, as an open item is.
    assert 'id="next"' in page.text and 'id="source"' in page.text
    queue = web.get("/").text
    assert f'href="{check_url}"' in queue and ids[0] not in queue
    # The item's own address, and the decided list, are blind for bob until he answers.
    own = web.get(f"/item/{ids[0]}").text
    assert 'id="decided"' not in own and "ann" not in own and "history" not in own
    assert ids[0] not in web.get("/", params={"status": "decided"}).text
    recorded = post(web, check_url, pick="200-001")
    assert recorded.status_code == 303 and "msg=recorded" in recorded.headers["location"]
    assert post(web, check_url, pick="200-001").status_code == 400  # answered once
    assert bench_client(engine, "ann").get(check_url).status_code == 404  # her own decision
    assert ids[0] in web.get("/", params={"status": "decided"}).text  # answered: seen again
    qa = web.get("/qa")
    # Issue 41, item 8: the figures' rows were double-escaped ("<tr><td>all</td>…" shown).
    assert "&lt;tr&gt;" not in qa.text and "<tr><td>all</td>" in qa.text
    assert qa.status_code == 200 and 'id="check-1"' in qa.text
    assert "rule-second" not in qa.text  # bob is no lead
    rule_url = "/qa/1"
    assert post(web, rule_url, outcome="second").status_code == 403
    lead = bench_client(engine, "lea")
    assert "rule-second-1" in lead.get("/qa").text
    ruled = post(lead, rule_url, outcome="second")
    assert ruled.status_code == 303, ruled.text
    with Session(engine) as session:
        row = session.execute(
            select(DecisionRow).where(DecisionRow.review_id == ids[0])
        ).scalar_one()
        standing = standing_decision(session, row)
        assert standing is not None and standing.final_cre_ids == "200-001"


def test_review_qa_commands(engine: Engine, tmp_path: Path) -> None:
    from librarian.cli import app

    ids = review_ids(engine)
    decide_as(engine, ids[0], "ann", ("300-001",))
    db = ["--db", str(engine.url)]
    from tests.seeded import register

    sam = {"LIBRARIAN_KEY": register(engine, "sam")}  # issue 56: --by is proven
    sample = ["review", "qa", "sample", "--share", "1", "--by", "sam", *db]
    sampled = CliRunner().invoke(app, sample, env=sam)
    assert sampled.exit_code == 0 and "1 of 1 decisions" in sampled.output, sampled.output
    checks_for(engine, "bob")
    report = CliRunner().invoke(app, ["review", "qa", "report", *db])
    assert report.exit_code == 0, report.output
    assert (
        "disagreement, check 1" in report.output and "ann: 300-001; bob: 200-001" in report.output
    )
    rule = ["review", "qa", "rule", "1", "first", "--lead", "lea", *db]
    # Issue 47, item 7: roles come from the store, and the CLI proves who acts.
    unknown = CliRunner().invoke(app, rule)
    assert unknown.exit_code == 2 and "not a registered reviewer" in unknown.output
    register(engine, "mallory")
    not_lead = ["review", "qa", "rule", "1", "first", "--lead", "mallory", *db]
    refused = CliRunner().invoke(app, not_lead, env={"LIBRARIAN_KEY": "x"})
    assert refused.exit_code == 2 and "does not lead here" in refused.output
    key = register(engine, "lea", lead=True)
    no_key = CliRunner().invoke(app, rule, env={"LIBRARIAN_KEY": ""})
    assert no_key.exit_code == 2 and "needs their key: set LIBRARIAN_KEY" in no_key.output
    wrong = CliRunner().invoke(app, rule, env={"LIBRARIAN_KEY": "guess"})
    assert wrong.exit_code == 2 and "not lea's key" in wrong.output
    # Issue 47, item 18: a party to the disagreement never rules on it.
    ann = register(engine, "ann", lead=True)
    own = ["review", "qa", "rule", "1", "second", "--lead", "ann", *db]
    party = CliRunner().invoke(app, own, env={"LIBRARIAN_KEY": ann})
    assert party.exit_code == 2 and "ann is a party to check 1" in party.output
    ruled = CliRunner().invoke(app, rule, env={"LIBRARIAN_KEY": key})
    assert ruled.exit_code == 0 and "ann's answer stands" in ruled.output, ruled.output
    lea = {"LIBRARIAN_KEY": key}
    known = CliRunner().invoke(app, ["review", "qa", "known", ids[3], "--by", "lea", *db], env=lea)
    assert known.exit_code == 2 and "decide it first" in known.output


def test_a_team_of_one_is_told_what_qa_can_do_for_it(engine: Engine) -> None:
    """Issue 41, item 8: `review qa sample` promised 4 items to a second reviewer who did
    not exist."""
    from librarian.cli import app

    ids = review_ids(engine)
    decide_as(engine, ids[0], "ann", ("300-001",))
    db = ["--db", str(engine.url)]
    from tests.seeded import register

    ann = {"LIBRARIAN_KEY": register(engine, "ann")}  # issue 56: --by is proven
    sample = ["review", "qa", "sample", "--share", "1", "--by", "ann", *db]
    alone = CliRunner().invoke(app, sample, env=ann)
    assert alone.exit_code == 2 and "needs a second reviewer" in alone.output
    with Session(engine) as session:
        assert session.execute(select(QaCheckRow)).first() is None  # nothing promised
    CliRunner().invoke(app, ["review", "reviewers", "add", "bob", *db])
    two = CliRunner().invoke(app, sample, env=ann)
    assert two.exit_code == 0 and "who may answer: bob" in two.output, two.output
