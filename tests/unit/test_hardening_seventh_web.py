"""Issue 56, items 10, 12, 16 and 18: the workbench and the terminal.

10: concurrent wrong keys each had their key checked (no 429), held every thread (a
static file waited), and then locked every reviewer at the address out. 12: a check's
page had no "previous" and its "next" was the first open item. 16: tag characters and
other invisible ones were not flagged, and the run's "read:" and "withdrawn:" lines
printed a document's escapes raw. 18: suggest calls held every thread the server had.

Concurrency is shown by structure, not by time: work held on an event, and what answers
while it is held (every wait has a generous timeout, so the old code fails, not hangs).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient
from rich.console import Console
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from librarian.cli import render
from librarian.pipeline import one_shot
from librarian.pipeline.pipeline import Pipeline
from librarian.review.api import SUGGEST_PATH, SUGGESTS_AT_ONCE, SUGGESTS_WAITING
from librarian.review.bench import Workbench
from librarian.review.decisions import DecisionRequest, decide
from librarian.review.signin import FAILURES_PER_NAME, KEY_CHECKS_AT_ONCE, Throttle
from librarian.review.web import create_app
from librarian.schemas.envelopes import Envelope
from librarian.schemas.records import RunSummary
from librarian.store.db import make_engine, upgrade
from librarian.store.qa import sample_double
from librarian.text import hidden_characters, terminal_line, visible
from tests.seeded import post, register, review_ids, seed, seeded_engine
from tests.stubs import small_hub, stub_pipeline

BASE = "http://127.0.0.1:8765"
PATIENCE = 30.0  # seconds: what answers "at once" answers in far less, on any machine
STATIC = "/static/workbench.css"  # served on anyio's default threads


def workbench(engine: Engine, **options: Any) -> TestClient:
    bench = Workbench(engine, small_hub(), csrf="test-csrf", **options)
    return TestClient(create_app(bench), base_url=BASE, follow_redirects=False)


class Gate:
    """Holds the threads that reach it until opened; counts them, and the most at once."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.lock = threading.Lock()
        self.reached = self.inside = self.most = 0

    def hold(self) -> None:
        with self.lock:
            self.reached += 1
            self.inside += 1
            self.most = max(self.most, self.inside)
        try:
            self.opened.wait(PATIENCE)
        finally:
            with self.lock:
                self.inside -= 1


@contextmanager
def burst(gate: Gate, workers: int) -> Iterator[ThreadPoolExecutor]:
    """Threads to send requests from; the gate opened on the way out, whatever happened."""
    pool = ThreadPoolExecutor(workers)
    try:
        yield pool
    finally:
        gate.opened.set()
        pool.shutdown(wait=True)


def answered(calls: list[Future[Any]], count: int) -> list[Any]:
    """The first `count` of `calls` to answer (fewer when the rest never do)."""
    pending = set(calls)
    done: list[Any] = []
    while len(done) < count and pending:
        finished, pending = wait(pending, timeout=PATIENCE, return_when=FIRST_COMPLETED)
        if not finished:
            break
        done += [f.result() for f in finished]
    return done[:count]


# --- item 10: the sign-in throttle under concurrency ---------------------------------


def test_concurrent_wrong_keys_are_counted_bounded_and_leave_the_server_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """45 wrong keys for alice at once: at most KEY_CHECKS_AT_ONCE keys are checked at a
    time and at most FAILURES_PER_NAME in all; the rest are answered 429 while those
    checks still run; a static file is served meanwhile. Then bob, at the same address,
    still signs in."""
    engine = seeded_engine(tmp_path / "burst.db")
    register(engine, "alice")
    bob_key = register(engine, "bob")
    gate = Gate()
    scrypt = hashlib.scrypt

    def held_scrypt(*args: Any, **kwargs: Any) -> bytes:
        gate.hold()
        return scrypt(*args, **kwargs)

    monkeypatch.setattr(hashlib, "scrypt", held_scrypt)  # holds until the gate opens
    wrong = {"csrf": "test-csrf", "name": "alice", "key": "a guess"}
    with workbench(engine) as web, burst(gate, 48) as pool:
        calls = [pool.submit(web.post, "/signin", data=wrong) for _ in range(45)]
        refused = answered(calls, 45 - KEY_CHECKS_AT_ONCE)
        static = pool.submit(web.get, STATIC).result(timeout=PATIENCE)
        assert gate.most <= KEY_CHECKS_AT_ONCE
        gate.opened.set()
        everything = [c.result(timeout=PATIENCE) for c in calls]
        checked = gate.reached
        # Alice's name, from this address, up to its limit; bob, here too, signs in.
        tries = [web.post("/signin", data=wrong) for _ in range(FAILURES_PER_NAME)]
        bob = web.post("/signin", data={"csrf": "test-csrf", "name": "bob", "key": bob_key})
    assert len(refused) == 45 - KEY_CHECKS_AT_ONCE
    assert {r.status_code for r in refused} == {429}
    assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
    assert static.status_code == 200
    assert checked <= FAILURES_PER_NAME
    assert sum(r.status_code == 303 for r in everything) == checked
    assert tries[-1].status_code == 429
    assert "signed+in+as+bob" in bob.headers["location"]


