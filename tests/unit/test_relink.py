"""Issue 27, item 5: what a source's reviewers certify reaches its open items (the next
run, or `relink`), and never an item a person decided."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.cli.options import LinkerOptions, with_linker_options
from librarian.pipeline.ingest import section_from_text
from librarian.review.decisions import DecisionRequest, decide
from librarian.review.relink import relink
from librarian.schemas.records import RunSummary, Section
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import REVIEW_REQUIRED, unchanged
from librarian.store.open_items import open_sections
from librarian.store.tables import DecisionRow
from tests.seeded import DIGEST, TEXTS, store_texts, text_sections
from tests.stubs import small_hub, stub_pipeline


def rows(engine: Engine) -> list[DecisionRow]:
    with Session(engine) as session:
        return list(session.execute(select(DecisionRow).order_by(DecisionRow.id)).scalars())


def evidence_from_stored(engine: Engine, run: str = "r1") -> None:
    """Each source's cut evidence as if its run had read the stored confidences and first
    suggestions as cold (what `run` and `relink` store with a cut they choose)."""
    from librarian.policy import CutEvidence
    from librarian.store.policies import record_cuts
    from librarian.text import key_digest

    by_source: dict[str, list[tuple[str, float, str]]] = {}
    for r in rows(engine):
        entry = (key_digest(r.span_key), r.confidence or 0.0, r.top_cre_id or "")
        by_source.setdefault(str(r.source_key), []).append(entry)
    with Session(engine) as session, session.begin():
        cuts = {
            key: {"threshold": 1.0, "evidence": CutEvidence(tuple(entries), ()).as_json()}
            for key, entries in by_source.items()
        }
        record_cuts(session, run, cuts)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'relink.db'}")
    upgrade(engine)
    store_texts(engine, "r1")
    return engine


def test_the_next_run_decides_again_the_open_items_of_a_source_its_reviewers_moved(
    engine: Engine,
) -> None:
    with Session(engine) as session:
        assert len(unchanged(session, text_sections(), DIGEST)) == len(TEXTS)  # nothing new
    decided = rows(engine)[0]
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(str(decided.review_id), "reject", "rita"), small_hub().ids)
    with Session(engine) as session:
        skipped = unchanged(session, text_sections(), DIGEST)
    assert [s.chunk_id for s in skipped] == [decided.chunk_id]  # the others go round again
    assert store_texts(engine, "r2") == len(TEXTS) - 1
    after = rows(engine)
    assert after[0].review_id == decided.review_id and after[0].pipeline_run_id == "r1"
    assert after[0].consumed_at is not None
    assert {r.pipeline_run_id for r in after[1:]} == {"r2"}


def test_relink_decides_a_sources_open_items_again_and_leaves_decided_ones(
    engine: Engine, tmp_path: Path
) -> None:
    decided = rows(engine)[0]
    with Session(engine) as session, session.begin():
        decide(session, DecisionRequest(str(decided.review_id), "approve", "rita"), small_hub().ids)
    source = str(decided.source_key)
    with Session(engine) as session:
        assert len(open_sections(session, source)) == len(TEXTS) - 1
    pipeline = stub_pipeline(threshold=0.99, top_k=6, top_n=5)
    dry = relink(engine, pipeline, source, "relink-dry", commit=False)
    assert (dry.open_items, dry.redecided) == (len(TEXTS) - 1, 0)
    assert {r.pipeline_run_id for r in rows(engine)} == {"r1"}  # a dry relink writes nothing
    done = relink(engine, pipeline, source, "relink-1", commit=True, out_dir=tmp_path / "out")
    assert done.redecided == len(TEXTS) - 1
    after = rows(engine)
    assert len(after) == len(TEXTS)  # replaced in place, nothing added
    assert after[0].pipeline_run_id == "r1" and after[0].review_id == decided.review_id
    assert {r.pipeline_run_id for r in after[1:]} == {"relink-1"}
    # A relink is a run: its own summary accounts for every open item, and says what the
    # database sink stored.
    summary = done.summary
    assert summary is not None and summary.run_id == "relink-1" and summary.mode == "commit"
    assert summary.read == len(TEXTS) - 1 == summary.linked + summary.review
    assert summary.stored["redecided"] == len(TEXTS) - 1 and summary.finished_at
    assert dry.summary is not None and dry.summary.read == len(TEXTS) - 1
    assert dry.summary.stored == {} and dry.summary.mode == "dry-run"
    # Issue 49, item 4: a relink is a link job, its files a run's (summary.json, the
    # envelopes it decided).
    written = RunSummary.model_validate_json((tmp_path / "out" / "summary.json").read_text())
    assert written.model_dump(exclude={"timings_s"}) == summary.model_dump(exclude={"timings_s"})
    assert written.input == f"relink: the open items of {source}"
    files = [tmp_path / "out" / name for name in ("proposals.jsonl", "reviews.jsonl")]
    assert sum(len(f.read_text().splitlines()) for f in files) == len(TEXTS) - 1


def test_after_each_decision_the_workbench_says_what_the_source_now_certifies(
    tmp_path: Path,
) -> None:
    """Issue 27, item 4: "after each decision, show the band the source's reviewed items
    now certify", from the stored confidences (no model run)."""
    from librarian.store.progress import source_progress
    from tests.seeded import client, post, review_ids, seed

    engine = make_engine(f"sqlite:///{tmp_path / 'band.db'}")
    upgrade(engine)
    seed(engine, [f"requirement number {i} about session tokens" for i in range(30)])
    with Session(engine) as session, session.begin():
        for n, row in enumerate(session.execute(select(DecisionRow)).scalars()):
            row.confidence = 0.99 - n * 0.01  # the first items the most confident
    evidence_from_stored(engine)
    ids = review_ids(engine)
    web = client(engine)
    for review_id in ids[0:18:2]:  # every other one of the most confident: 9 decisions
        post(web, f"/item/{review_id}", action="approve")
    with Session(engine) as session:
        (before,) = source_progress(session)
    # Issue 46: no cut yet (fewer than 10 decisions), and the review plan says what would.
    assert before.certified.startswith("review plan: right so far 9 of 9 (100%); "), before
    for review_id in [*ids[1:18:2], ids[18]]:  # the rest of the top 19 but one
        if review_id != ids[5]:
            said = post(web, f"/item/{review_id}", action="approve").headers["location"]
    with Session(engine) as session:
        (after,) = source_progress(session)
    # 18 of the 19 items above 0.810 reviewed and right: the 19th is certified (an exact
    # test: were it wrong, 18 right draws of the 19 happen with chance 1/19 <= 10%).
    assert after.certified.startswith(
        "its 18 reviewed items above 0.810 (0 wrong) now certify 1 undecided items at >= 0.810"
    ), after.certified
    assert "this+source%3A+its+18+reviewed+items" in said, after.certified


