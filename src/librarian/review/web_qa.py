"""The workbench's reviewer QA: a check item is answered blind, on the item page as any
open item (no first decision, no history, nothing that says it is a check), mixed into a
reviewer's items (one after every `Workbench.qa_every` decisions, when one waits for
them); `/qa` shows the agreement figures and the disagreements a lead rules on.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from librarian.review.bench import Workbench
from librarian.review.forms import BUSY, decision_request
from librarian.review.qa import adjudicate, answer_check, qa_report
from librarian.review.urls import url
from librarian.store.human import ReviewError
from librarian.store.qa import check_for, checks_waiting, pending_check
from librarian.store.review import (
    ItemDetail,
    OpenItem,
    QueueFilter,
    item_detail,
    items_by_id,
    neighbour,
    queue_page,
)
from librarian.store.status import NEEDS_REVIEW

T = TypeVar("T")


class NotALead(ReviewError):
    """A ruling asked by a reviewer who is no lead (403)."""


# A check's item page: answerable, nothing to change; its neighbours and its source's
# panel as any open item's (a page without them told a reviewer it was a check).
BLIND_PAGE: dict[str, Any] = {"may_change": False, "editable": True}
# The words a reviewer sees after answering a check: those after any decision.
ANSWERED = "recorded"


class ItemPages(Protocol):
    """What the QA pages use of the workbench's pages (`pages.Pages`)."""

    bench: Workbench
    hub_ids: set[str]

    def reviewer_of(self, request: Request) -> str | None: ...

    def is_lead(self, request: Request) -> bool: ...

    def leads(self) -> list[str]: ...

    def item_context(self, detail: ItemDetail) -> dict[str, Any]: ...

    def surroundings(
        self, session: Session, detail: ItemDetail, reviewer: str | None, check_id: int | None
    ) -> dict[str, Any]: ...

    def render(
        self, request: Request, name: str, status: int = 200, **context: Any
    ) -> HTMLResponse: ...

    def problem(self, request: Request, status: int, heading: str, detail: str) -> HTMLResponse: ...

    def redirect(self, target: str, message: str | None, kind: str = "ok") -> RedirectResponse: ...

    async def signed_form(self, request: Request, who: str) -> tuple[Any, str] | Response: ...