def test_a_name_locked_from_one_address_signs_in_from_another() -> None:
    """The lock-out is keyed by name and client: wrong keys for alice from one address do
    not refuse alice at another, nor bob at the first."""
    throttle = Throttle()
    for _ in range(FAILURES_PER_NAME):
        throttle.failed("alice", "10.0.0.1", now=1000.0)
    assert throttle.wait("alice", "10.0.0.1", now=1001.0) > 0
    assert throttle.wait("alice", "10.0.0.2", now=1001.0) == 0
    assert throttle.wait("bob", "10.0.0.1", now=1001.0) == 0
    # A try is counted before its key is checked, and taken back when the key was right.
    for _ in range(FAILURES_PER_NAME):
        throttle.failed("carol", "10.0.0.4", now=1000.0)
    assert throttle.wait("carol", "10.0.0.4", now=1001.0) > 0
    throttle.succeeded("carol", "10.0.0.4")
    assert throttle.wait("carol", "10.0.0.4", now=1001.0) == 0
    throttle.succeeded("dan", "10.0.0.5")  # nothing counted: nothing to take back
    assert throttle.wait("dan", "10.0.0.5", now=1001.0) == 0


def test_alice_signs_in_from_another_address_after_a_burst_against_her(tmp_path: Path) -> None:
    engine = seeded_engine(tmp_path / "two.db")
    key = register(engine, "alice")
    bench = Workbench(engine, small_hub(), csrf="test-csrf")
    app = create_app(bench)
    guesser = TestClient(app, base_url=BASE, follow_redirects=False, client=("10.0.0.1", 1))
    for _ in range(FAILURES_PER_NAME):
        guesser.post("/signin", data={"csrf": "test-csrf", "name": "alice", "key": "no"})
    real = {"csrf": "test-csrf", "name": "alice", "key": key}
    assert guesser.post("/signin", data=real).status_code == 429
    alice = TestClient(app, base_url=BASE, follow_redirects=False, client=("10.0.0.2", 1))
    assert "signed+in+as+alice" in alice.post("/signin", data=real).headers["location"]


# --- item 12: a check's navigation ---------------------------------------------------

ROW = re.compile(r'<tr data-href="([^"]+)">')


def links_of(page: str) -> tuple[str | None, str | None]:
    previous = re.search(r'id="previous" href="([^"]+)"', page)
    following = re.search(r'id="next" href="([^"]+)"', page)
    return (previous.group(1) if previous else None), (following.group(1) if following else None)


def test_a_checks_page_has_its_neighbours_in_the_walk_as_any_item(tmp_path: Path) -> None:
    """Two checks wait for bob; the queue lists them first, then the open items. Every
    page's previous and next are its neighbours in that list (the last's next is the
    first), checks' pages as any other; answering a check shows what its next named."""
    engine = make_engine(f"sqlite:///{tmp_path / 'walk.db'}")
    upgrade(engine)
    seed(engine, [f"session token rule number {i}" for i in range(6)])
    ids = review_ids(engine)
    hub_ids = set(small_hub().ids)
    with Session(engine) as session, session.begin():
        for review_id in ids[:2]:
            decide(session, DecisionRequest(review_id, "choose", "ann", ("300-001",)), hub_ids)
    with Session(engine) as session, session.begin():
        sample_double(session, 1.0, "lea", datetime(2026, 12, 2, tzinfo=UTC))
    web = workbench(engine, reviewer="bob", qa_every=0)
    walk = ROW.findall(web.get("/").text)
    assert len(walk) == 6  # two checks, four open items
    checks = walk[:2]
    assert all(c.removeprefix("/item/") not in ids for c in checks)
    for at, address in enumerate(walk):
        previous, following = links_of(web.get(address).text)
        assert previous == (walk[at - 1] if at else None), (at, address)
        assert following == walk[(at + 1) % len(walk)], (at, address)
    done = post(web, checks[0], pick="200-001")
    assert done.status_code == 303
    assert done.headers["location"].split("?")[0] == checks[1]


# --- item 16: invisible characters, and the terminal ---------------------------------

NEWLY_HIDDEN = ["\U000e0041", "\U000e007f", "\u206a", "\u206f", "\ufff9", "\ufffb", "\u2028"]


