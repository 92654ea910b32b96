"""What a page's form or query string asks for, read defensively: a decision request, a
queue filter, numbers and days, a local path to go back to (anything malformed is the
default, never an error page)."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request

from librarian.review.decisions import DecisionRequest
from librarian.review.urls import url
from librarian.schemas.envelopes import UNMAPPABLE
from librarian.schemas.human import Ui
from librarian.store.review import (
    QueueFilter,
)

DESK_COOKIE = "librarian_desk"  # this browser: undo takes back only what it decided
PAGE_SIZE = 50
MAX_PAGE = 1_000_000
BULK_LIMIT = 500  # one bulk action decides at most this many items
MAX_DURATION_MS = 24 * 60 * 60 * 1000  # longer is a clock or a form gone wrong, not a review
REASONS = (
    "BELOW_THRESHOLD",
    UNMAPPABLE,
    "NO_CANDIDATES",
    "ADVERSARIAL_FLAG",
    "UPDATE_AMBIGUOUS",
)
SORTS = (
    ("oldest", "oldest first"),
    ("newest", "newest first"),
    ("confidence", "least confident"),
    ("-confidence", "most confident"),
)


def decision_request(review_id: str, reviewer: str, form: Any) -> DecisionRequest:
    picked = str(form.get("pick") or "")
    action = str(form.get("action") or ("choose" if picked else ""))
    cre_ids = (picked,) if picked else tuple(str(c) for c in form.getlist("cre_ids"))
    duration = int_of(str(form.get("duration_ms") or ""), -1)
    duration = duration if duration <= MAX_DURATION_MS else -1
    keybind = str(form.get("keybind") or "") or None
    ui = Ui(review_duration_ms=duration if duration >= 0 else None, keybind_used=keybind)
    return DecisionRequest(
        review_id,
        action if action in ("approve", "choose", "reject") else "choose",  # type: ignore[arg-type]
        reviewer,
        cre_ids,
        str(form.get("rejection") or "") or None,
        str(form.get("note") or "") or None,
        ui,
    )


BUSY = "another writer holds the review database for a moment; nothing was recorded"


def local_path(back: str) -> str:
    """A path on this server to go back to; anything else (another site, `//host`) is
    the queue."""
    parts = urlsplit(back)
    if parts.scheme or parts.netloc or not back.startswith("/") or back.startswith("//"):
        return url("queue")
    return back


def int_of(value: str | None, default: int) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return default


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def _day(value: str | None, end: bool = False) -> datetime | None:
    try:
        day = datetime.fromisoformat(value).date() if value else None
    except ValueError:
        return None
    if day is None:
        return None
    return datetime.combine(day, time.max if end else time(), tzinfo=UTC)


def queue_filter(request: Request) -> QueueFilter:
    return filter_of(dict(request.query_params))


def filter_of(q: dict[str, str]) -> QueueFilter:
    status = q.get("status", "open")
    sort = q.get("sort", "oldest")
    update = {"yes": True, "no": False}.get(q.get("update", ""))
    return QueueFilter(
        status=status if status in ("open", "decided", "all") else "open",  # type: ignore[arg-type]
        reason=q.get("reason") or None,
        source=q.get("source") or None,
        update=update,
        min_confidence=_float(q.get("min")),
        max_confidence=_float(q.get("max")),
        since=_day(q.get("since")),
        until=_day(q.get("until"), end=True),
        sort=sort if sort in dict(SORTS) else "oldest",  # type: ignore[arg-type]
        decided_by=q.get("by") or None,
        action=q.get("action") if q.get("action") in ACTIONS else None,
    )


ACTIONS = ("approve", "correct", "reject")  # what a decided item's filter may ask for
