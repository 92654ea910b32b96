"""The workbench in a real browser: Debian's chromium driven by Playwright, against the
real server (uvicorn) over a store filled by the real linker (packaged MiniLM, OpenCRE hub)
from the packaged sample queue. A reviewer signs in, then decides with the keyboard
and the mouse: accept, choose via search, reject with a note, undo, tick two suggestions,
change an earlier decision, approve two in bulk after confirming, and reads the decided
list's reasons.

The screenshots in docs/ are this test's: `LIBRARIAN_SCREENSHOTS=docs pytest
tests/integration/test_workbench_browser.py` writes them again."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import uvicorn
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from librarian.catalogue.hub import load_hub
from librarian.factory import build_pipeline
from librarian.paths import DEFAULT_HUB, packaged_data
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import parse_line
from librarian.retrieval.hub_search import open_hub_search
from librarian.review.bench import Workbench
from librarian.review.signin import SESSION_COOKIE, session_value
from librarian.review.web import create_app
from librarian.schemas.records import Section
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, write
from librarian.store.human import standing_decisions
from tests.rfc import assert_rfc_valid_decisions
from tests.seeded import register

pytestmark = pytest.mark.integration

CHROMIUM = os.environ.get("LIBRARIAN_CHROMIUM", "/usr/bin/chromium")


def seeded_store(path: Path, cache: Path) -> Engine:
    """The packaged sample queue decided by the real linker, uncalibrated: all to review."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    lines = packaged_data("samples", "queue_sample.jsonl").read_bytes().splitlines()
    parsed = [parse_line(n, raw) for n, raw in enumerate(lines[:12], start=1)]
    sections = [s for s in parsed if isinstance(s, Section)]
    linker = build_pipeline(LinkerSettings(uncalibrated=True, cache_dir=cache, threshold=1.0))
    result = one_shot.link(linker, sections, "browser-run")
    with Session(engine) as session:
        write(session, StoredBatch.linked("browser-run", result, sections, "sample"))
        session.commit()
    return engine


def moved_item(engine: Engine) -> tuple[str, str]:
    """An open item given a new review id, its old one kept as an alias (as `relink` does
    when newer models decide it again), and a cut stored for its source by that relink."""
    from datetime import UTC, datetime

    from sqlalchemy import select

    from librarian.store.policies import record_cuts
    from librarian.store.tables import DecisionRow, ReviewAliasRow

    with Session(engine) as session, session.begin():
        row = session.execute(
            select(DecisionRow).where(DecisionRow.consumed_at.is_(None)).limit(1)
        ).scalar_one()
        old, new = str(row.review_id), "rev-" + "e" * 20
        session.add(
            ReviewAliasRow(review_id=old, decision_row_id=row.id, created_at=datetime.now(UTC))
        )
        row.review_id = new
        status = {"threshold": 0.812, "says": "certified by 10 reviewed items", "decisions": 10}
        record_cuts(session, "relink-b", {str(row.source_key): status})
    return old, new


