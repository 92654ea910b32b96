"""The reviewers' workbench through its HTTP API (FastAPI's TestClient) on a real SQLite
store: every action, every conflict, and the safety rules. The real-browser test is
tests/integration/test_workbench_browser.py."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session

from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.review.bench import Workbench
from librarian.review.decisions import DecisionRequest, build_decision, change
from librarian.review.guard import CSP
from librarian.review.web import create_app
from librarian.review.words import search_hub
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, write
from librarian.store.human import ReviewError, standing_decision, supersede
from librarian.store.progress import decisions_seen
from librarian.store.tables import DecisionRow, HumanDecisionRow
from librarian.training.reviewers import reviewer_links
from tests.rfc import assert_rfc_valid_decisions
from tests.seeded import (
    TEXTS,
    client,
    decisions,
    old_row,
    post,
    register,
    review_ids,
    seed,
    seeded_engine,
    signed_in,
    store_at_revision,
)
from tests.stubs import small_hub, stub_pipeline


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return seeded_engine(tmp_path / "review.db")


def test_queue_page_lists_filters_and_counts(engine: Engine) -> None:
    web = client(engine)
    page = web.get("/")
    assert page.status_code == 200 and "4 open items" in page.text
    assert "BELOW_THRESHOLD 4" in page.text or "NO_CANDIDATES" in page.text
    assert page.text.count('<tr data-href="/item/') == 4
    narrowed = web.get("/", params={"source": "art-1"})
    assert narrowed.text.count('<tr data-href="/item/') == 2
    assert web.get("/", params={"min": "2"}).text.count('<tr data-href="/item/') == 0
    assert "0 decided today" in page.text


def test_queue_pages_through_many_items(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'many.db'}")
    upgrade(engine)
    seed(engine, [f"session token number {i}" for i in range(120)])
    web = client(engine)
    first, third = web.get("/"), web.get("/", params={"page": 3})
    assert "page 1 of 3" in first.text and first.text.count('<tr data-href="/item/') == 50
    assert third.text.count('<tr data-href="/item/') == 20


def test_item_page_shows_every_suggestion_its_hub_place_and_hidden_characters(
    engine: Engine,
) -> None:
    web = client(engine)
    review_id = review_ids(engine)[3]
    page = web.get(f"/item/{review_id}")
    assert page.status_code == 200
    assert "Guide \u203a Part 3" in page.text
    assert "⟨U+202E⟩" in page.text and "\u202e" not in page.text
    assert "&lt;b&gt;keys&lt;/b&gt;" in page.text and "[bold]x[/bold]" in page.text
    with Session(engine) as session:
        row = session.execute(select(DecisionRow).where(DecisionRow.review_id == review_id))
        suggested = row.scalar_one().envelope["suggested_links"]
    assert len(re.findall(r'name="pick" value="', page.text)) == len(suggested) > 3
    # Issue 29, item 7: each suggestion can be ticked, to choose several at once.
    ticks = re.findall(r'type="checkbox" name="cre_ids" value="([^"]+)"', page.text)
    assert ticks == [link["cre_id"] for link in suggested] and 'id="choose"' in page.text
    for link in suggested:
        assert f"https://www.opencre.org/cre/{link['cre_id']}" in page.text
    assert page.headers["content-security-policy"] == CSP and "unsafe-inline" not in CSP


def test_approve_stores_an_rfc_human_decision_and_moves_on(engine: Engine) -> None:
    web = client(engine)
    first, second = review_ids(engine)[:2]
    done = post(web, f"/item/{first}", action="approve", duration_ms="1234", keybind="a")
    assert done.status_code == 303 and done.headers["location"].startswith(f"/item/{second}")
    (decision,) = decisions(engine)
    assert decision["action"] == "approve" and decision["decided_by"] == "rita"
    assert decision["ui"] == {"review_duration_ms": 1234, "keybind_used": "a"}
    assert_rfc_valid_decisions([decision])
    assert "1 decided today" in web.get("/").text
    assert "3 open items" in web.get("/").text


def test_choose_several_and_reject_with_a_note(engine: Engine) -> None:
    web = client(engine)
    first, second = review_ids(engine)[:2]
    post(web, f"/item/{first}", action="choose", cre_ids=["400-000", "300-001"])
    post(
        web,
        f"/item/{second}",
        action="reject",
        rejection="NOT_SECURITY_KNOWLEDGE",
        note="marketing copy",
    )
    chosen, rejected = decisions(engine)
    assert chosen["action"] == "correct"
    assert [link["cre_id"] for link in chosen["final_links"]] == ["400-000", "300-001"]
    assert chosen["loss_event"]["correct_label"] == {"cre_ids": ["400-000", "300-001"]}
    assert rejected["rejection"] == {
        "reason_code": "NOT_SECURITY_KNOWLEDGE",
        "reason_message": "marketing copy",
    }
    assert_rfc_valid_decisions([chosen, rejected])
    # Issue 29, item 6: the decided list shows the decision: why, the note, the CREs named.
    listed = web.get("/", params={"status": "decided"}).text
    assert "why: NOT_SECURITY_KNOWLEDGE: marketing copy" in listed
    assert (
        '<span class="id">400-000</span>' in listed and '<span class="id">300-001</span>' in listed
    )
    rejects = web.get("/", params={"status": "decided", "action": "reject"}).text
    assert "marketing copy" in rejects and '<span class="id">400-000</span>' not in rejects
    by_rita = web.get("/", params={"status": "decided", "by": "rita"}).text
    assert by_rita.count('class="action"') == 2
    assert "nothing matches" in web.get("/", params={"status": "decided", "by": "nobody"}).text


def test_a_second_reviewer_is_told_who_decided_and_nothing_doubles(engine: Engine) -> None:
    first = review_ids(engine)[0]
    assert post(client(engine, "rita"), f"/item/{first}", action="approve").status_code == 303
    late = post(client(engine, "sam"), f"/item/{first}", pick="400-000")
    assert late.status_code == 409 and "already decided by rita" in late.text
    assert len(decisions(engine)) == 1


def test_undo_reopens_your_last_decision_and_keeps_the_record(engine: Engine) -> None:
    web = client(engine)
    first = review_ids(engine)[0]
    post(web, f"/item/{first}", action="approve")
    undone = post(web, "/undo")
    assert undone.status_code == 303 and undone.headers["location"].startswith(f"/item/{first}")
    assert decisions(engine) == [] and "4 open items" in web.get("/").text
    with Session(engine) as session:
        kept = session.execute(select(HumanDecisionRow)).scalars().all()
    assert len(kept) == 1 and kept[0].undone_at is not None
    assert post(web, f"/item/{first}", action="reject").status_code == 303
    assert [d["action"] for d in decisions(engine)] == ["reject"]


def test_no_decision_without_a_reviewer_name_or_a_csrf_token(engine: Engine) -> None:
    first = review_ids(engine)[0]
    anonymous = client(engine, reviewer=None)
    refused = post(anonymous, f"/item/{first}", action="approve")
    assert refused.status_code == 400 and "sign in" in refused.text
    named = signed_in(engine, "ana")
    assert post(named, f"/item/{first}", action="approve").status_code == 303
    assert decisions(engine)[0]["decided_by"] == "ana"
    web = client(engine)
    second = review_ids(engine)[1]
    assert web.post(f"/item/{second}", data={"action": "approve"}).status_code == 403
    foreign = web.post(
        f"/item/{second}",
        data={"csrf": "test-csrf", "action": "approve"},
        headers={"origin": "https://evil.example"},
    )
    assert foreign.status_code == 403 and len(decisions(engine)) == 1


def test_a_token_guards_every_request(engine: Engine) -> None:
    web = client(engine, token="s3cret")
    assert web.get("/").status_code == 401
    assert web.get("/static/workbench.js").status_code == 401
    entry = web.get("/", params={"token": "s3cret"})
    assert entry.status_code == 303 and "token" not in entry.headers["location"]
    assert web.get("/").status_code == 200  # the cookie now carries it
    assert (
        client(engine, token="s3cret")
        .get("/", headers={"authorization": "Bearer s3cret"})
        .status_code
        == 200
    )


def test_search_covers_the_whole_hub() -> None:
    found = search_hub(small_hub(), "session token")
    assert [hit["cre_id"] for hit in found] == ["200-001"]
    assert search_hub(small_hub(), "300-001")[0]["name"].startswith("Use parameterized")
    assert search_hub(small_hub(), "  ") == []


def test_another_review_tool_on_the_same_table(engine: Engine) -> None:
    """The upstream handoff contract, in exactly its form: open items are
    `consumed_at IS NULL AND status = 'review_required'`, and a tool sets consumed_at."""
    query = text(
        "SELECT id, chunk_id, artifact_id, pipeline_run_id, schema_version, source_label, "
        "status, reason_code, review_id, confidence, envelope, created_at, consumed_at "
        "FROM decision_queue WHERE consumed_at IS NULL AND status = 'review_required'"
    )
    with engine.begin() as conn:
        rows = conn.execute(query).all()
        assert len(rows) == 4 and {r.source_label for r in rows} == {"KNOWLEDGE"}
        assert {r.schema_version for r in rows} == {"0.1.0"}
        conn.execute(
            text("UPDATE decision_queue SET consumed_at = CURRENT_TIMESTAMP WHERE id = :i"),
            {"i": rows[0].id},
        )
    web = client(engine)
    first = review_ids(engine)[0]
    late = post(web, f"/item/{first}", action="approve")
    assert late.status_code == 409 and "another review tool" in late.text
    post(web, f"/item/{review_ids(engine)[1]}", action="approve")
    with engine.begin() as conn:
        assert len(conn.execute(query).all()) == 2  # our decision consumed its item too


def test_serving_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from librarian.cli import app

    runner = CliRunner()
    exposed = runner.invoke(app, ["review", "serve", "--host", "0.0.0.0"])
    assert exposed.exit_code == 2 and "--token" in exposed.output
    both = runner.invoke(app, ["review", "serve", "--db", "sqlite:///x.db", "--reviews", "r"])
    assert both.exit_code == 2 and "not both" in both.output


def test_a_dry_runs_reviews_are_served_from_a_file_beside_them(tmp_path: Path) -> None:
    from librarian.cli.review import _reviews_database
    from librarian.schemas.envelopes import dump_envelope

    batch = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}"}) for i, t in enumerate(TEXTS)
    ]
    envelopes = one_shot.link(stub_pipeline(threshold=0.99), batch, "dry").envelopes
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text("".join(json.dumps(dump_envelope(e)) + "\n" for e in envelopes))
    url = _reviews_database(reviews)
    assert (tmp_path / "reviews.jsonl.decisions.db").is_file()
    assert _reviews_database(reviews) == url  # a second start adds nothing
    engine = make_engine(url)
    assert len(review_ids(engine)) == 4
    assert (
        post(client(engine), f"/item/{review_ids(engine)[0]}", action="reject").status_code == 303
    )
    engine.dispose()


def test_decisions_taken_before_reviewers_had_names_are_migrated(tmp_path: Path) -> None:
    """Migration 0004 on a store at 0003 holding an imported sheet's decisions."""
    from alembic import command
    from alembic.config import Config

    from librarian.store.db import MIGRATIONS

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
        conn.execute(
            text(
                "INSERT INTO decision_queue (id, chunk_id, content_hash, artifact_id, span_key, "
                "run_id, status, is_update, review_id, text, envelope, created_at, "
                "review_consumed_at) VALUES (1, 'c', 'h', 'a', 's', 'r0', 'reviewed', 0, 'rev-1', "
                "'t', '{}', '2026-11-01', '2026-11-02')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO human_decisions (decision_id, review_id, action, cre_id, text, "
                "imported_from, decided_at) VALUES (1, 'rev-1', 'choose', '400-000', 't', "
                "'sheet.csv', '2026-11-02')"
            )
        )
    upgrade(engine)
    with Session(engine) as session:
        row = session.execute(select(DecisionRow)).scalar_one()
        old = session.execute(select(HumanDecisionRow)).scalar_one()
    assert (row.status, row.pipeline_run_id, row.consumed_at is not None) == (
        "review_required",
        "r0",
        True,
    )
    assert (old.action, old.final_cre_ids, old.decision_row_id) == ("correct", "400-000", 1)
    assert old.decided_by == "unnamed (imported from sheet.csv)" and len(old.decision_uuid) == 36


