"""Issue 38, defect 1 (severe): a reviewer's identity was whatever name the browser
posted. Change rights, the QA check and a lead's ruling all compared that name, so anyone
could act as alice or as the lead. Reviewers now sign in; the name and role are the
server's."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session
from starlette.testclient import TestClient
from typer.testing import CliRunner

from librarian.review.signin import session_name, session_value
from tests.unit.test_workbench import (
    client,
    decisions,
    post,
    register,
    review_ids,
    seeded_engine,
    signed_in,
)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return seeded_engine(tmp_path / "signin.db")


def test_a_browser_can_no_longer_name_itself(engine: Engine) -> None:
    web = client(engine, reviewer=None)
    named = web.post("/reviewer", data={"csrf": "test-csrf", "name": "alice"})
    assert named.status_code in (404, 405)
    assert post(web, f"/item/{review_ids(engine)[0]}", action="approve").status_code == 400
    assert decisions(engine) == []


def test_nobody_changes_alices_decision_by_calling_themselves_alice(engine: Engine) -> None:
    first = review_ids(engine)[0]
    alice = signed_in(engine, "alice")
    assert (
        post(alice, f"/item/{first}", action="reject", rejection="NO_CRE_FITS").status_code == 303
    )
    mallory = signed_in(engine, "mallory")
    refused = post(mallory, f"/item/{first}", change="yes", pick="400-000")
    assert refused.status_code == 400 and "only they or a lead" in refused.text
    # A cookie that says alice, not signed by this server, is nobody.
    forged = client(engine, reviewer=None)
    forged_value = session_value("alice", "any credential", b"not the server's key")
    forged.cookies.set("librarian_session", forged_value)
    assert post(forged, f"/item/{first}", change="yes", pick="400-000").status_code == 400
    # A name posted in the form is not who decides.
    posted = post(mallory, f"/item/{review_ids(engine)[1]}", action="approve", reviewer="alice")
    assert posted.status_code == 303
    assert sorted(d["decided_by"] for d in decisions(engine)) == ["alice", "mallory"]


def test_only_a_registered_lead_changes_anyones_decision(engine: Engine) -> None:
    first = review_ids(engine)[0]
    alice = signed_in(engine, "alice")
    post(alice, f"/item/{first}", action="reject", rejection="NO_CRE_FITS")
    lena = signed_in(engine, "lena", lead=True)
    assert post(lena, f"/item/{first}", change="yes", action="approve").status_code == 303
    assert [(d["action"], d["decided_by"]) for d in decisions(engine)] == [("approve", "lena")]


def test_a_removed_reviewer_is_signed_out(engine: Engine) -> None:
    from librarian.store.reviewers import remove_reviewer

    alice = signed_in(engine, "alice")
    with Session(engine) as session, session.begin():
        assert remove_reviewer(session, "alice")
    assert post(alice, f"/item/{review_ids(engine)[0]}", action="approve").status_code == 400


def test_a_new_key_ends_the_old_one_and_keys_are_stored_hashed(engine: Engine) -> None:
    from sqlalchemy import select

    from librarian.store.tables import ReviewerRow

    old = register(engine, "alice")
    new = register(engine, "alice")
    web = client(engine, reviewer=None)
    said = web.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": old})
    assert "wrong+name+or+key" in said.headers["location"]
    said = web.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": new})
    assert "signed+in+as+alice" in said.headers["location"]
    with Session(engine) as session:
        stored = session.execute(select(ReviewerRow.secret_hash)).scalar_one()
    assert new not in stored and stored.startswith("scrypt$")


def test_a_sign_in_link_signs_in_and_leaves_no_key_in_the_address(engine: Engine) -> None:
    key = register(engine, "alice")
    web = client(engine, reviewer=None)
    opened = web.get("/signin", params={"name": "alice", "key": key})
    assert opened.status_code == 303 and key not in opened.headers["location"]
    assert post(web, f"/item/{review_ids(engine)[0]}", action="approve").status_code == 303


def test_a_session_cookie_is_signed_bound_to_its_key_and_expires() -> None:
    keys = {"alice": "cred-1", "bob": "cred-2"}
    value = session_value("alice", "cred-1", b"k", now=1000.0)
    assert session_name(value, b"k", keys.get, now=1001.0) == "alice"
    assert session_name(value, b"other", keys.get, now=1001.0) is None
    assert session_name(value, b"k", keys.get, now=1000.0 + 8 * 24 * 3600) is None
    tampered = value.replace(value.split(".")[0], "Ym9i")  # "bob"
    assert session_name(tampered, b"k", keys.get, now=1001.0) is None
    # The same name with another key issued since: the session is over.
    assert session_name(value, b"k", {"alice": "cred-3"}.get, now=1001.0) is None
    nobody: dict[str, str] = {}
    assert session_name(value, b"k", nobody.get, now=1001.0) is None


def session_holds(web: TestClient) -> bool:
    """Whether the browser `web` is still a signed-in reviewer's."""
    return "reviewing as" in web.get("/").text


def test_a_new_key_ends_every_session_opened_with_the_old_one(engine: Engine) -> None:
    """Issue 47, item 1 (severe): a browser signed in with a leaked key stayed signed in
    after `reviewers add alice` issued a new one."""
    signed_in_sessions_end_with_their_key(engine)


def signed_in_sessions_end_with_their_key(engine: Engine) -> None:
    """Re-keying, and removing then adding back, each end earlier sessions; a session
    opened with the current key holds. Shared with the PostgreSQL test."""
    from librarian.store.reviewers import remove_reviewer

    leaked = signed_in(engine, "alice")
    assert session_holds(leaked)
    new_key = register(engine, "alice")  # the remedy for a leaked key
    assert not session_holds(leaked)
    refused = post(leaked, f"/item/{review_ids(engine)[0]}", action="approve")
    assert refused.status_code == 400 and decisions(engine) == []
    fresh = client(engine, reviewer=None)
    said = fresh.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": new_key})
    assert "signed+in+as+alice" in said.headers["location"]
    assert session_holds(fresh)
    with Session(engine) as session, session.begin():
        assert remove_reviewer(session, "alice")
    register(engine, "alice")  # removed, then added back: no earlier session returns
    assert not session_holds(fresh)
    assert post(fresh, f"/item/{review_ids(engine)[0]}", action="approve").status_code == 400
    assert decisions(engine) == []


def test_reviewers_commands_and_one_person_mode_on_loopback_only(engine: Engine) -> None:
    from librarian.cli import app

    db = ["--db", str(engine.url)]
    added = CliRunner().invoke(app, ["review", "reviewers", "add", "lena", "--lead", *db])
    assert added.exit_code == 0 and "lena (lead) may sign in with the key" in added.output
    assert "/signin?name=lena&key=" in added.output
    listed = CliRunner().invoke(app, ["review", "reviewers", "list", *db])
    assert "lena (lead)" in listed.output
    exposed = CliRunner().invoke(
        app,
        ["review", "serve", "--host", "0.0.0.0", "--token", "t" * 20, "--reviewer", "ana", *db],
    )
    assert exposed.exit_code == 2 and "loopback only" in exposed.output
    removed = CliRunner().invoke(app, ["review", "reviewers", "remove", "lena", *db])
    assert removed.exit_code == 0
    again = CliRunner().invoke(app, ["review", "reviewers", "remove", "lena", *db])
    assert again.exit_code == 2