def test_reviewers_who_follow_the_plan_reach_a_certified_cut_in_the_workbench(
    tmp_path: Path,
) -> None:
    """Issue 46, item 3, done when: a source walked from its first decision to a certified
    cut, each decision the next one the plan asks for (`queue status`'s list, the same
    the queue page links), every suggestion right. The plan then stops asking."""
    import random

    from librarian.store.progress import source_progress
    from tests.seeded import client, post, seed

    engine = make_engine(f"sqlite:///{tmp_path / 'plan.db'}")
    upgrade(engine)
    seed(engine, [f"requirement number {i} about session tokens" for i in range(300)])
    draw = random.Random(5)
    with Session(engine) as session, session.begin():
        for row in session.execute(select(DecisionRow)).scalars():
            row.confidence = round(draw.uniform(0.05, 0.99), 4)
    evidence_from_stored(engine)
    web = client(engine)
    with Session(engine) as session:
        (first,) = source_progress(session)
    assert first.certified.startswith("review plan: no decisions yet; ") and first.review_first
    promised = int(first.certified.split("; ")[1].split(" more decisions")[0])
    decided = 0
    while True:
        with Session(engine) as session:
            (now,) = source_progress(session)
        if not now.review_first:
            break
        assert post(web, f"/item/{now.review_first[0]}", action="approve").status_code == 303
        decided += 1
        assert decided <= 2 * promised, now.certified
        if decided == 5:  # the item page draws the evidence: 5 right, the plan's band
            page = web.get(f"/item/{now.review_first[1]}").text
            assert '<svg id="evidence-chart"' in page and 'class="band"' in page
            assert page.count('class="right"') == 5 and 'class="wrong"' not in page
            assert "5 decided items: 5 right, 0 wrong" in page
            # Issue 58, item 6: the source's state in one plain line, a chart that says
            # what it draws (an axis, a legend, the cut named where there is one).
            assert 'id="glance"' in page and "more decisions here would let" in page
            assert 'class="axis"' in page and "decided right" in page and "decided wrong" in page
    above = int(now.certified.removeprefix("its ").split(" reviewed items above")[0])
    assert 0 < above <= decided and "(0 wrong) now certify" in now.certified, now.certified
    assert decided <= promised + 10  # the plan's count held, give or take its strata