def test_a_sources_decisions_are_its_history_and_the_item_page_says_where_it_stands(
    engine: Engine,
) -> None:
    from librarian.settings import MIN_SOURCE_DECISIONS
    from librarian.store.history import source_history
    from librarian.store.progress import decisions_seen

    web = client(engine)
    first, second, third = review_ids(engine)[:3]
    with Session(engine) as session:
        key = session.execute(select(DecisionRow.source_key)).scalars().first()
    assert key is not None and key.startswith("url:")
    page = web.get(f"/item/{first}").text
    assert (
        f"0 items decided one by one (bulk approvals not counted), {MIN_SOURCE_DECISIONS} "
        "more before it calibrates" in page
    )
    assert "as it stood when this item was linked:" in page  # the audit's source part
    post(web, f"/item/{first}", action="approve")
    post(web, f"/item/{second}", action="choose", cre_ids=["400-000", "300-001"])
    post(web, f"/item/{third}", action="reject", rejection="NOT_SECURITY_KNOWLEDGE")
    post(web, "/undo")  # the reject is undone: it no longer counts
    with Session(engine) as session:
        history = source_history(session, [key, "github:nobody/else"])
        assert decisions_seen(session, key) == 2
    assert list(history) == [key]
    reviewed = history[key].reviewed
    assert sorted(r.cre_ids for r in reviewed)[1] == ("400-000", "300-001")
    assert {"400-000", "300-001"} <= history[key].linked
    page = web.get(f"/item/{third}").text
    assert (
        f"2 items decided one by one (bulk approvals not counted), {MIN_SOURCE_DECISIONS - 2} more"
        in page
    )