def csrf(page: Any) -> str:
    """The CSRF token the page carries (every form posts it)."""
    return str(page.locator("body").get_attribute("data-csrf"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    engine = seeded_store(tmp_path / "review.db", tmp_path / "cache")
    hub = load_hub(DEFAULT_HUB)
    finder = partial(open_hub_search, hub, None, tmp_path / "cache")  # the real MiniLM
    app = create_app(Workbench(engine, hub, finder=finder))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the workbench did not start"
    try:
        yield f"http://127.0.0.1:{port}", engine
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        engine.dispose()


def test_a_reviewer_clears_items_with_keyboard_and_mouse(
    served: tuple[str, Engine], tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    base, engine = served
    keys = {"bianca": register(engine, "bianca"), "lena": register(engine, "lena", lead=True)}
    shots = Path(os.environ.get("LIBRARIAN_SCREENSHOTS", tmp_path))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(base + "/")
        # Issue 38, defect 1: reviewers sign in; a name alone is nobody.
        page.fill("#reviewer-name", "bianca")
        page.fill("#reviewer-key", "a guess")
        page.click("#signin button")
        expect(page.locator(".message")).to_contain_text("wrong name or key")
        page.fill("#reviewer-name", "bianca")
        page.fill("#reviewer-key", keys["bianca"])
        page.click("#signin button")
        expect(page.locator("header")).to_contain_text("reviewing as bianca")
        expect(page.locator("h1")).to_contain_text("12 open items")
        # each source's progress towards its own calibration, and where to start
        expect(page.locator("#sources")).to_contain_text("decisions before each calibrates")
        expect(page.locator("#sources a.id").first).to_be_visible()
        page.screenshot(path=str(shots / "workbench-queue.png"), full_page=False)

        page.keyboard.press("j")  # the first row, then open it
        page.keyboard.press("Enter")
        page.wait_for_url("**/item/**")
        first = page.url
        page.screenshot(path=str(shots / "workbench-item.png"), full_page=True)
        page.keyboard.press("a")  # accept the first suggestion
        page.wait_for_url(lambda u: u != first and "/item/" in u)

        second = page.url.split("?")[0]
        listed = page.locator("table.suggestions a.id")
        first_suggested = listed.first.text_content() if listed.count() else None
        page.keyboard.press("/")
        page.keyboard.type("DoS")  # by meaning: no CRE is named "DoS"
        # Issue 48, item 5: Enter pressed before the hits were in ticked nothing. It ticks
        # the first hit of what was typed, when it comes.
        page.keyboard.press("Enter")
        page.wait_for_selector("#results input:checked")
        expect(page.locator("#results li").first).to_contain_text("Denial Of Service protection")
        chosen = page.locator("#results input:checked").first.get_attribute("value")
        assert chosen == "623-550"
        page.click("#choose")  # the mouse
        page.wait_for_url(lambda u: not u.startswith(second))

        third = page.url.split("?")[0]
        page.click("#note")
        page.keyboard.type("a changelog entry, not a requirement")
        page.keyboard.press("Escape")
        page.select_option("select[name=rejection]", "NOT_SECURITY_KNOWLEDGE")
        page.keyboard.press("r")
        page.wait_for_url(lambda u: not u.startswith(third))
        page.keyboard.press("u")  # take the reject back
        page.wait_for_url(lambda u: u.startswith(third))
        expect(page.locator(".message")).to_contain_text("is open again")
        expect(page.locator("#approve")).to_be_visible()
        ticked = [page.locator(f"#tick-{n}").get_attribute("value") for n in (1, 2)]
        page.check("#tick-1")  # a section that maps to two CREs: tick both suggestions
        page.check("#tick-2")
        page.click("#choose")
        page.wait_for_url(lambda u: not u.startswith(third))

        page.goto(first)  # change the first decision: bianca made it, so she may
        expect(page.locator("#changing")).to_contain_text("You may change this decision")
        page.fill("#note", "too broad for any one CRE")
        page.select_option("select[name=rejection]", "NO_CRE_FITS")
        page.click("#reject")
        expect(page.locator(".message")).to_contain_text("changed: recorded reject")
        expect(page.locator("#history li")).to_have_count(2)
        expect(page.locator("#history")).to_contain_text("changed later")
        expect(page.locator("#history")).to_contain_text("too broad for any one CRE")
        page.goto(base + "/")
        expect(page.locator("header")).to_contain_text("3 decided today")
        boxes = page.locator("#queue input[name=review_ids]")  # bulk: two rows, one click
        boxes.nth(0).check()
        boxes.nth(1).check()
        page.click("#bulk-selected")  # it asks first, showing what each will be linked to
        expect(page.locator("h1")).to_contain_text("Approve the first suggestion of 2 items?")
        expect(page.locator("#bulk-sample tbody tr")).to_have_count(2)
        page.click("#bulk-confirm")
        expect(page.locator(".message")).to_contain_text("approved the first suggestion of 2")
        page.goto(base + "/?status=decided")  # the decided list: action, CREs, why, who
        expect(page.locator("#queue")).to_contain_text("by bianca")
        expect(page.locator("#queue")).to_contain_text("why: NO_CRE_FITS: too broad")
        expect(page.locator("#queue b.action")).to_have_count(5)
        # Acting as lena, the lead, with a session cookie this server did not sign: nobody
        # is signed in, and changing bianca's decision is refused.
        forged = session_value("lena", "a credential", b"a key of our own")
        page.context.add_cookies([{"name": SESSION_COOKIE, "value": forged, "url": base}])
        page.goto(first)
        expect(page.locator("#signin")).to_be_visible()
        expect(page.locator("#changing")).to_have_count(0)
        refused = page.request.post(
            first, form={"csrf": csrf(page), "change": "yes", "action": "approve"}
        )
        assert refused.status == 400 and "sign in" in refused.text()
        page.context.clear_cookies()
        # Issue 47, items 4 and 5: the printed address is a form with the name filled in;
        # the key is typed, never carried in an address.
        page.goto(base + "/signin?" + urlencode({"name": "bianca"}))
        expect(page.locator("#signin-page input[name=name]")).to_have_value("bianca")
        page.fill("#signin-page input[name=key]", keys["bianca"])
        page.click("#signin-page button")
        expect(page.locator("header")).to_contain_text("reviewing as bianca")
        # Issue 47, item 2: signing out ends the session.
        page.click("#signout button")
        expect(page.locator(".message")).to_contain_text("signed out")
        expect(page.locator("#signin")).to_be_visible()
        page.goto(base + "/signin?" + urlencode({"name": "bianca"}))
        page.fill("#signin-page input[name=key]", keys["bianca"])
        page.click("#signin-page button")
        expect(page.locator("header")).to_contain_text("reviewing as bianca")
        page.goto(base + "/qa")  # issue 29, item 10: reviewer QA, nothing checked yet
        expect(page.locator("#qa-figures")).to_be_visible()
        expect(page.locator("#disagreements")).to_contain_text("(0)")
        # Issue 30, item 7: the API's docs, Swagger UI served by the workbench under its
        # own CSP (no CDN, no inline script), renders the suggest operation.
        page.goto(base + "/docs")
        expect(page.locator(".swagger-ui")).to_contain_text("/api/v1/suggest")
        page.screenshot(path=str(shots / "workbench-api-docs.png"), full_page=False)
        # Issue 41, items 3 and 1: an open item newer models decided again keeps its old
        # address (a tab, a bookmark); its page says the cut its source has now.
        old, new = moved_item(engine)
        page.goto(f"{base}/item/{old}")
        page.wait_for_url(f"**/item/{new}**")
        expect(page.locator(".message")).to_contain_text("newer models decided this item again")
        expect(page.locator("#cut")).to_contain_text("cut 0.812 (run relink-b)")
        # Issue 58, item 6: the source's state in a line above the text; its evidence, a
        # chart with an axis and a legend, folded below it.
        expect(page.locator("#glance")).to_contain_text("this source:")
        page.click("#source summary")
        expect(page.locator("#evidence-chart")).to_be_visible()
        page.screenshot(path=str(shots / "workbench-item-source.png"), full_page=True)
        browser.close()
    assert errors == []
    with Session(engine) as session:
        decisions = standing_decisions(session)
    # Choosing exactly the first suggestion is an approve; any other CRE, a correction.
    second_action = "approve" if chosen == first_suggested else "correct"
    assert [(d.action, d.decided_by) for d in decisions] == [
        (second_action, "bianca"),
        ("correct", "bianca"),  # the two ticked suggestions
        ("reject", "bianca"),  # the first item's accept, changed
        ("approve", "bianca"),
        ("approve", "bianca"),
    ]
    assert [d.ui.keybind_used for d in decisions[3:] if d.ui] == ["bulk", "bulk"]
    assert decisions[0].cre_ids == (chosen,)
    assert list(decisions[1].cre_ids) == ticked
    assert_rfc_valid_decisions([d.model_dump(mode="json", exclude_none=True) for d in decisions])
    assert (shots / "workbench-queue.png").stat().st_size > 10_000