def test_the_workbenchs_rescorer_relinks_and_commits_with_models_built_once(
    engine: Engine,
) -> None:
    from librarian.review.relink import Rescorer

    built: list[int] = []

    def build():  # type: ignore[no-untyped-def]
        built.append(1)
        return stub_pipeline(threshold=0.0, top_k=6, top_n=5)  # everything reaches the cut

    key = rows(engine)[0].source_key
    assert key is not None
    rescore = Rescorer(engine, build)
    said = rescore(key)
    assert f"{len(TEXTS)} open items, {len(TEXTS)} now linked automatically" in said
    assert all(r.status == "linked" for r in rows(engine))  # committed
    assert "0 open items" in rescore(key) and built == [1]


def test_after_training_each_source_says_what_would_change_and_nothing_is_stored(
    engine: Engine,
) -> None:
    """Issue 29, item 8: `train --links` says, per source with open items, its cut, mean
    confidence and how many would now auto-link, against what the store holds."""
    from librarian.review.relink import changes_for_open_items

    before = [(r.status, r.review_id) for r in rows(engine)]
    changes, left = changes_for_open_items(engine, stub_pipeline(threshold=0.0, top_k=6, top_n=5))
    (change,) = changes
    assert left == 0 and change.before.open_items == len(TEXTS)
    assert change.before.cut == pytest.approx(0.99) and change.after.linked == len(TEXTS)
    said = change.says()
    assert f"{len(TEXTS)} open items; cut 0.990 -> 0.000" in said
    assert f"{len(TEXTS)} would now be linked automatically" in said
    assert [(r.status, r.review_id) for r in rows(engine)] == before  # a preview only


def test_the_rescorer_decides_under_the_policy_the_run_stored_not_the_defaults(
    engine: Engine,
) -> None:
    """Issue 37, item 5: a team that ran with --wrong-budget 0.6 had its open items
    re-decided at the default 3% by the workbench. The run's policy is stored with it."""
    from librarian.policy import DecisionPolicy
    from librarian.review.relink import Rescorer
    from librarian.store.policies import record_policy, source_policy

    key = rows(engine)[0].source_key
    assert key is not None
    with Session(engine) as session:
        assert source_policy(session, key) is None  # run r1 stored none
        record_policy(session, "r1", DecisionPolicy(budget=0.6, risk="bound", confidence=0.8))
        session.commit()
    # No threshold set by hand: each source's cut is the policy's to choose.
    pipeline = stub_pipeline(threshold=None, top_k=6, top_n=5)
    assert pipeline.policy.budget == 0.03
    said = Rescorer(engine, lambda: pipeline)(key)
    assert "share wrong of the auto-links <= 60% with probability >= 80%" in said, said
    with Session(engine) as session:
        after = source_policy(session, key)  # the re-scoring run stored what it applied
    assert after is not None and (after.budget, after.risk, after.confidence) == (0.6, "bound", 0.8)
    assert {r.pipeline_run_id for r in rows(engine)} != {"r1"}
    # A later relink reads the policy the re-scoring run stored.
    dry = relink(engine, stub_pipeline(threshold=None, top_k=6, top_n=5), key, "d", False)
    assert dry.policy is not None and dry.policy.budget == 0.6


