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
from tests.seeded import (
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


def test_the_sign_in_address_carries_no_key_and_changes_nothing(engine: Engine) -> None:
    """Issue 47, items 4 and 5: `GET /signin?name=mallory&key=K` sent cross-site signed the
    victim's browser in as mallory, and the printed link put the key in shell and browser
    history. Now the address is a form with the name filled in; a key in it is ignored and
    nobody is signed in; only a same-origin POST (its CSRF token) signs in."""
    no_sign_in_by_address(engine)


def no_sign_in_by_address(engine: Engine) -> None:
    """Shared with the PostgreSQL test."""
    key = register(engine, "mallory")
    victim = client(engine, reviewer=None)
    opened = victim.get("/signin", params={"name": "mallory", "key": key})
    assert opened.status_code == 200 and "set-cookie" not in opened.headers
    assert 'id="key-ignored"' in opened.text and key not in opened.text
    assert 'value="mallory"' in opened.text and "reviewing as" not in opened.text
    assert post(victim, f"/item/{review_ids(engine)[0]}", action="approve").status_code == 400
    cross_site = victim.post("/signin", data={"name": "mallory", "key": key})
    assert cross_site.status_code == 403 and "set-cookie" not in cross_site.headers
    assert decisions(engine) == []


def test_signing_out_ends_the_session_on_the_server(engine: Engine) -> None:
    """Issue 47, item 2: no sign-out, and cookies lived 7 days."""
    alice = signed_in(engine, "alice")
    page = alice.get("/").text
    assert 'id="signout"' in page and 'action="/signout"' in page
    cookie = str(alice.cookies.get("librarian_session"))
    assert post(alice, "/signout", csrf="wrong").status_code == 403  # CSRF-checked
    said = post(alice, "/signout")
    assert said.status_code == 303 and "signed+out" in said.headers["location"]
    assert "reviewing as" not in alice.get("/").text
    replayed = client(engine, reviewer=None)  # the old cookie, kept by a thief
    replayed.cookies.set("librarian_session", cookie)
    assert "reviewing as" not in replayed.get("/").text
    assert post(replayed, f"/item/{review_ids(engine)[0]}", action="approve").status_code == 400
    # One-person mode (--reviewer) has no session to end, and shows no control.
    assert 'id="signout"' not in client(engine, reviewer="rita").get("/").text


def test_failed_sign_ins_are_limited_per_name_and_per_client(engine: Engine) -> None:
    """Issue 47, item 3: 16 clients guessing one name's key made every page wait on scrypt.
    Past FAILURES_PER_NAME wrong keys for a name, its sign-in is refused (429, with the
    wait) without checking any key, the right one included; another name still signs in."""
    sign_ins_are_throttled(engine)


def sign_ins_are_throttled(engine: Engine) -> None:
    """Shared with the PostgreSQL test."""
    from librarian.review.signin import FAILURES_PER_NAME

    key = register(engine, "alice")
    register(engine, "bob")
    web = client(engine, reviewer=None)
    for _ in range(FAILURES_PER_NAME):
        said = web.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": "guess"})
        assert "wrong+name+or+key" in said.headers["location"]
    blocked = web.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": key})
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) > 0
    assert "too many failed sign-ins for alice" in blocked.text
    assert "set-cookie" not in blocked.headers
    bob_key = register(engine, "bob")
    other = web.post("/signin", data={"csrf": "test-csrf", "name": "bob", "key": bob_key})
    assert "signed+in+as+bob" in other.headers["location"]


def test_the_throttle_forgets_old_failures_and_counts_clients() -> None:
    from librarian.review.signin import (
        FAILURES_PER_CLIENT,
        THROTTLE_SECONDS,
        Throttle,
    )

    throttle = Throttle()
    for n in range(FAILURES_PER_CLIENT):
        throttle.failed(f"name-{n}", "10.0.0.1", now=1000.0)
    assert throttle.wait("anyone", "10.0.0.1", now=1001.0) == THROTTLE_SECONDS
    assert throttle.wait("anyone", "10.0.0.2", now=1001.0) == 0
    assert throttle.wait("anyone", "10.0.0.1", now=1000.0 + THROTTLE_SECONDS) == 0


def test_a_status_line_cannot_be_forged_with_the_pages_csrf_token(engine: Engine) -> None:
    """Issue 47, item 6: status lines were signed with the CSRF token every page prints,
    even to anonymous visitors, so a link could show the workbench's own red line."""
    import hmac

    web = client(engine, reviewer=None)
    lure = "your key has expired: ask for a new one at http://evil.example/renew"
    sig = hmac.new(b"test-csrf", lure.encode(), "sha256").hexdigest()[:32]
    shown = web.get("/", params={"msg": lure, "kind": "error", "sig": sig})
    assert "evil.example" not in shown.text
    # A line the server did sign keeps its kind: turned into an error, it is not shown.
    key = register(engine, "ana")
    said = web.post("/signin", data={"csrf": "test-csrf", "name": "ana", "key": key})
    address = said.headers["location"]
    assert "signed in as ana" in web.get(address).text
    assert "signed in as ana" not in web.get(address.replace("kind=ok", "kind=error")).text


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
    assert "/signin?name=lena " in added.output and "key=" not in added.output
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


def test_one_person_mode_from_the_environment_is_said_at_start(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 47, item 18: LIBRARIAN_REVIEWER in the environment silently made the workbench
    one person's."""
    import uvicorn

    from librarian.cli import app

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)  # the server itself: not here
    db = ["--db", str(engine.url)]
    said = CliRunner().invoke(app, ["review", "serve", *db], env={"LIBRARIAN_REVIEWER": "rita"})
    assert said.exit_code == 0, said.output
    assert "one-person mode: every decision here is recorded as rita's" in said.output
    assert "LIBRARIAN_REVIEWER is set" in said.output
    named = CliRunner().invoke(app, ["review", "serve", "--reviewer", "rita", *db], env={})
    assert "one-person mode" not in named.output


def roles_come_from_the_store(engine: Engine) -> None:
    """Issue 47, item 7 on a store: a lead is proven by the store's role and the key."""
    from sqlalchemy.orm import Session as StoreSession

    from librarian.errors import UsageError
    from librarian.store.reviewers import proven

    lena = register(engine, "lena", lead=True)
    mallory = register(engine, "mallory")
    with StoreSession(engine) as session:
        assert proven(session, "lena", lena, True) == "lena"
        assert proven(session, "mallory", mallory, False) == "mallory"
        for name, key, lead, said in (
            ("mallory", mallory, True, "does not lead here"),
            ("lena", mallory, True, "not lena's key"),
            ("lena", None, True, "needs their key"),
            ("nobody", "x", False, "not a registered reviewer"),
        ):
            with pytest.raises(UsageError, match=said):
                proven(session, name, key, lead)


def test_signing_in_again_right_after_signing_out_opens_a_new_session(engine: Engine) -> None:
    """Found by the browser test: a sign-in in the same second as the sign-out made the
    same cookie, which the sign-out had ended."""
    key = register(engine, "alice")
    web = client(engine, reviewer=None)
    for _ in range(3):
        said = web.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": key})
        assert "signed+in+as+alice" in said.headers["location"]
        assert session_holds(web)
        assert post(web, "/signout").status_code == 303
        assert not session_holds(web)