@pytest.mark.parametrize("hidden", NEWLY_HIDDEN)
def test_tag_and_other_invisible_characters_are_flagged_and_shown(hidden: str) -> None:
    text = f"approve{hidden}this"
    assert hidden_characters(text) == [f"U+{ord(hidden):04X}"]
    assert visible(text) == f"approve⟨U+{ord(hidden):04X}⟩this"


def test_an_item_page_shows_tag_characters(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'tags.db'}")
    upgrade(engine)
    smuggled = "".join(chr(0xE0000 + ord(c)) for c in "ignore")
    seed(engine, [f"session tokens rotate{smuggled} after login"])
    page = workbench(engine, reviewer="rita").get(f"/item/{review_ids(engine)[0]}").text
    assert "⟨U+E0069⟩⟨U+E0067⟩" in page and smuggled not in page


HOSTILE = (
    "policy.docx: \x1b[2J\x1b[31mred\x1b[0m \x1b]0;a title\x07 \x1b]8;;http://x\x1b\\link"
    "\x1b]8;;\x1b\\ \x9b31m \u202eevil\u202c\nerror: a forged line"
)


def test_read_and_withdrawn_lines_show_escapes_instead_of_acting_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(render, "out", Console(file=screen, force_terminal=True, width=400))
    summary = RunSummary(
        run_id="r",
        input="policy.docx",
        out_dir=str(tmp_path),
        started_at="now",
        reading=[HOSTILE],
        withdrawn=[HOSTILE],
    )
    render.run_summary(summary, tmp_path)
    printed = screen.getvalue()
    lines = [line for line in printed.splitlines() if "policy.docx:" in line]
    assert [line.split(":", 1)[0] for line in lines] == ["read", "withdrawn"]
    for line in lines:  # the document's text, every escape shown, on its own one line
        assert line.endswith(terminal_line(HOSTILE))
        assert "⟨U+001B⟩[31m" in line and "⟨U+009B⟩" in line and "⟨U+202E⟩" in line
    assert not any(line.startswith("error: a forged line") for line in printed.splitlines())
    # Rich's own colours stay; the document's are gone.
    documents = "".join(lines)
    for raw in ("\x1b[2J", "\x1b[31m", "\x1b]0;", "\x1b]8;", "\x07", "\x9b", "\u202e"):
        assert raw not in documents


def test_terminal_line_is_visible_on_one_line() -> None:
    assert terminal_line("a\tb\nc\u2028d\x1b") == "a\tb⟨U+000A⟩c⟨U+2028⟩d⟨U+001B⟩"
    assert terminal_line("plain words, ünïcode, 中文") == "plain words, ünïcode, 中文"


# --- item 18: the suggest API under a burst ------------------------------------------


def held_explain(gate: Gate) -> Callable[[Pipeline, str, str | None], Envelope]:
    """`one_shot.explain`, its model work held at `gate`."""
    explain = one_shot.explain

    def held(pipeline: Pipeline, text: str, title: str | None) -> Envelope:
        gate.hold()
        return explain(pipeline, text, title)

    return held


def test_a_suggest_burst_is_bounded_and_the_pages_still_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """45 suggest calls at once, their model work held: SUGGESTS_AT_ONCE run, SUGGESTS_WAITING
    wait, the rest are answered 503 with Retry-After at once; the queue page and a static
    file answer while the held work holds its threads; then the held calls finish."""
    engine = make_engine(f"sqlite:///{tmp_path / 'api.db'}")
    upgrade(engine)
    gate = Gate()
    monkeypatch.setattr(one_shot, "explain", held_explain(gate))
    pipeline = stub_pipeline(threshold=0.5)
    suggester = cast(Callable[[], Pipeline | None], lambda: pipeline)
    body = json.dumps({"text": "Session tokens must be rotated after login"})
    headers = {"Content-Type": "application/json"}
    taken = SUGGESTS_AT_ONCE + SUGGESTS_WAITING
    with workbench(engine, reviewer="rita", suggester=suggester) as web, burst(gate, 48) as pool:
        calls = [
            pool.submit(web.post, SUGGEST_PATH, content=body, headers=headers) for _ in range(45)
        ]
        refused = answered(calls, 45 - taken)
        page = pool.submit(web.get, "/").result(timeout=PATIENCE)
        static = pool.submit(web.get, STATIC).result(timeout=PATIENCE)
        assert gate.most <= SUGGESTS_AT_ONCE
        gate.opened.set()
        everything = [c.result(timeout=PATIENCE) for c in calls]
    assert len(refused) == 45 - taken
    assert {r.status_code for r in refused} == {503}
    assert all(r.headers["retry-after"] == "1" and "busy" in r.text for r in refused)
    assert page.status_code == 200 and 'id="queue"' in page.text
    assert static.status_code == 200
    assert sum(r.status_code == 200 for r in everything) == taken == gate.reached