class QaPages:
    def __init__(self, pages: ItemPages) -> None:
        self.pages = pages

    def next_check(self, reviewer: str, decided_here: int) -> str | None:
        """The address of the check to show after a reviewer's decision, when it is its
        turn: an opaque one, shaped as any item's (`address`)."""
        every = self.pages.bench.qa_every
        if every <= 0 or decided_here % every:
            return None
        with Session(self.pages.bench.engine) as session:
            check = pending_check(session, reviewer)
            return self.address(check.id) if check else None

    def address(self, check_id: int) -> str:
        """A check's address: "rev-" and 20 hex digits, as a review id is, signed with the
        server's key. It names nothing that leads to the item, and does not say it is a
        check."""
        key = self.pages.bench.session_key
        mac = hmac.new(key, f"check {check_id}".encode(), hashlib.sha256).hexdigest()
        return "rev-" + mac[:20]

    def queued(self, session: Session, reviewer: str | None) -> list[OpenItem]:
        """The checks waiting for `reviewer`, as the queue lists an open item: at their
        opaque addresses, open, with no decision (a check absent from the queue told a
        reviewer that the page they reached after a decision was one)."""
        if reviewer is None:
            return []
        waiting = checks_waiting(session, reviewer)
        found = {i.review_id: i for i in items_by_id(session, [c.review_id for c in waiting])}
        return [
            replace(
                found[check.review_id],
                review_id=self.address(check.id),
                status="open",
                section_status=NEEDS_REVIEW,
                linked_as=None,
            )
            for check in waiting
            if check.review_id in found
        ]

    def walk(
        self, session: Session, reviewer: str | None, detail: ItemDetail, check_id: int | None
    ) -> tuple[str | None, str | None]:
        """An item page's previous and next, in the order a reviewer walks the queue: the
        checks waiting for them first (as the queue lists them), then the open items oldest
        first, the first again after the last (never the page itself). A check's page
        (`check_id`) has its own place in it, as every item has: a check is some page's
        neighbour and has neighbours of its own, so its links do not tell it apart."""
        if check_id is not None:
            return self.check_walk(session, reviewer, check_id)
        moment, row = detail.item.created_at, detail.item.row_id
        before = neighbour(session, moment, row, later=False)
        after = neighbour(session, moment, row, later=True)
        checks = [item.review_id for item in self.queued(session, reviewer)]
        if not checks:
            return before, after
        # `neighbour` goes back to the first open item after the last: the walk, to its start.
        wrapped = after is None or (after == first_open(session) and before is not None)
        return before or checks[-1], checks[0] if wrapped else after

    def check_walk(
        self, session: Session, reviewer: str | None, check_id: int
    ) -> tuple[str | None, str | None]:
        """A check's previous and next in `walk`'s order."""
        checks = [item.review_id for item in self.queued(session, reviewer)]
        first = first_open(session)
        here = self.address(check_id)
        if here not in checks:  # past what the queue lists: the open items' first
            return None, first
        at = checks.index(here)
        after = [*checks[at + 1 :], *([first] if first else []), *checks[:at]]
        return (checks[at - 1] if at else None), next(iter(after), None)

    def checking(self, reviewer: str | None) -> dict[str, int]:
        """The checks waiting for `reviewer`, by every address they answer to: its opaque
        one, and the item's own (an item one is checking is shown blind there too)."""
        if reviewer is None:
            return {}
        with Session(self.pages.bench.engine) as session:
            waiting = checks_waiting(session, reviewer)
        found = {check.review_id: check.id for check in waiting}
        found.update({self.address(check.id): check.id for check in waiting})
        return found

    async def check(self, request: Request, check_id: int, address: str) -> HTMLResponse:
        pages = self.pages
        reviewer = pages.reviewer_of(request)
        if reviewer is None:
            return pages.problem(request, 400, "who is reviewing?", "sign in at the top")
        with Session(pages.bench.engine) as session:
            try:
                found = check_for(session, check_id, reviewer)
            except ReviewError as exc:
                return pages.problem(request, 404, "no such item", str(exc))
            detail = item_detail(session, found.review_id)
            if detail is None:
                return pages.problem(request, 404, "no such item", address)
            surroundings = pages.surroundings(session, detail, reviewer, check_id)
        context = pages.item_context(detail)
        # Blind: what was decided, by whom and when is not shown, nor that this is a check.
        context.update(decision=None, history=(), diff=None, open=True, check_blind=True)
        return pages.render(
            request,
            "item.html",
            **context,
            action=url("item", address),
            shown_id=address,
            **BLIND_PAGE,
            **surroundings,
        )

    async def answer(self, request: Request, check_id: int) -> Response:
        """Records a check's answer, then shows what its page's "next" named, as after any
        decision."""

        def work(session: Session, form: Any, reviewer: str) -> str | None:
            check = check_for(session, check_id, reviewer)
            _, following = self.check_walk(session, reviewer, check_id)
            asked = decision_request(check.review_id, reviewer, form)
            answer_check(session, check_id, asked, self.pages.hub_ids)
            return following

        following = await self.posted(request, "who is answering?", work)
        if isinstance(following, Response):
            return following
        target = url("item", following) if following else url("queue")
        return self.pages.redirect(target, ANSWERED)

    async def posted(
        self, request: Request, who: str, work: Callable[[Session, Any, str], T]
    ) -> T | Response:
        """`work` on a signed form and its reviewer, in one transaction; else the page
        saying why nothing was recorded (`who`: the question when no reviewer is named)."""
        signed = await self.pages.signed_form(request, who)
        if isinstance(signed, Response):
            return signed
        form, reviewer = signed
        try:
            with Session(self.pages.bench.engine) as session, session.begin():
                return work(session, form, reviewer)
        except ReviewError as exc:
            status = 403 if isinstance(exc, NotALead) else 400
            return self.pages.problem(request, status, "not recorded", str(exc))
        except OperationalError:
            return self.pages.problem(request, 503, "busy, try again", BUSY)

    async def report(self, request: Request) -> HTMLResponse:
        pages = self.pages
        with Session(pages.bench.engine) as session:
            report = qa_report(session)
        return pages.render(
            request,
            "qa.html",
            report=report,
            is_lead=pages.is_lead(request),
            leads=pages.leads(),
        )

    async def rule(self, request: Request, check_id: int) -> Response:
        lead = self.pages.is_lead(request)

        def work(session: Session, form: Any, reviewer: str) -> str:
            if not lead:
                raise NotALead("only a lead rules on a disagreement (`review serve --lead NAME`)")
            outcome = str(form.get("outcome") or "")
            return adjudicate(session, check_id, reviewer, outcome, self.pages.hub_ids)

        said = await self.posted(request, "who is ruling?", work)
        if isinstance(said, Response):
            return said
        return self.pages.redirect(url("qa"), said)


def first_open(session: Session) -> str | None:
    """The review id of the oldest open item: where the walk goes after the checks."""
    found = queue_page(session, QueueFilter(), 1, 1).items
    return found[0].review_id if found else None