def test_rows_stored_before_source_keys_get_theirs_from_their_envelope(tmp_path: Path) -> None:
    """Migration 0005 on a store at 0004."""
    envelope = {
        "knowledge": {
            "source": {"type": "github", "repo": "OWASP/ASVS"},
            "locator": {"kind": "repo_path", "id": "x"},
        }
    }
    rows = [
        old_row(n, body, pipeline_run_id="r0", status="linked", review_id=f"rev-{n}")
        for n, body in ((1, json.dumps(envelope)), (2, "{}"))
    ]
    engine = store_at_revision(tmp_path / "old.db", "0004", rows)
    upgrade(engine)
    with Session(engine) as session:
        keys = session.execute(select(DecisionRow.source_key).order_by(DecisionRow.id))
        assert list(keys.scalars()) == ["github:OWASP/ASVS", None]


def test_a_dry_run_refuses_a_store_older_than_this_build(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from librarian.store.db import MIGRATIONS, DatabaseUrlError, check_current

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0004")
    with pytest.raises(DatabaseUrlError, match="revision 0004, this build reads 0013"):
        check_current(url)
    upgrade(engine)
    check_current(url)  # up to date: nothing to say


# Issue 21: hardening, third pass (items 3, 4 and 17) --------------------------------------


def test_a_rebound_host_name_is_refused(engine: Engine) -> None:
    """DNS rebinding: any Host was served, and Origin was compared with that Host."""
    web = client(engine)
    assert web.get("/").status_code == 200
    assert web.get("/", headers={"host": "localhost:8765"}).status_code == 200
    rebound = web.get("/", headers={"host": "rebind.evil.example:8765"})
    assert rebound.status_code == 400 and "test-csrf" not in rebound.text
    first = review_ids(engine)[0]
    forged = web.post(
        f"/item/{first}",
        data={"csrf": "test-csrf", "action": "approve"},
        headers={"host": "rebind.evil.example:8765", "origin": "http://rebind.evil.example:8765"},
    )
    assert forged.status_code == 400 and decisions(engine) == []


@pytest.mark.parametrize("where", ["query", "cookie", "bearer", "csrf"])
def test_a_non_ascii_secret_is_refused_not_a_500(engine: Engine, where: str) -> None:
    web = client(engine, token="s3cret-token-1234567")
    odd = "tökén-ünïcode-✓"
    if where == "query":
        answer = web.get("/", params={"token": odd})
    elif where == "cookie":
        answer = web.get("/", headers={b"cookie": f"librarian_token={odd}".encode()})
    elif where == "bearer":
        answer = web.get("/", headers={b"authorization": f"Bearer {odd}".encode()})
    else:
        ok = client(engine)
        answer = ok.post(f"/item/{review_ids(engine)[0]}", data={"csrf": odd, "action": "approve"})
    assert answer.status_code in (401, 403)


def test_another_browser_with_the_same_name_cannot_undo(engine: Engine) -> None:
    alice = signed_in(engine, "alice")
    first = review_ids(engine)[0]
    assert post(alice, f"/item/{first}", action="approve").status_code == 303
    impostor = client(engine, reviewer=None)
    said = impostor.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": "guess"})
    assert "wrong+name+or+key" in said.headers["location"]
    assert post(impostor, "/undo").status_code == 400  # nobody signed in
    desk = alice.cookies.get("librarian_desk")  # alice herself, in another browser
    alice.cookies.delete("librarian_desk")
    refused = post(alice, "/undo")
    assert refused.status_code == 303
    assert "nothing+decided+in+this+browser" in refused.headers["location"]
    assert len(decisions(engine)) == 1
    alice.cookies.set("librarian_desk", str(desk))
    assert post(alice, "/undo").headers["location"].startswith(f"/item/{first}")
    assert decisions(engine) == []


def test_redirects_stay_on_this_server_and_messages_are_its_own(engine: Engine) -> None:
    web = client(engine, reviewer=None)
    key = register(engine, "ana")
    named = web.post(
        "/signin",
        data={"csrf": "test-csrf", "name": "ana", "key": key, "back": "https://evil.example/x"},
        headers={"referer": "https://evil.example/phish"},
    )
    assert named.status_code == 303 and named.headers["location"].startswith("/?")
    for back in ("//evil.example/x", "javascript:alert(1)"):
        form = {"csrf": "test-csrf", "name": "ana", "key": key, "back": back}
        again = web.post("/signin", data=form)
        assert again.headers["location"].startswith("/?")
    shown = web.get(named.headers["location"])
    assert "signed in as ana" in shown.text and "reviewing as <b>ana</b>" in shown.text
    forged = web.get("/", params={"msg": "Session expired: call +1 555 0100", "kind": "error"})
    assert "555" not in forged.text


@pytest.mark.parametrize("name", ["Łukasz", "Иван", "李"])
def test_a_reviewer_name_outside_latin1_is_kept(engine: Engine, name: str) -> None:
    web = signed_in(engine, name)
    assert post(web, f"/item/{review_ids(engine)[0]}", action="approve").status_code == 303
    assert decisions(engine)[0]["decided_by"] == name
    assert name in web.get("/").text


def test_huge_numbers_in_a_page_or_a_duration_are_no_500(engine: Engine) -> None:
    web = client(engine)
    assert web.get("/", params={"page": "99999999999999999999"}).status_code == 200
    first = review_ids(engine)[0]
    done = post(web, f"/item/{first}", action="approve", duration_ms="9" * 30)
    assert done.status_code == 303
    assert decisions(engine)[0].get("ui", {}).get("review_duration_ms") is None


def test_a_decision_while_another_writer_holds_the_lock_says_busy(tmp_path: Path) -> None:
    slow = make_engine(f"sqlite:///{tmp_path / 'review.db'}", lock_timeout_s=0.2)
    upgrade(slow)
    seed(slow, TEXTS)
    holder = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    with holder.connect() as conn:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        answer = post(client(slow), f"/item/{review_ids(slow)[0]}", action="approve")
        conn.exec_driver_sql("ROLLBACK")
    assert answer.status_code == 503 and "busy, try again" in answer.text


def test_a_weak_or_printed_token_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from librarian.cli import app

    runner = CliRunner()
    for weak in (" ", "1", "short-token", "a token with spaces in it"):
        refused = runner.invoke(app, ["review", "serve", "--token", weak])
        assert refused.exit_code == 2 and "access token" in refused.output, weak
    monkeypatch.setenv("LIBRARIAN_REVIEW_TOKEN", "1")
    assert runner.invoke(app, ["review", "serve"]).exit_code == 2


def test_a_token_from_the_environment_is_not_printed(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn
    from typer.testing import CliRunner

    from librarian.cli import app

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)
    secret = "env-token-kept-out-of-logs-42"
    monkeypatch.setenv("LIBRARIAN_REVIEW_TOKEN", secret)
    served = CliRunner().invoke(app, ["review", "serve", "--db", str(engine.url)])
    assert served.exit_code == 0, served.output
    assert secret not in served.output and "$LIBRARIAN_REVIEW_TOKEN" in served.output
    typed = CliRunner().invoke(app, ["review", "serve", "--db", str(engine.url), "--token", secret])
    assert typed.exit_code == 0 and f"?token={secret}" in typed.output


def test_escape_and_bidi_characters_are_shown_as_code_points_on_every_page(
    tmp_path: Path,
) -> None:
    """Issue 21, item 6: the heading path and chunk id reached the page raw."""
    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    upgrade(engine)
    section = section_from_text("rotate session token after login").model_copy(
        update={"chunk_id": "c\u202eevil", "line": 1, "heading_path": ("Guide\x1b[31m", "Part")}
    )
    result = one_shot.link(stub_pipeline(threshold=0.99), [section], "r1")
    with Session(engine) as session:
        write(session, StoredBatch.linked("r1", result, [section], "t"))
        session.commit()
    web = client(engine)
    for page in (web.get("/"), web.get(f"/item/{review_ids(engine)[0]}")):
        assert "\u202e" not in page.text and "\x1b" not in page.text
        assert "⟨U+202E⟩" in page.text
    assert "⟨U+001B⟩" in web.get(f"/item/{review_ids(engine)[0]}").text


def test_review_import_errors_show_escapes_as_code_points(engine: Engine, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from librarian.cli import app

    sheet = tmp_path / "sheet.csv"
    sheet.write_text("review_id,decision,cre_id,note\n\x1b[2Jrev-x\u202e,accept,,\n")
    result = CliRunner().invoke(
        app, ["review", "import", str(sheet), "--db", str(engine.url), "--reviewer", "rita"]
    )
    assert result.exit_code != 0
    assert "\x1b" not in result.output and "\u202e" not in result.output
    assert "⟨U+001B⟩" in result.output


def test_per_source_progress_on_the_queue_page_and_in_queue_status(engine: Engine) -> None:
    """Issue 22, item 11: each source's decisions, how many more it needs, and the items
    to review first."""
    from typer.testing import CliRunner

    from librarian.cli import app
    from librarian.store.progress import source_progress

    with Session(engine) as session:
        (source,) = source_progress(session)
    assert (source.open_items, source.decisions, source.needed) == (4, 0, 20)
    # Four open items, fewer than a calibration sample: every one of them.
    assert sorted(source.review_first) == sorted(review_ids(engine))
    web = client(engine)
    ids = review_ids(engine)
    post(web, f"/item/{ids[0]}", action="approve")
    # Issue 29, item 5: a bulk approval calibrates nothing, so no count of a source's
    # decisions counts it: the item page, the queue page and `queue status` say 1.
    post(web, "/bulk", scope="selected", review_ids=ids[1:2], confirmed="yes")
    page = web.get("/").text
    assert 'id="sources"' in page and "19" in page and source.key in page
    # Issue 41, item 2: a source its calibration sample covers whole is told so.
    assert "a 4-item source: review all of it; what you decide certifies its next" in page
    assert (
        "1 item decided one by one (bulk approvals not counted), 19 more"
        in web.get(f"/item/{ids[2]}").text
    )
    with Session(engine) as session:
        (after,) = source_progress(session)
    assert (after.open_items, after.decisions, after.needed) == (2, 1, 19)
    status = CliRunner().invoke(app, ["queue", "status", "--db", str(engine.url)])
    assert status.exit_code == 0, status.output
    said = " ".join(status.output.split())
    assert (
        f"source {source.key}: 2 open, 1 decided one by one, 19 more before it calibrates" in said
    )
    # Issue 29, item 5: each number says what it counts, from the store as it is now; and
    # item 4: the items to review first by what they are, not by review id.
    assert "knowledge_queue (rows a run links): 0 rows: 0 rows waiting" in said
    assert "review items (what runs sent to people): 2 open; 1 decided one by one" in said
    assert "“about:explain”" in said and "rev-" not in said


def test_the_decided_list_the_banner_and_the_order_say_what_happened(engine: Engine) -> None:
    """Issue 22, items 4 and 8: the decided list showed no action, who or when; the banner
    said `recorded: rev-…`; #2 could show a higher confidence than #1 without a word."""
    from librarian.review.words import order_note
    from librarian.store.review import Suggestion

    web = client(engine)
    first = review_ids(engine)[0]
    done = post(web, f"/item/{first}", action="approve")
    page = web.get(done.headers["location"]).text
    (banner,) = re.findall(r'role="status">([^<]*)', page)
    assert banner.startswith("recorded approve of “Part 0”: ") and "rev-" not in banner
    decided = web.get("/", params={"status": "decided"}).text
    assert 'class="action">approve' in decided and "by rita" in decided
    low, high = Suggestion("200-001", "a", 0.2, None), Suggestion("300-001", "b", 0.4, None)
    note = order_note((low, high))
    assert note is not None and "#2 has the higher one (0.400 against 0.200)" in note
    assert order_note((high, low)) is None


def test_bulk_approve_of_the_selected_or_the_filtered_is_one_decision_each(
    engine: Engine,
) -> None:
    """Issue 22, item 7."""
    web = client(engine)
    ids = review_ids(engine)
    picked = post(web, "/bulk", scope="selected", review_ids=ids[:2], confirmed="yes")
    assert picked.status_code == 303
    assert "approved+the+first+suggestion+of+2+items" in picked.headers["location"]
    made = decisions(engine)
    assert [d["action"] for d in made] == ["approve", "approve"]
    assert all(d["ui"]["keybind_used"] == "bulk" for d in made)
    again = post(web, "/bulk", scope="selected", review_ids=ids[:3], confirmed="yes")
    assert "of+1+item%3B+2+left+as+they+were" in again.headers["location"]
    shown = re.search(r'name="matching" value="([^"]*)"', web.get("/").text)
    assert shown is not None and shown.group(1).split() == ids[3:]
    seed(engine, ["a new item arrives after the page was drawn"], run="r2")
    rest = post(
        web, "/bulk", scope="filtered", f_status="open", matching=shown.group(1), confirmed="yes"
    )
    assert "of+1+item" in rest.headers["location"] and len(decisions(engine)) == 4
    assert "1+that+arrived+after+the+page+was+shown+were+not+approved" in rest.headers["location"]
    assert "1 open item" in web.get("/").text  # issue 28, item 2: it approved what it showed
    assert post(client(engine, reviewer=None), "/bulk", scope="filtered").status_code == 400


def test_a_bulk_approval_shows_how_many_and_a_sample_and_asks_first(engine: Engine) -> None:
    """Issue 29, item 2: one click approved up to 500 items; now the first click shows the
    count and what each will be linked to, and only the confirmation approves them, all
    and only those it showed."""
    web = client(engine)
    ids = review_ids(engine)
    shown = re.search(r'name="matching" value="([^"]*)"', web.get("/").text)
    assert shown is not None
    asked = post(web, "/bulk", scope="filtered", f_status="open", matching=shown.group(1))
    assert asked.status_code == 200 and decisions(engine) == []  # nothing decided yet
    assert f"Approve the first suggestion of {len(ids)} items?" in asked.text
    assert asked.text.count('name="review_ids"') == len(ids)
    assert re.search(r'<span class="id">\d{3}-\d{3}</span> \w', asked.text)  # CRE and name
    seed(engine, ["a new item arrives while the reviewer reads the sample"], run="r2")
    confirm = dict(re.findall(r'name="(csrf|scope|confirmed)" value="([^"]*)"', asked.text))
    done = post(
        web,
        "/bulk",
        **confirm,
        review_ids=re.findall(r'name="review_ids" value="([^"]*)"', asked.text),
    )
    assert done.status_code == 303 and len(decisions(engine)) == len(ids)
    assert "1 open item" in web.get("/").text  # the newcomer was not in what it showed


def test_per_reviewer_counts_agreement_and_time(engine: Engine) -> None:
    """Issue 22, item 8: per reviewer, counts, agreement with the first suggestion, time."""
    from librarian.store.human import reviewer_stats

    ids = review_ids(engine)
    post(client(engine, "rita"), f"/item/{ids[0]}", action="approve", duration_ms="4000")
    post(client(engine, "rita"), f"/item/{ids[1]}", action="reject", duration_ms="2000")
    post(client(engine, "sam"), f"/item/{ids[2]}", action="approve", duration_ms="1000")
    with Session(engine) as session:
        stats = {s.reviewer: s for s in reviewer_stats(session)}
    assert (stats["rita"].decided, stats["rita"].agreed, stats["rita"].median_ms) == (2, 1, 4000)
    assert (stats["sam"].decided, stats["sam"].agreed) == (1, 1)
    page = client(engine).get("/").text
    assert 'id="reviewers"' in page and "1 (50%)" in page


def test_why_a_suggestion_shows_shared_words_and_the_distance_to_the_threshold(
    engine: Engine,
) -> None:
    """Issue 22, item 5 (in part): the words the section and the CRE share, the threshold
    and how far the confidence is from it."""
    from librarian.review.words import shared_words
    from librarian.store.review import Suggestion

    hub = small_hub()
    found = shared_words(
        "Rotate the session token after every login", Suggestion("200-001", "", 0.5), hub
    )
    assert {"rotate", "session", "token", "login"} <= set(found) and "the" not in found
    page = client(engine).get(f"/item/{review_ids(engine)[0]}").text
    assert "shared words: <b>" in page and "auto-link at 0.990" in page and " short" in page


def test_why_shows_the_words_that_raised_a_negation_flag_and_the_linked_section(
    tmp_path: Path,
) -> None:
    """Issue 22, item 5: for a flag, the words that raised it; the best linked section's
    text, not only its id."""
    from librarian.cli.review import exemplar_texts
    from librarian.paths import DEFAULT_LINKS
    from librarian.review.words import EXEMPLAR

    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    upgrade(engine)
    seed(engine, ["Session tokens are never rotated after login"])
    page = client(engine).get(f"/item/{review_ids(engine)[0]}").text
    assert "NEGATION_MISMATCH" in page
    assert "negation flagged: “never” (after, login, rotated)" in page
    rationale = (
        "similarity to this text, 0-1: its name 0.61, its place in the hub 0.58; closest "
        "section already linked to it 0.72: nist_800_53 AC-2 (prose)"
    )
    found = EXEMPLAR.search(rationale)
    assert found is not None and found.group(1) == "nist_800_53 AC-2 (prose)"
    first = json.loads(DEFAULT_LINKS.read_text().splitlines()[0])
    label = (
        f"{first['framework_id']} {first.get('section_id') or first.get('section_name')} (title)"
    )
    assert exemplar_texts()(label) == first["text"]


def test_sections_are_named_for_people_and_ids_stay_for_machines(engine: Engine) -> None:
    """Issue 29, item 4: the queue named a section by its chunk id; undo said `rev-…`."""
    from librarian.store.review import section_label

    plain = {"locator": {"id": "Acme Security Policy#SEC-01", "title": "Passwords"}}
    assert section_label(plain, "plain:d16ff6598140:SEC-01") == (
        "Acme Security Policy § SEC-01 — Passwords"
    )
    repo = {"locator": {"path": "cheatsheets/Session.md", "title": "Sessions"}}
    assert section_label(repo, "c1") == "cheatsheets/Session.md § Sessions"
    assert section_label({}, "c1") == "c1"
    web = client(engine)
    queue = web.get("/").text
    assert re.search(r'<div class="where" title="chunk [^"]+">[^<]+</div>', queue)
    first = review_ids(engine)[0]
    post(web, f"/item/{first}", action="approve")
    undone = post(web, "/undo")
    message = parse_qs(urlsplit(undone.headers["location"]).query)["msg"][0]
    assert message == "undone: “about:explain” is open again"  # the section, not `rev-…`


def client_with_leads(engine: Engine, reviewer: str, leads: set[str]) -> TestClient:
    bench = Workbench(engine, small_hub(), reviewer, csrf="test-csrf", leads=frozenset(leads))
    return TestClient(create_app(bench), base_url="http://127.0.0.1:8765", follow_redirects=False)


def test_a_decision_is_changed_by_its_reviewer_or_a_lead_and_the_old_one_is_kept(
    engine: Engine,
) -> None:
    """Issue 29, item 1: a change is a new HumanDecision superseding the old one."""
    first = review_ids(engine)[0]
    rita = client(engine, "rita")
    post(rita, f"/item/{first}", action="reject", rejection="NO_CRE_FITS")
    page = rita.get(f"/item/{first}").text
    assert 'id="changing"' in page and 'name="change" value="yes"' in page
    # Not theirs, not a lead: refused, nothing recorded, the page offers no change.
    sam = client(engine, "sam")
    assert 'id="changing"' not in sam.get(f"/item/{first}").text
    refused = post(sam, f"/item/{first}", change="yes", pick="400-000")
    assert refused.status_code == 400 and "only they or a lead" in refused.text
    changed = post(rita, f"/item/{first}", change="yes", pick="400-000", note="the leaf fits")
    assert changed.status_code == 303 and changed.headers["location"].startswith(f"/item/{first}")
    (standing,) = decisions(engine)
    assert standing["action"] == "correct" and standing["decided_by"] == "rita"
    assert [link["cre_id"] for link in standing["final_links"]] == ["400-000"]
    # A lead changes anyone's.
    lead = client_with_leads(engine, "lena", {"lena"})
    assert post(lead, f"/item/{first}", change="yes", action="approve").status_code == 303
    assert [(d["action"], d["decided_by"]) for d in decisions(engine)] == [("approve", "lena")]
    with Session(engine) as session:
        rows = session.execute(select(HumanDecisionRow).order_by(HumanDecisionRow.id)).scalars()
        kept = [(r.action, r.superseded_at is not None, r.supersedes_id) for r in rows]
    assert kept == [("reject", True, None), ("correct", True, 1), ("approve", False, 2)]
    history = rita.get(f"/item/{first}").text
    assert history.count("changed later") == 2 and history.count("— stands") == 1
    assert "correct 400-000: “the leaf fits”" in history  # issue 41: each change's note
    # The same decision again is no change; the item stays decided throughout.
    same = post(lead, f"/item/{first}", change="yes", action="approve")
    assert same.status_code == 400 and "nothing changed" in same.text
    assert "3 open items" in rita.get("/").text


def test_undoing_a_change_brings_back_the_decision_it_replaced(engine: Engine) -> None:
    first = review_ids(engine)[0]
    rita = client(engine, "rita")
    post(rita, f"/item/{first}", action="reject", rejection="NO_CRE_FITS")
    post(rita, f"/item/{first}", change="yes", pick="400-000")
    undone = post(rita, "/undo")
    assert undone.status_code == 303
    assert [d["action"] for d in decisions(engine)] == ["reject"]
    assert "3 open items" in rita.get("/").text  # still decided: the reject stands again
    # Issue 47, item 18: it said "is open again"; it says what stands.
    said = rita.get(undone.headers["location"]).text
    assert "rita&#39;s earlier reject stands again" in said or "rita's earlier reject" in said
    assert "is open again" not in said


def test_a_change_of_an_open_item_or_one_changed_meanwhile_is_refused(engine: Engine) -> None:
    first = review_ids(engine)[0]
    hub_ids = set(small_hub().ids)
    with Session(engine) as session, pytest.raises(ReviewError, match="is open: decide it"):
        change(session, DecisionRequest(first, "approve", "rita"), hub_ids)
    post(client(engine, "rita"), f"/item/{first}", action="approve")
    with Session(engine) as session:
        row = session.execute(select(DecisionRow).where(DecisionRow.review_id == first))
        item = row.scalar_one()
        old = standing_decision(session, item)
        assert old is not None
        # Another writer changed it between our read and our write: the compare-and-set.
        session.execute(text("UPDATE human_decisions SET superseded_at = CURRENT_TIMESTAMP"))
        asked = DecisionRequest(first, "reject", "rita")
        decision = build_decision(item, asked, hub_ids, datetime.now(UTC))
        with pytest.raises(ReviewError, match="changed or undone meanwhile"):
            supersede(session, item, old, decision, None, "workbench")


def test_training_reads_only_the_latest_decision_of_an_item(engine: Engine) -> None:
    """Issue 29: training and calibration read the decision that stands, not the history."""
    first, second = review_ids(engine)[:2]
    rita = client(engine, "rita")
    post(rita, f"/item/{first}", pick="400-000")
    post(rita, f"/item/{first}", change="yes", pick="300-001")
    post(rita, f"/item/{second}", pick="400-000")
    post(rita, f"/item/{second}", change="yes", action="reject", rejection="NO_CRE_FITS")
    learned = reviewer_links(engine)
    assert [(link.section_id, link.cre_id) for link in learned.links] == [(first, "300-001")]
    assert (learned.read, learned.used, learned.superseded, learned.rejects) == (4, 1, 2, 1)
    assert "2 changed since" in learned.says()
    with Session(engine) as session:
        row = session.execute(select(DecisionRow).where(DecisionRow.review_id == first))
        key = row.scalar_one().source_key
        assert key is not None and decisions_seen(session, key) == 2  # 2 items, 4 decisions


def test_a_source_reaching_its_calibration_point_is_re_scored_without_a_retrain(
    tmp_path: Path,
) -> None:
    """Issue 29, item 8: the 20th decision of a source re-scores its open items at once
    (the relinker is a seam here; `relink` itself is tests/unit/test_relink.py's)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'calibrate.db'}")
    upgrade(engine)
    seed(engine, [f"session token number {i}" for i in range(24)])
    asked: list[str] = []

    def relinker(source: str) -> str:
        asked.append(source)
        return "re-scored: 4 open items, 1 now linked automatically"

    bench = Workbench(engine, small_hub(), "rita", csrf="test-csrf", relinker=relinker)
    web = TestClient(create_app(bench), base_url="http://127.0.0.1:8765", follow_redirects=False)
    ids = review_ids(engine)
    for n, review_id in enumerate(ids[:20], start=1):
        done = post(web, f"/item/{review_id}", action="reject")
        said = parse_qs(urlsplit(done.headers["location"]).query).get("msg", [""])[0]
        assert ("decided again with its own calibration" in said) == (n == 20), (n, said)
    bench.background.shutdown(wait=True)
    with Session(engine) as session:
        key = session.execute(select(DecisionRow.source_key)).scalars().first()
    assert asked == [key]
    page = web.get(f"/item/{ids[20]}").text
    assert 'id="rescored"' in page and "1 now linked automatically" in page


def test_a_decision_message_names_the_rule_not_the_chapter_it_shares(
    engine: Engine, tmp_path: Path
) -> None:
    """Issue 41, item 9: "recorded approve of '1. Authentication'" when five rules share it."""
    import docx

    from librarian.pipeline.plain import plain_rows
    from librarian.schemas.records import Section
    from librarian.store.decisions import StoredBatch
    from librarian.store.review import review_items
    from tests.stubs import stub_pipeline

    document = docx.Document()
    document.add_heading("1. Authentication", 1)
    document.add_paragraph("AUTH-1 Rotate the session token after login.")
    document.add_paragraph("AUTH-2 Use parameterized queries against SQL injection.")
    policy = tmp_path / "policy.docx"
    document.save(str(policy))
    sections = list(plain_rows(policy, "Acme Policy").records.values())
    batch = [s for s in sections if isinstance(s, Section)]
    assert len(batch) == 2
    result = one_shot.link(stub_pipeline(threshold=0.99), batch, "policy-run")
    with Session(engine) as session:
        write(session, StoredBatch.linked("policy-run", result, batch, "md"))
        session.commit()
    web = client(engine)
    item = next(i for i in review_items(Session(engine), "open") if "AUTH-2" in i.label)
    done = post(web, f"/item/{item.review_id}", action="approve")
    message = parse_qs(urlsplit(done.headers["location"]).query)["msg"][0]
    assert "§ AUTH-2" in message and "“1. Authentication”" not in message, message


def test_accept_first_on_an_item_re_scored_under_it(engine: Engine) -> None:
    """Issue 48, item 5: the workbench re-scored a source at its 20th decision while a
    reviewer was on an item. "Accept first" is kept when the first suggestion is still
    the one shown; when it changed, nothing is recorded and the item shows the new one."""
    web = client(engine)
    first, second = review_ids(engine)[:2]
    page = web.get(f"/item/{first}").text
    shown = re.search(r'name="shown_first" value="([^"]*)"', page)
    assert shown is not None and shown.group(1)
    with Session(engine) as session, session.begin():  # decided again, as a re-score does
        row = session.execute(select(DecisionRow).where(DecisionRow.review_id == first))
        stored = row.scalar_one()
        links = list(stored.envelope["suggested_links"])
        stored.envelope = {**stored.envelope, "suggested_links": [links[1], links[0], *links[2:]]}
    moved = post(web, f"/item/{first}", action="approve", shown_first=shown.group(1))
    assert moved.status_code == 303 and moved.headers["location"].startswith(f"/item/{first}")
    assert decisions(engine) == []
    said = web.get(moved.headers["location"]).text
    assert f"its first suggestion is now {links[1]['cre_id']}" in said
    # The page now shows the new first suggestion; accepting it is recorded.
    again = post(web, f"/item/{first}", action="approve", shown_first=links[1]["cre_id"])
    assert again.headers["location"].startswith(f"/item/{second}")
    (decision,) = decisions(engine)
    assert decision["final_links"][0]["cre_id"] == links[1]["cre_id"]


def test_the_item_page_says_what_confidence_means_and_folds_the_cut_under_the_text(
    engine: Engine,
) -> None:
    """Issue 48, item 5: no legend said what "confidence 0.585" means, and the cut's 6-9
    lines sat above the requirement's text."""
    page = client(engine).get(f"/item/{review_ids(engine)[0]}").text
    assert 'id="legend">confidence: how likely the CRE is right' in page
    assert page.index('id="text"') < page.index('<details class="source" id="source">')


def test_an_item_page_shows_each_linked_example_once(tmp_path: Path) -> None:
    """Issue 58, item 6: the same linked section's paragraph was repeated under every
    candidate that named it as its closest; it is shown once, and the others say so."""
    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    upgrade(engine)
    seed(engine, ["Session tokens must be rotated after login"])
    why = "closest section already linked to it 0.72: nist_800_53 AC-2 (prose)"
    with Session(engine) as session, session.begin():
        row = session.scalars(select(DecisionRow)).one()
        links = [{**link, "rationale": why} for link in row.envelope["suggested_links"]]
        assert len(links) >= 2
        row.envelope = {**row.envelope, "suggested_links": links}
    bench = Workbench(engine, small_hub(), "rita", None, csrf="test-csrf")
    bench.exemplar_text = lambda label: f"the linked paragraph of {label}"
    web = TestClient(create_app(bench), base_url="http://127.0.0.1:8765")
    page = web.get(f"/item/{review_ids(engine)[0]}").text
    assert page.count("the linked paragraph of nist_800_53 AC-2 (prose)") == 1
    assert page.count("the same linked example as above") == len(links) - 1
