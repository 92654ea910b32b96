"""The workbench's pages and actions: the queue, an item, decide, bulk, undo and the hub
search; each renders a template or redirects with a signed message (sign-in and sign-out:
`web_signin.py`; reviewer QA: `web_qa.py`)."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import replace
from datetime import UTC, datetime, time
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from librarian.retrieval.hub_search import HubSearch
from librarian.review.bench import Workbench
from librarian.review.chart import evidence_chart
from librarian.review.decisions import DecisionRequest, change, decide
from librarian.review.forms import (
    BULK_LIMIT,
    BUSY,
    DESK_COOKIE,
    MAX_PAGE,
    PAGE_SIZE,
    REASONS,
    SORTS,
    decision_request,
    filter_of,
    int_of,
    queue_filter,
)
from librarian.review.guard import same_secret
from librarian.review.signin import SESSION_COOKIE, Identity, session_name
from librarian.review.urls import url
from librarian.review.web_qa import QaPages
from librarian.review.web_signin import SignInPages
from librarian.review.words import EXEMPLAR, flag_words, order_note, shared_words, word_diff
from librarian.schemas.human import HumanDecision, Ui
from librarian.schemas.records import source_key_of
from librarian.settings import MIN_SOURCE_DECISIONS
from librarian.store.human import (
    BULK,
    AlreadyDecided,
    ReviewError,
    agreement_by_reason,
    current_review_id,
    decided_since,
    open_row,
    reviewer_stats,
    standing_on,
    undo_last,
)
from librarian.store.progress import (
    band_after,
    decisions_seen,
    source_of_row,
    source_progress,
    standing,
)
from librarian.store.review import (
    ItemDetail,
    QueueFilter,
    Suggestion,
    item_detail,
    items_by_id,
    neighbour,
    queue_page,
)
from librarian.store.reviewers import credential, reviewers
from librarian.store.status import WITHDRAWN_STATUS
from librarian.text import counted, hidden_characters


class Pages:
    def __init__(self, bench: Workbench, templates: Jinja2Templates) -> None:
        self.bench = bench
        self.templates = templates
        self._finder: HubSearch | None = None
        self.hub_ids = set(bench.hub.ids)
        self.qa = QaPages(self)
        self.signin = SignInPages(self)

    def finder(self) -> HubSearch:
        if self._finder is None:
            build = self.bench.finder
            self._finder = build() if build else HubSearch(self.bench.hub, None, None)
        return self._finder

    def identity(self, request: Request) -> Identity | None:
        """Who is deciding, from the server: --reviewer's one person, or the reviewer this
        browser's signed session names, still registered (`review reviewers`)."""
        if self.bench.reviewer:
            return Identity(self.bench.reviewer, self.bench.reviewer in self.bench.leads)
        cookie = request.cookies.get(SESSION_COOKIE)
        name = session_name(cookie, self.bench.session_key, self.credential)
        if name is None or (cookie or "").rsplit(".", 1)[-1] in self.bench.ended_sessions:
            return None
        with Session(self.bench.engine) as session:
            lead = reviewers(session).get(name)
        if lead is None:
            return None
        return Identity(name, lead or name in self.bench.leads)

    def credential(self, name: str) -> str | None:
        """The fingerprint of `name`'s current key: a session opened with another fails."""
        with Session(self.bench.engine) as session:
            return credential(session, name)

    def reviewer_of(self, request: Request) -> str | None:
        who = self.identity(request)
        return who.name if who else None

    def is_lead(self, request: Request) -> bool:
        who = self.identity(request)
        return who is not None and who.lead

    def leads(self) -> list[str]:
        """Who may change anyone's decision and rule on QA: --lead names and the store's."""
        with Session(self.bench.engine) as session:
            registered = {n for n, lead in reviewers(session).items() if lead}
        return sorted(registered | set(self.bench.leads))

    def render(
        self, request: Request, name: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        reviewer = self.reviewer_of(request)
        today = datetime.combine(datetime.now(UTC).date(), time(), tzinfo=UTC)
        with Session(self.bench.engine) as session:
            done = decided_since(session, reviewer, today) if reviewer else 0
        base = {
            "reviewer": reviewer,
            "signed_in": reviewer is not None and not self.bench.reviewer,
            "decided_today": done,
            "csrf": self.bench.csrf,
            "message": self.message(request),
            "message_kind": "error" if request.query_params.get("kind") == "error" else "ok",
        }
        return self.templates.TemplateResponse(
            request, name, {**base, **context}, status_code=status
        )

    async def queue(self, request: Request) -> HTMLResponse:
        # What one is checking, blind, is no decided item of theirs to see.
        hidden = frozenset(self.qa.checking(self.reviewer_of(request)))
        flt = replace(queue_filter(request), hidden=hidden)
        page = min(MAX_PAGE, max(1, int_of(request.query_params.get("page"), 1)))
        with Session(self.bench.engine) as session:
            found = queue_page(session, flt, page, PAGE_SIZE)
            first_open = flt.status == "open" and page == 1
            checks = self.qa.queued(session, self.reviewer_of(request)) if first_open else []
            matching = self.matching(session, flt) if flt.status == "open" else []
            agreement = agreement_by_reason(session)
            sources = source_progress(session)
            reviewers = reviewer_stats(session)
        shown = ("page", "msg", "sig", "kind")
        params = {k: v for k, v in request.query_params.items() if k not in shown}

        def page_url(n: int) -> str:
            return url("queue") + "?" + urlencode({**params, "page": n})

        return self.render(
            request,
            "queue.html",
            page=found,
            flt=flt,
            agreement=agreement,
            sources=sources,
            reviewers=reviewers,
            filter_params=sorted(params.items()),
            bulk_limit=BULK_LIMIT,
            matching=" ".join(matching),
            matching_count=len(matching),
            reasons=REASONS,
            sorts=SORTS,
            page_url=page_url,
            checks=checks,
        )

    async def item(self, request: Request, review_id: str) -> Response:
        reviewer = self.reviewer_of(request)
        checking = self.qa.checking(reviewer)
        if review_id in checking:  # blind: a check, or an item one is checking
            return await self.qa.check(request, checking[review_id], review_id)
        with Session(self.bench.engine) as session:
            detail = item_detail(session, review_id)
            if detail is None and (now_id := current_review_id(session, review_id)):
                said = "newer models decided this item again: this is its address now"
                return self.redirect(url("item", now_id), said)  # a kept tab still works
            if detail is None:
                return self.problem(request, 404, "no such review item", review_id)
            around = self.surroundings(session, detail, reviewer, None)
        source = around["source"]
        standing = detail.decision
        may_change = (
            standing is not None
            and reviewer is not None
            and (reviewer == standing.decided_by or self.is_lead(request))
        )
        context = self.item_context(detail)
        if source is not None and source["threshold"] is not None:
            context["threshold"] = source["threshold"]  # the cut its source has now
        return self.render(
            request,
            "item.html",
            **context,
            may_change=may_change,
            editable=detail.item.status == "open" or may_change,
            **around,
        )

    def surroundings(
        self, session: Session, detail: ItemDetail, reviewer: str | None, check_id: int | None
    ) -> dict[str, Any]:
        """An item page's previous and next items, as `reviewer` walks the queue (`check_id`:
        the page is that check's), and its source's panel."""
        previous, following = self.qa.walk(session, reviewer, detail, check_id)
        return {
            "following": following,
            "previous": previous,
            "source": source_panel(session, detail, self.bench.rescored),
        }

    def item_context(self, detail: ItemDetail) -> dict[str, Any]:
        locator = detail.envelope.get("knowledge", {}).get("locator", {})
        return {
            "item": detail.item,
            "open": detail.item.status == "open",
            "heading_path": detail.heading_path,
            "locator": locator.get("path") or locator.get("url") or locator.get("id") or "",
            "diff": word_diff(detail.prior_text, detail.item.text) if detail.prior_text else None,
            "hidden": sorted(set(hidden_characters(detail.item.text))),
            "decision": detail.decision,
            "history": detail.history,
            "suggestions": [
                {
                    **self.described(s),
                    "shared": shared_words(detail.item.text, s, self.bench.hub),
                    "exemplar": self.exemplar(s.rationale),
                }
                for s in detail.item.suggestions
            ],
            "flag_words": flag_words(detail.item),
            "order_note": order_note(detail.item.suggestions),
            "threshold": detail.envelope.get("retrieval", {}).get("threshold"),
        }

    def exemplar(self, rationale: str | None) -> str | None:
        found = EXEMPLAR.search(rationale or "")
        if found is None or self.bench.exemplar_text is None:
            return None
        return self.bench.exemplar_text(found.group(1))

    def described(self, suggestion: Suggestion) -> dict[str, Any]:
        node = self.bench.hub.by_id.get(suggestion.cre_id)
        children = [n.name for n in self.bench.hub.nodes if node and n.parent_id == node.cre_id]
        return {
            "cre_id": suggestion.cre_id,
            "name": suggestion.name or (node.name if node else ""),
            "confidence": suggestion.confidence,
            "rationale": suggestion.rationale,
            "path": node.hierarchy_path if node else (),
            "children": children[:12],
            "related": [
                (r, self.bench.hub.by_id[r].name)
                for r in node.related_ids
                if r in self.bench.hub.by_id
            ]
            if node
            else [],
        }

    def refused(self, request: Request, form: Any) -> HTMLResponse | None:
        """A POST without this server's CSRF token is refused."""
        if same_secret(str(form.get("csrf", "")), self.bench.csrf):
            return None
        return self.problem(request, 403, "refused", "the form's CSRF token is missing or stale")

    def problem(self, request: Request, status: int, heading: str, detail: str) -> HTMLResponse:
        return self.render(
            request,
            "message.html",
            status=status,
            heading=heading,
            detail=detail,
            back=url("queue"),
        )

    async def signed_form(self, request: Request, who: str) -> tuple[Any, str] | Response:
        """A POST's form and its reviewer; the refusal instead when the CSRF token is
        missing or no reviewer is named (`who` is the question asked then)."""
        form = await request.form()
        if refused := self.refused(request, form):
            return refused
        reviewer = self.reviewer_of(request)
        if reviewer is None:
            why = "no decision without a reviewer: sign in at the top"
            return self.problem(request, 400, who, why)
        return form, reviewer

    def desk(self, request: Request) -> tuple[str, list[str]]:
        """This browser (its cookie, new if none) and the review ids it decided."""
        desk = request.cookies.get(DESK_COOKIE) or secrets.token_urlsafe(16)
        return desk, self.bench.decided_here.setdefault(desk, [])

    async def decide(self, request: Request, review_id: str) -> Response:
        checking = self.qa.checking(self.reviewer_of(request))
        if review_id in checking:
            return await self.qa.answer(request, checking[review_id])
        return await self.decide_item(request, review_id)

    async def decide_item(self, request: Request, review_id: str) -> Response:
        signed = await self.signed_form(request, "who is deciding?")
        if isinstance(signed, Response):
            return signed
        form, reviewer = signed
        asked = decision_request(review_id, reviewer, form)
        changing = form.get("change") == "yes"
        try:
            with Session(self.bench.engine) as session, session.begin():
                moved = rescored_under(session, asked, form.get("shown_first"))
                if moved is not None:  # nothing recorded: the reviewer sees what is new
                    return self.redirect(url("item", review_id), moved, "error")
                if changing:
                    leads = {reviewer} if self.is_lead(request) else set()
                    decision = change(session, asked, self.hub_ids, leads)
                else:
                    decision = decide(session, asked, self.hub_ids)
                detail = item_detail(session, review_id)
                assert detail is not None
                moment, row = detail.item.created_at, detail.item.row_id
                following = neighbour(session, moment, row, later=True, open_only=True)
                band = band_after(session, row)
                calibrated = self.calibration_point(session, row)
        except AlreadyDecided as exc:
            return self.problem(request, 409, "already decided", str(exc))
        except ReviewError as exc:
            return self.problem(request, 400, "not recorded", str(exc))
        except OperationalError:  # another writer holds the database's lock
            return self.problem(request, 503, "busy, try again", BUSY)
        desk, mine = self.desk(request)
        mine.append(review_id)
        target = url("item", following) if following else url("queue")
        said = self.recorded(detail, decision) + (f"; this source: {band}" if band else "")
        if calibrated is not None:
            self.bench.rescore(calibrated)
            said += (
                f"; it has {MIN_SOURCE_DECISIONS} decisions now: its open items are being "
                "decided again with its own calibration"
            )
        if changing:  # back to the item: its history shows the change
            target, said = url("item", review_id), "changed: " + said
        elif (check := self.qa.next_check(reviewer, len(mine))) is not None:
            target = url("item", check)
        response = self.redirect(target, said)
        response.set_cookie(DESK_COOKIE, desk, httponly=True, samesite="strict")
        return response

    async def bulk(self, request: Request) -> Response:
        """Approve the first suggestion of the selected items, or of every open item the
        page's filter matches (at most BULK_LIMIT): one HumanDecision each, `keybind_used`
        "bulk". First it shows how many and a sample, and asks (`confirmed`); then it
        approves exactly the items it showed. An item decided meanwhile, or without a
        suggestion, is left and counted."""
        signed = await self.signed_form(request, "who is deciding?")
        if isinstance(signed, Response):
            return signed
        form, reviewer = signed
        try:
            with Session(self.bench.engine) as session:
                ids, unseen = self.bulk_targets(session, form)
                if form.get("confirmed") != "yes":
                    found = items_by_id(session, ids)
                    items = [i for i in found if i.status == "open" and i.suggestions]
                    return self.render(request, "bulk.html", items=items, unseen=unseen)
        except OperationalError:
            return self.problem(request, 503, "busy, try again", BUSY)
        desk, mine = self.desk(request)
        approved, left, busy = self.approve_all(ids, reviewer, mine)
        message = f"approved the first suggestion of {counted(approved, 'item')}"
        message += f"; {left} left as they were (decided or changed since shown)" if left else ""
        if unseen:
            message += f"; {unseen} that arrived after the page was shown were not approved"
        if busy:
            message += f"; the database became busy: {busy} not tried, try again"
        response = self.redirect(url("queue"), message, "error" if busy else "ok")
        response.set_cookie(DESK_COOKIE, desk, httponly=True, samesite="strict")
        return response

    def approve_all(self, ids: list[str], reviewer: str, mine: list[str]) -> tuple[int, int, int]:
        """Approve each item's first suggestion, one transaction each: (approved, left as
        they were, not tried). The first lock timeout stops the rest: one wait, not one an
        item."""
        approved = left = 0
        for n, review_id in enumerate(ids):
            asked = DecisionRequest(review_id, "approve", reviewer, ui=Ui(keybind_used=BULK))
            try:
                with Session(self.bench.engine) as session, session.begin():
                    decide(session, asked, self.hub_ids)
                mine.append(review_id)
                approved += 1
            except (AlreadyDecided, ReviewError):
                left += 1
            except OperationalError:
                return approved, left, len(ids) - n
        return approved, left, 0

    def calibration_point(self, session: Session, row_id: int) -> str | None:
        """The source of `row_id` when this decision brought it to a calibration point
        (MIN_SOURCE_DECISIONS decisions, and each MIN_SOURCE_DECISIONS after): its
        open items are then re-scored without a retrain; else None."""
        source = source_of_row(session, row_id)
        if self.bench.relinker is None or source is None:
            return None
        seen = decisions_seen(session, source)
        return source if seen and seen % MIN_SOURCE_DECISIONS == 0 else None

    def bulk_targets(self, session: Session, form: Any) -> tuple[list[str], int]:
        """The items to approve, and how many now match the filter that the page did not
        show. Only what the page showed is approved: the selected rows, or the items the
        filter matched when the page was drawn (their review ids came with the form; one
        re-decided since has a new id, and is left)."""
        if form.get("scope") != "filtered":
            return [str(r) for r in form.getlist("review_ids")][:BULK_LIMIT], 0
        shown = str(form.get("matching", "")).split()[:BULK_LIMIT]
        params = {str(k)[2:]: str(v) for k, v in form.items() if str(k).startswith("f_")}
        now = set(self.matching(session, filter_of(params)))
        return [r for r in shown if r in now], len(now - set(shown))

    def matching(self, session: Session, flt: QueueFilter) -> list[str]:
        """The open items `flt` matches that a bulk approval may take (at most BULK_LIMIT)."""
        found = queue_page(session, replace(flt, status="open"), 1, BULK_LIMIT)
        return [item.review_id for item in found.items if item.suggestions]

    async def undo(self, request: Request) -> Response:
        signed = await self.signed_form(request, "who is undoing?")
        if isinstance(signed, Response):
            return signed
        _, reviewer = signed
        mine = self.bench.decided_here.get(request.cookies.get(DESK_COOKIE) or "", [])
        try:
            with Session(self.bench.engine) as session, session.begin():
                review_id = undo_last(session, reviewer, among=mine)
        except OperationalError:
            return self.problem(request, 503, "busy, try again", BUSY)
        except ReviewError as exc:  # changed or undone meanwhile: nothing was undone
            return self.redirect(url("queue"), str(exc), "error")
        if review_id is None:
            return self.redirect(url("queue"), "nothing decided in this browser to undo", "error")
        mine.remove(review_id)
        with Session(self.bench.engine) as session:
            undone = items_by_id(session, [review_id])
            stands = standing_on(session, review_id)
        what = f"“{undone[0].label}”" if undone else "the item"
        if stands is None and undone and undone[0].section_status == WITHDRAWN_STATUS:
            # Its section left its document: undo returns it to withdrawn, not to the queue.
            said = f"undone: {what} is withdrawn again (its section left its document)"
            return self.redirect(url("item", review_id), said)
        if stands is None:
            return self.redirect(url("item", review_id), f"undone: {what} is open again")
        earlier = f"{stands.decided_by}'s earlier {stands.action}"
        cres = f" ({stands.final_cre_ids})" if stands.final_cre_ids else ""
        said = f"undone: on {what}, {earlier}{cres} stands again"
        return self.redirect(url("item", review_id), said)

    def recorded(self, detail: ItemDetail, decision: HumanDecision) -> str:
        """The status line after a decision: which section (its own id and title, not a
        chapter five rules share), what, which CREs by name."""
        label = detail.item.label
        heading = detail.heading_path[-1] if detail.heading_path else ""
        # A document's row ("policy.docx § SEC-03 — Passwords") names the rule; else its
        # heading; else its text.
        what = label if " § " in label else heading or label or detail.item.text
        what = " ".join(what.split())
        what = what if len(what) <= 60 else what[:59] + "…"
        cres = "; ".join(
            f"{c} {self.bench.hub.by_id[c].name}" if c in self.bench.hub.by_id else c
            for c in decision.cre_ids
        )
        return f"recorded {decision.action} of “{what}”" + (f": {cres}" if cres else "")

    def redirect(self, target: str, message: str | None, kind: str = "ok") -> RedirectResponse:
        """See `target`, with a status line this server signed."""
        if message:
            signature = self.signature(message, kind)
            signed = urlencode({"msg": message, "kind": kind, "sig": signature})
            target += ("&" if "?" in target else "?") + signed
        return RedirectResponse(target, status_code=303)

    def signature(self, message: str, kind: str) -> str:
        """Signed with the server's session key, which no page prints (the CSRF token is
        on every page, an anonymous visitor's too), over the line and its kind."""
        text = f"{kind}\n{message}".encode("utf-8", "replace")
        return hmac.new(self.bench.session_key, text, "sha256").hexdigest()[:32]

    def message(self, request: Request) -> str | None:
        """The status line, when this server wrote it; a link's own `?msg=` is not shown."""
        shown = request.query_params.get("msg")
        kind = request.query_params.get("kind", "ok")
        offered = request.query_params.get("sig", "")
        if shown is None or not same_secret(offered, self.signature(shown, kind)):
            return None
        return shown

    async def search(self, request: Request) -> JSONResponse:
        hits = self.finder().search(request.query_params.get("q", "")[:500])
        return JSONResponse([{"cre_id": h.cre_id, "name": h.name, "path": h.path} for h in hits])


def rescored_under(session: Session, asked: DecisionRequest, shown: object) -> str | None:
    """Why an "accept first" must not be recorded: the item was decided again (re-scored)
    after its page was shown, and its first suggestion is no longer the one shown; None
    when it is (the decision is kept), or the decision names its CREs itself."""
    if asked.action != "approve" or not isinstance(shown, str):
        return None
    try:
        row = open_row(session, asked.review_id)
    except ReviewError:
        return None  # decided meanwhile: `decide` says so
    links = (row.envelope or {}).get("suggested_links") or []
    now = str(links[0].get("cre_id")) if links else ""
    if now == shown:
        return None
    return (
        f"nothing recorded: this item was decided again while you were on it, and its first "
        f"suggestion is now {now or 'none'} (the page showed {shown or 'none'}): decide again"
    )


def _calibrating(seen: int) -> str | None:
    """The state of a source that has no cut to certify yet."""
    needed = MIN_SOURCE_DECISIONS - seen
    if needed <= 0:
        return None
    return f"{seen} decided, {needed} more before it calibrates on its own decisions"


def source_panel(
    session: Session, detail: ItemDetail, rescored: dict[str, str]
) -> dict[str, Any] | None:
    """Where the item's source stands: as it was linked when the item was decided, how
    many of its items people have decided now, and how many more it needs before its own
    calibration and threshold apply."""
    envelope = detail.envelope
    knowledge = envelope.get("knowledge", {})
    source, locator = knowledge.get("source", {}), knowledge.get("locator", {})
    if "type" not in source:
        return None
    where = source.get("url") or locator.get("url")
    key = source_key_of(source["type"], source.get("repo"), where, envelope.get("artifact_id"))
    now = standing(session, key)
    plan, evidence, stored, seen = now.plan, now.evidence, now.stored, now.decisions
    band = plan.at if plan is not None and plan.more else None
    # The decided items as the cut reads them (its evidence): none drawn without it.
    decided = list(zip(evidence.reviewed, evidence.correct, strict=True)) if evidence else []
    return {
        "chart": evidence_chart(decided, stored.threshold if stored else None, band),
        "key": key,
        "cut": now.cut or None,
        "threshold": stored.threshold if stored is not None else None,
        "linked": detail.item.linked_as,
        "decisions": seen,
        "needed": max(0, MIN_SOURCE_DECISIONS - seen),
        "rescored": rescored.get(key),
        "glance": plan.glance() if plan is not None else _calibrating(seen),
    }