def test_an_item_keeps_its_address_when_it_is_decided_again(engine: Engine) -> None:
    """Issue 41, item 3: links broke ("no such review item") when the workbench re-scored a
    source; open tabs, bookmarks, scripts and files were lost."""
    from librarian.review.decisions import DecisionRequest as Asked
    from librarian.store.human import current_review_id
    from tests.seeded import client, post

    old = rows(engine)[0]
    old_id = str(old.review_id)
    relink(engine, stub_pipeline(threshold=0.99, top_k=6, top_n=5), str(old.source_key), "r2", True)
    new_id = str(rows(engine)[0].review_id)
    assert new_id != old_id  # a new decision is a new review item
    with Session(engine) as session:
        assert current_review_id(session, old_id) == new_id
    web = client(engine)
    kept_tab = web.get(f"/item/{old_id}")
    assert kept_tab.status_code == 303 and kept_tab.headers["location"].startswith(
        f"/item/{new_id}"
    )
    late = post(web, f"/item/{old_id}", action="approve")
    assert late.status_code == 400 and f"it is {new_id} now" in late.text
    with Session(engine) as session, pytest.raises(Exception, match=f"it is {new_id} now"):
        decide(session, Asked(old_id, "approve", "rita"), small_hub().ids)


def test_every_command_says_the_cut_the_last_run_or_relink_chose(tmp_path: Path) -> None:
    """Issue 41, item 1: `run` and `queue status` said 0.743, `relink` a minute later
    0.950, and `queue status` stayed as it was while decisions were taken. Now the run
    and relink choose a source's cut and store it; `queue status`, the workbench's item
    page, the suggest API and the re-scorer's base read it, and say the decisions since."""
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from librarian.cli import app
    from librarian.pipeline.batches import Admitted
    from librarian.pipeline.run import RunParts, run_source
    from librarian.review.bench import Workbench
    from librarian.review.web import create_app
    from librarian.schemas.records import RawBatch, RunSummary
    from librarian.store.policies import record_cuts
    from librarian.store.progress import latest_cut
    from librarian.store.sink import DatabaseSink

    url = f"sqlite:///{tmp_path / 'cut.db'}"
    engine = make_engine(url)
    upgrade(engine)
    pipeline = stub_pipeline(threshold=None, top_k=6, top_n=5)  # each source's own cut
    # Four requirements: each its own span (issue 56: decisions count once a requirement).
    batch = [s.model_copy(update={"span_index": i}) for i, s in enumerate(text_sections())]
    raw = RawBatch([(s.line, s.text.encode()) for s in batch], 0, 0, 0, eof=True)
    summary = RunSummary(run_id="run-1", input="t", out_dir="", started_at="")
    sink = DatabaseSink(engine, "run-1", "t", pipeline.models_digest)
    admitted = Admitted(raw, batch, [], [], None)
    run_source(pipeline, [admitted], pipeline.context("run-1"), summary, RunParts(sinks=[sink]))
    key = str(rows(engine)[0].source_key)
    bench = Workbench(engine, small_hub(), "rita", csrf="c", suggester=lambda: pipeline)
    web = TestClient(create_app(bench), base_url="http://127.0.0.1:8765")

    def said(run_id: str) -> dict[str, str]:
        """What each reader says of the source's cut."""
        status = CliRunner().invoke(app, ["queue", "status", "--db", url], terminal_width=300)
        open_id = next(r.review_id for r in rows(engine) if r.consumed_at is None)
        page = web.get(f"/item/{open_id}").text
        api = web.post(
            "/api/v1/suggest",
            json={"text": TEXTS[0], "source": key},
            headers={"content-length": str(len(TEXTS[0]) + 40)},
        ).json()
        with Session(engine) as session:
            stored = latest_cut(session, key)
        line = next(x for x in status.stdout.splitlines() if x.startswith(f"source {key}"))
        return {
            "queue status": line.split("; cut ")[1].split(" (run ")[0]
            + " "
            + run_id * (f"(run {run_id})" in line),
            "item page": page.split("its cut now: cut ")[1].split(" (run ")[0]
            + " "
            + run_id * (f"(run {run_id})" in page),
            "suggest API": f"{api['retrieval']['threshold']:.3f} {run_id}",
            "store": f"{stored:.3f} {run_id}",
        }

    cut = summary.sources[key]["threshold"]
    assert set(said("run-1").values()) == {f"{cut:.3f} run-1"}
    for item in rows(engine)[:3]:  # three decisions: nothing re-decided yet, and said so
        with Session(engine) as session, session.begin():
            decide(session, DecisionRequest(str(item.review_id), "reject", "rita"), small_hub().ids)
    assert set(said("run-1").values()) == {f"{cut:.3f} run-1"}
    status = CliRunner().invoke(app, ["queue", "status", "--db", url], terminal_width=300)
    assert "3 decided since, which the next run or `librarian relink" in status.stdout
    done = relink(engine, pipeline, key, "relink-1", commit=True)
    now = done.status["threshold"]
    assert set(said("relink-1").values()) == {f"{now:.3f} relink-1"}
    # A decided item's page says the cut its source has now, not the one it was decided at.
    with Session(engine) as session, session.begin():
        record_cuts(session, "run-2", {key: {**done.status, "threshold": 0.777}})
    decided_page = web.get(f"/item/{rows(engine)[0].review_id}").text
    assert "auto-link at 0.777" in decided_page and "(run run-2)" in decided_page
    assert "decided since" not in CliRunner().invoke(app, ["queue", "status", "--db", url]).stdout


def test_writers_of_one_sources_cut_at_once_leave_one_row_and_no_error(tmp_path: Path) -> None:
    """Found by `.ci/run` on a fresh clone: a relink and the workbench's re-scoring stored
    one source's cut at once, each found no row and inserted one, and the second failed on
    the key. Now each write is one upsert: every writer succeeds, one cut stands."""
    import threading

    from librarian.store.policies import record_cuts, source_cut

    engine = make_engine(f"sqlite:///{tmp_path / 'cuts.db'}")
    upgrade(engine)
    writers = 6
    errors: list[BaseException] = []

    def write_cut(start: threading.Barrier, source: str, run: str) -> None:
        start.wait()
        try:
            with Session(engine) as session, session.begin():
                record_cuts(session, run, {source: {"threshold": 0.9, "says": run}})
        except BaseException as exc:  # the test reports them all
            errors.append(exc)

    for round_ in range(10):
        start = threading.Barrier(writers)
        threads = [
            threading.Thread(target=write_cut, args=(start, f"src-{round_}", f"r{i}"))
            for i in range(writers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert errors == []
    with Session(engine) as session:
        cuts = [source_cut(session, f"src-{r}") for r in range(10)]
    assert all(cut is not None and cut.run_id in {f"r{i}" for i in range(writers)} for cut in cuts)
    engine.dispose()


def test_a_policy_given_to_relink_is_applied_and_becomes_the_sources_policy(
    engine: Engine,
) -> None:
    """Issue 48, item 5: `relink --wrong-budget 0.25` was silently ignored (the stored
    policy won). A policy given is applied, said, and with --commit stored."""
    from librarian.policy import DecisionPolicy
    from librarian.store.policies import record_policy, source_policy

    key = rows(engine)[0].source_key
    assert key is not None
    with Session(engine) as session:
        record_policy(session, "r1", DecisionPolicy(budget=0.03, risk="bound", confidence=0.9))
        session.commit()
    pipeline = stub_pipeline(threshold=None, top_k=6, top_n=5)
    dry = relink(engine, pipeline, key, "d", False, {"budget": 0.25})
    assert dry.policy_changed and dry.summary is not None
    assert dry.summary.policy["budget"] == 0.25
    with Session(engine) as session:
        stored = source_policy(session, key)
    assert stored is not None and stored.budget == 0.03  # a dry run stores nothing
    done = relink(engine, pipeline, key, "relink-1", True, {"budget": 0.25})
    assert done.policy_changed
    with Session(engine) as session:
        stored = source_policy(session, key)
    assert stored is not None and (stored.budget, stored.confidence) == (0.25, 0.9)
    # Given again, it is the stored one: nothing changes.
    again = relink(engine, pipeline, key, "d2", False, {"budget": 0.25})
    assert not again.policy_changed


def test_relink_takes_a_budget_given_on_its_command_line() -> None:
    """Only what was set on the command line (or in the environment) is a choice."""
    import typer
    from typer.testing import CliRunner

    from librarian.cli.relink import policy_given

    seen: list[dict[str, object]] = []
    app = typer.Typer()

    @app.command()
    @with_linker_options
    def command(*, linker: LinkerOptions) -> None:
        seen.append(policy_given(linker))

    given: tuple[list[str], ...] = (
        ["--wrong-budget", "0.25"],
        [],
        ["--threshold", "0.9"],
        ["--tolerated-wrong", "1"],
    )
    for args in given:
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, done.output
    assert seen == [
        {"budget": 0.25, "fixed_cut": None},
        {},
        {"fixed_cut": 0.9},
        {"tolerated_wrong": 1, "fixed_cut": None},  # every choice the run's settings make
    ]


def test_a_cut_set_by_hand_is_stored_with_the_policy_and_kept_by_relink(engine: Engine) -> None:
    """Issue 49, item 2: a run with --threshold 0.9 stored a policy that did not say so, and
    a later relink chose a cut instead. The policy carries the cut set by hand; relink
    keeps it, and a budget given to relink asks for a chosen cut again."""
    from librarian.store.policies import record_policy, source_policy

    key = rows(engine)[0].source_key
    assert key is not None
    by_hand = stub_pipeline(threshold=0.9, top_k=6, top_n=5, unmappable_cut=0.2).policy
    assert (by_hand.fixed_cut, by_hand.unmappable_cut, by_hand.alone_cut) == (0.9, 0.2, 0.9)
    with Session(engine) as session, session.begin():
        record_policy(session, "r1", by_hand)
    with Session(engine) as session:
        assert source_policy(session, key) == by_hand  # stored whole, read back whole
    chosen = stub_pipeline(threshold=None, top_k=6, top_n=5)  # no --threshold this time
    kept = relink(engine, chosen, key, "d", False)
    assert kept.status["threshold"] == 0.9 and kept.status["says"].endswith("set by hand")
    assert kept.policy == by_hand and kept.summary is not None
    assert kept.summary.policy == by_hand.as_json()  # its summary says how it decided
    budget = relink(engine, chosen, key, "d2", False, {"budget": 0.25, "fixed_cut": None})
    assert budget.status["cut"] is not None and "set by hand" not in budget.status["says"]


def policy_texts() -> list[Section]:
    """40 rules of one source, at confidences from 0.1 to 0.97 on the joint stub."""
    topics = [
        "rotate session token after login",
        "use parameterized queries against sql injection",
        "cryptography keys",
        "session management",
        "injection protection",
    ]
    filler = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
    ]
    draw = random.Random(1)
    texts = [f"{topics[i % 5]} {' '.join(draw.sample(filler, i % 6))} rule {i}" for i in range(40)]
    return [
        section_from_text(t).model_copy(
            update={"chunk_id": f"c{i}", "line": i + 1, "span_index": i}
        )
        for i, t in enumerate(texts)
    ]


def test_the_workbench_queue_status_and_relink_say_one_cut_after_any_decisions(
    tmp_path: Path,
) -> None:
    """Issue 49, item 3, done when: "The workbench, `queue status` and relink print the
    same cut for a source after any sequence of decisions; a test drives that sequence."
    The readers run no model: they choose the cut with the same function from the evidence
    the last run or relink stored; relink (dry) links the source's items again."""
    from urllib.parse import parse_qs, urlsplit

    from typer.testing import CliRunner

    from librarian.cli import app
    from librarian.pipeline.batches import Admitted
    from librarian.pipeline.run import RunParts, run_source
    from librarian.policy import DecisionPolicy
    from librarian.schemas.records import RawBatch, RunSummary
    from librarian.store.policies import store_policy
    from librarian.store.progress import evidence_now, next_cut_says, source_progress
    from librarian.store.sink import DatabaseSink, DatabaseStore
    from tests.seeded import client, post
    from tests.stubs import joint_pipeline

    url = f"sqlite:///{tmp_path / 'one-cut.db'}"
    engine = make_engine(url)
    upgrade(engine)
    policy = DecisionPolicy(budget=0.2, confidence=0.8, min_reviewed=3)
    pipeline = joint_pipeline().with_policy(policy)
    batch = policy_texts()
    raw = RawBatch([(s.line, s.text.encode()) for s in batch], 0, 0, 0, eof=True)
    summary = RunSummary(run_id="run-1", input="t", out_dir="", started_at="")
    sink = DatabaseSink(engine, "run-1", "t", pipeline.models_digest)
    parts = RunParts(sinks=[sink], store=DatabaseStore(engine, pipeline.models_digest))
    admitted = Admitted(raw, batch, [], [], None)
    run_source(pipeline, [admitted], pipeline.context("run-1"), summary, parts)
    store_policy(engine, "run-1", policy)
    key = str(rows(engine)[0].source_key)
    web = client(engine)
    draw = random.Random(7)
    seen_bases: list[tuple[str, int]] = []
    for step in range(36):
        with Session(engine) as session:
            (progress,) = source_progress(session)
            waiting = [r for r in rows(engine) if r.consumed_at is None]
            open_ids = [r.review_id for r in waiting if r.status == REVIEW_REQUIRED]
        roll = draw.random()
        pick = progress.review_first[0] if progress.review_first and roll < 0.6 else None
        pick = pick or draw.choice(open_ids)
        told = ""
        if step in (11, 16, 29):  # the workbench's re-scorer: a committed relink, new evidence
            relink(engine, pipeline, key, f"relink-{step}", commit=True)
        elif roll < 0.08 and step:
            assert post(web, "/undo").status_code == 303
        else:
            action = draw.choices(["approve", "choose", "reject"], [6, 2, 2])[0]
            form = {"cre_ids": ["400-000"]} if action == "choose" else {}
            answer = post(web, f"/item/{pick}", action=action, **form)
            assert answer.status_code == 303, answer.text
            told = parse_qs(urlsplit(answer.headers["location"]).query)["msg"][0]
        with Session(engine) as session:
            evidence = evidence_now(session, key)
            (progress,) = source_progress(session)
        assert evidence is not None
        cut = evidence.cut(policy)
        seen_bases.append((cut.basis, cut.auto_links))
        dry = relink(engine, pipeline, key, f"dry-{step}", commit=False)
        if not dry.open_items:
            break  # every item decided or linked: nothing for a relink to decide
        assert dry.status["cut"] == cut.as_json(), (step, dry.status["says"])
        said = next_cut_says(evidence, policy)
        assert progress.certified == said
        status = CliRunner().invoke(app, ["queue", "status", "--db", url], terminal_width=400)
        assert " ".join(said.split()) in " ".join(status.stdout.split()), (step, said)
        # The plan once, as it is now: not also as the last run or relink worded it.
        line = next(x for x in status.stdout.splitlines() if x.startswith(f"source {key}"))
        assert line.count("plan: ") <= 1, (step, line)
        if told:
            assert told.endswith(f"this source: {said}"), (step, told)
    assert ("none", 0) in seen_bases
    assert any(basis == "reviewed" and links for basis, links in seen_bases), seen_bases
