"""The reviewers' workbench: a local web application over the review queue.

Pages are rendered on the server (Jinja2, autoescaped); one static script adds the
keyboard and the hub search, and every action also works as a plain form. Safety: the
CSP allows no inline script or style; every POST carries the page's CSRF token and, when
the browser sends one, an Origin of this server; bound to anything but loopback, every
request must carry the access token (`?token=` once, then a cookie, or a Bearer header).
Only the host names it was bound to are served (Starlette's TrustedHostMiddleware): a
hostile page that rebinds its own name to 127.0.0.1 is answered 400. Undo takes back only
what this browser decided; status messages are signed, so a link cannot make one up.
"""

from __future__ import annotations

import difflib
import hmac
import re
import secrets
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlalchemy import Engine, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from starlette.middleware.trustedhost import TrustedHostMiddleware

from librarian.catalogue.hub import Hub
from librarian.pipeline.negation import negating_words
from librarian.pipeline.pipeline import Pipeline
from librarian.policy import RiskPolicy
from librarian.retrieval.hub_search import HubSearch
from librarian.review.api import DOCS_CSP, MAX_BODY_BYTES, docs_page, suggest_router
from librarian.review.decisions import DecisionRequest, change, decide
from librarian.review.signin import (
    SESSION_COOKIE,
    SESSION_SECONDS,
    Identity,
    session_name,
    session_value,
)
from librarian.review.urls import url
from librarian.review.web_qa import QaPages
from librarian.schemas.envelopes import UNMAPPABLE
from librarian.schemas.human import HumanDecision, Ui
from librarian.schemas.records import History, source_key_of
from librarian.settings import MIN_SOURCE_DECISIONS
from librarian.store.history import (
    band_after,
    decisions_seen,
    source_history,
    source_of_row,
    source_progress,
)
from librarian.store.human import (
    BULK,
    AlreadyDecided,
    ReviewError,
    agreement_by_reason,
    current_review_id,
    decided_since,
    reviewer_stats,
    undo_last,
)
from librarian.store.policies import source_policy
from librarian.store.review import (
    ItemDetail,
    OpenItem,
    QueueFilter,
    Suggestion,
    item_detail,
    items_by_id,
    neighbour,
    queue_page,
)
from librarian.store.reviewers import reviewers, signed_in
from librarian.store.tables import DecisionRow
from librarian.text import counted, hidden_characters, visible

HERE = Path(__file__).resolve().parent
OPENAPI_PATH = "/openapi.json"
SWAGGER_ASSETS = "/swagger"
TOKEN_COOKIE = "librarian_token"
DESK_COOKIE = "librarian_desk"  # this browser: undo takes back only what it decided
PAGE_SIZE = 50
MAX_PAGE = 1_000_000
BULK_LIMIT = 500  # one bulk action decides at most this many items
MAX_DURATION_MS = 24 * 60 * 60 * 1000  # longer is a clock or a form gone wrong, not a review
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
WILDCARD_BINDS = ("0.0.0.0", "::", "")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
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


@dataclass
class Workbench:
    """What the application serves: construction only, nothing read yet."""

    engine: Engine
    hub: Hub
    reviewer: str | None = None  # fixed by --reviewer (loopback only); else reviewers sign in
    token: str | None = None  # required on every request when set
    host: str = "127.0.0.1"  # the address bound: only its names are served
    # Builds the search by meaning and words, once, at the first search (loading the
    # embedder takes seconds: the workbench starts without waiting); None: words alone.
    finder: Callable[[], HubSearch] | None = None
    # The text of a linked section, by its rationale label ("framework section (style)"):
    # the best linked section a suggestion was scored against, shown in full.
    exemplar_text: Callable[[str], str | None] | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    # Signs the session cookies of reviewers who signed in (drawn at start: a restart
    # signs everyone out).
    session_key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    decided_here: dict[str, list[str]] = field(default_factory=dict)  # desk -> review ids
    leads: frozenset[str] = frozenset()  # may change anyone's decision (their own: everyone)
    qa_every: int = 5  # a waiting check item comes after every this many decisions (0: never)
    # Decides a source's open items again with its reviewers' calibration (`relink`,
    # committed), returning what it did in a line; None: no trained models to do it with.
    relinker: Callable[[str], str] | None = None
    # The home's trained pipeline for `POST /api/v1/suggest`, built at its first use;
    # None (or returning None): no trained models, the API answers 503.
    suggester: Callable[[], Pipeline | None] | None = None
    rescored: dict[str, str] = field(default_factory=dict)  # source -> what re-scoring did
    background: ThreadPoolExecutor = field(
        init=False,
        repr=False,
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="rescore"),
    )

    def rescore(self, source: str) -> None:
        """Re-score `source`'s open items in the background (one at a time: a reviewer
        never waits for it); its line appears on the source's item pages."""
        if self.relinker is None:
            return
        relinker = self.relinker
        self.rescored[source] = "its open items are being decided again with its own calibration"

        def work() -> None:
            try:
                self.rescored[source] = relinker(source)
            except Exception as exc:
                self.rescored[source] = f"re-scoring failed: {type(exc).__name__}: {exc}"

        self.background.submit(work)

    def suggest_pipeline(self) -> Pipeline | None:
        return self.suggester() if self.suggester is not None else None

    def source_context(self, source: str) -> tuple[History, RiskPolicy] | None:
        """A source's history and the policy its runs keep, from this store (None: it has
        no item of that source)."""
        with Session(self.engine) as session:
            if not session.execute(
                select(DecisionRow.id).where(DecisionRow.source_key == source).limit(1)
            ).first():
                return None
            history = source_history(session, {source})
            policy = source_policy(session, source) or RiskPolicy()
        return history, policy

    def allowed_hosts(self) -> list[str]:
        """The Host headers served: loopback names, and the bound address. Bound to every
        interface, any name (the token is required there, and a rebound page has none)."""
        if self.host in WILDCARD_BINDS:
            return ["*"]
        bound = f"[{self.host}]" if ":" in self.host else self.host
        return [*LOOPBACK_NAMES, bound]


def swagger_assets() -> Path:
    """Swagger UI's script and styles, as the fastapi-offline package ships them."""
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"


def create_app(bench: Workbench) -> FastAPI:
    app = FastAPI(
        title="librarian",
        summary="Suggest OpenCRE hubs for security text (the review workbench's API)",
        docs_url=None,
        redoc_url=None,
        openapi_url=OPENAPI_PATH,
    )
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals.update(
        url=url, shown=visible, safe_link=_safe_link, name_of=_name_of(bench.hub)
    )
    # Every value a page shows, not only the section's text: a heading path, a chunk id or
    # a reviewer's note with a bidi override or an escape shows it as ⟨U+…⟩.
    # A macro's output is Markup the template wrote: shown as it is, never escaped again.
    templates.env.finalize = lambda value: (
        visible(value) if isinstance(value, str) and not isinstance(value, Markup) else value
    )
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.mount(SWAGGER_ASSETS, StaticFiles(directory=str(swagger_assets())), name="swagger")
    app.middleware("http")(_guard(bench))
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=bench.allowed_hosts())
    pages = _Pages(bench, templates)
    # Pages are left out of the OpenAPI document: it describes the API alone.
    shown = (
        ("/", pages.queue),
        ("/item/{review_id}", pages.item),
        ("/qa", pages.qa.report),
    )
    for path, page in shown:
        app.get(path, response_class=HTMLResponse, include_in_schema=False)(page)
    posted = (
        ("/item/{review_id}", pages.decide),
        ("/undo", pages.undo),
        ("/bulk", pages.bulk),
        ("/signin", pages.sign_in),
        ("/qa/{check_id}", pages.qa.rule),
    )
    for path, action in posted:
        app.post(path, include_in_schema=False)(action)
    app.get("/api/search", include_in_schema=False)(pages.search)
    app.get("/signin", include_in_schema=False)(pages.sign_in_link)
    app.get("/favicon.ico", include_in_schema=False)(_no_icon)
    app.include_router(suggest_router(bench.suggest_pipeline, bench.source_context))
    app.get("/docs", response_class=HTMLResponse, include_in_schema=False)(
        lambda: docs_page(OPENAPI_PATH, SWAGGER_ASSETS)
    )
    return app


async def _no_icon() -> Response:
    return Response(status_code=204)


Handler = Callable[[Request], Awaitable[Response]]


def _guard(bench: Workbench) -> Callable[[Request, Handler], Awaitable[Response]]:
    async def guard(request: Request, call_next: Handler) -> Response:
        if bench.token is not None:
            given = request.query_params.get("token")
            if given is not None and same_secret(given, bench.token):
                clean = request.url.remove_query_params("token")
                response: Response = RedirectResponse(str(clean), status_code=303)
                response.set_cookie(TOKEN_COOKIE, bench.token, httponly=True, samesite="strict")
                return response
            if not _has_token(request, bench.token):
                return _plain(
                    401,
                    "this workbench needs its access token: open the URL "
                    "`librarian review serve` printed (…?token=…)",
                )
        if request.method == "POST" and not _same_origin(request):
            return _plain(403, "cross-origin request refused")
        api_post = request.method == "POST" and request.url.path.startswith("/api/")
        if api_post and (refused := _body_refused(request)):
            return refused
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = (
            DOCS_CSP if request.url.path == "/docs" else CSP
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"  # no-referrer would send Origin: null
        return response

    return guard


def _body_refused(request: Request) -> Response | None:
    """An API body is refused before it is read when it is too big, or unannounced."""
    length = request.headers.get("content-length")
    if length is None or not length.isdigit():
        return _plain(411, "send the body's Content-Length")
    if int(length) > MAX_BODY_BYTES:
        return _plain(413, f"the body is {length} bytes; at most {MAX_BODY_BYTES}")
    return None


def same_secret(offered: str, secret: str) -> bool:
    """Constant-time comparison of any text (compare_digest refuses non-ASCII str)."""
    return hmac.compare_digest(offered.encode("utf-8", "replace"), secret.encode("utf-8"))


def _has_token(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    offered = request.cookies.get(TOKEN_COOKIE) or header.removeprefix("Bearer ").strip()
    return bool(offered) and same_secret(offered, token)


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    return urlsplit(origin).netloc == request.headers.get("host", "")


def _plain(status: int, text: str) -> Response:
    return Response(
        text + "\n",
        status_code=status,
        media_type="text/plain; charset=utf-8",
        headers={"Content-Security-Policy": CSP},
    )


_WORDS = re.compile(r"[^\W\d_]{3,}")
_COMMON = frozenset(
    {
        "the",
        "and",
        "for",
        "are",
        "with",
        "that",
        "this",
        "from",
        "must",
        "should",
        "shall",
        "not",
        "all",
        "any",
        "can",
        "its",
        "use",
        "used",
        "into",
        "their",
        "been",
        "have",
        "has",
        "was",
        "were",
        "will",
        "such",
        "other",
        "than",
        "only",
        "each",
        "when",
        "where",
        "which",
    }
)


_EXEMPLAR = re.compile(r"best linked section [0-9.]+: (\S+ .+ \((?:prose|title)\))$")


def _flag_words(item: OpenItem) -> list[str]:
    """For a negation flag, the negations that raised it (the section's, or the first
    CRE's), and what each governs."""
    if "NEGATION_MISMATCH" not in item.flags or not item.suggestions:
        return []
    name = item.suggestions[0].name
    return negating_words(item.text, name) or negating_words(name, item.text)


def shared_words(text: str, suggestion: Suggestion, hub: Hub) -> list[str]:
    """The words the section and the CRE (its name and path) both use, as a reviewer
    reads them: lower case, common words left out, in the CRE's order."""
    node = hub.by_id.get(suggestion.cre_id)
    cre_text = " ".join([suggestion.name, *(node.hierarchy_path if node else ())])
    section = {w.lower() for w in _WORDS.findall(text)} - _COMMON
    seen: dict[str, None] = {}
    for word in _WORDS.findall(cre_text):
        if word.lower() in section:
            seen.setdefault(word.lower(), None)
    return list(seen)


def _order_note(suggestions: tuple[Suggestion, ...]) -> str | None:
    """Why #1 is first when a later suggestion shows a higher confidence: the order is the
    linker's (the CRE it would link), the confidence each CRE's own."""
    if len(suggestions) < 2:
        return None
    best = max(range(len(suggestions)), key=lambda i: suggestions[i].confidence)
    if suggestions[best].confidence <= suggestions[0].confidence:
        return None
    return (
        "The suggestions are in the linker's order, the CRE it would link first: by "
        "retrieval score and, with the standard linked as a whole, this section's choice "
        "among its standard's (a CRE another section fits better is left to that one). Each "
        f"confidence is that CRE's own: #{best + 1} has the higher one "
        f"({suggestions[best].confidence:.3f} against {suggestions[0].confidence:.3f}). "
        f"`a` accepts #1; {best + 1} takes #{best + 1}."
    )


def _name_of(hub: Hub) -> Callable[[str], str]:
    def name(cre_id: str) -> str:
        node = hub.by_id.get(cre_id)
        return node.name if node else ""

    return name


def _safe_link(link: str) -> bool:
    return link.startswith(("https://", "http://"))


class _Pages:
    def __init__(self, bench: Workbench, templates: Jinja2Templates) -> None:
        self.bench = bench
        self.templates = templates
        self._finder: HubSearch | None = None
        self.hub_ids = set(bench.hub.ids)
        self.qa = QaPages(self)

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
        name = session_name(request.cookies.get(SESSION_COOKIE), self.bench.session_key)
        if name is None:
            return None
        with Session(self.bench.engine) as session:
            lead = reviewers(session).get(name)
        if lead is None:
            return None
        return Identity(name, lead or name in self.bench.leads)

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
        flt = replace(_filter(request), hidden=hidden)
        page = min(MAX_PAGE, max(1, _int(request.query_params.get("page"), 1)))
        with Session(self.bench.engine) as session:
            found = queue_page(session, flt, page, PAGE_SIZE)
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
        )

    async def item(self, request: Request, review_id: str) -> Response:
        checking = self.qa.checking(self.reviewer_of(request))
        if review_id in checking:  # blind: a check, or an item one is checking
            return await self.qa.check(request, checking[review_id], review_id)
        with Session(self.bench.engine) as session:
            detail = item_detail(session, review_id)
            if detail is None and (now_id := current_review_id(session, review_id)):
                said = "newer models decided this item again: this is its address now"
                return self.redirect(url("item", now_id), said)  # a kept tab still works
            if detail is None:
                return self.problem(request, 404, "no such review item", review_id)
            moment, row = detail.item.created_at, detail.item.row_id
            following = neighbour(session, moment, row, later=True)
            previous = neighbour(session, moment, row, later=False)
            source = source_panel(session, detail, self.bench.rescored)
        reviewer = self.reviewer_of(request)
        standing = detail.decision
        may_change = (
            standing is not None
            and reviewer is not None
            and (reviewer == standing.decided_by or self.is_lead(request))
        )
        return self.render(
            request,
            "item.html",
            **self.item_context(detail),
            may_change=may_change,
            editable=detail.item.status == "open" or may_change,
            following=following,
            previous=previous,
            source=source,
        )

    def item_context(self, detail: ItemDetail) -> dict[str, Any]:
        locator = detail.envelope.get("knowledge", {}).get("locator", {})
        return {
            "item": detail.item,
            "open": detail.item.status == "open",
            "heading_path": detail.heading_path,
            "locator": locator.get("path") or locator.get("url") or locator.get("id") or "",
            "diff": _diff(detail.prior_text, detail.item.text) if detail.prior_text else None,
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
            "flag_words": _flag_words(detail.item),
            "order_note": _order_note(detail.item.suggestions),
            "threshold": detail.envelope.get("retrieval", {}).get("threshold"),
        }

    def exemplar(self, rationale: str | None) -> str | None:
        found = _EXEMPLAR.search(rationale or "")
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
        asked = _request(review_id, reviewer, form)
        changing = form.get("change") == "yes"
        try:
            with Session(self.bench.engine) as session, session.begin():
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
        now = set(self.matching(session, _filter_of(params)))
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
        what = f"“{undone[0].label}”" if undone else "the item"
        return self.redirect(url("item", review_id), f"undone: {what} is open again")

    async def sign_in(self, request: Request) -> Response:
        """A reviewer signs in with their name and secret (`review reviewers add`)."""
        form = await request.form()
        if refused := self.refused(request, form):
            return refused
        back = _local_path(str(form.get("back", "")))
        return self.signed_in(str(form.get("name", "")), str(form.get("key", "")), back)

    async def sign_in_link(self, request: Request) -> Response:
        """The link `review reviewers add` prints: signs in, then drops the key from the URL."""
        params = request.query_params
        return self.signed_in(params.get("name", ""), params.get("key", ""), url("queue"))

    def signed_in(self, name: str, key: str, back: str) -> Response:
        if self.bench.reviewer:
            return self.redirect(back, f"this workbench is {self.bench.reviewer}'s alone", "error")
        with Session(self.bench.engine) as session:
            found = signed_in(session, name, key)
        if found is None:
            return self.redirect(back, "wrong name or key: nobody is signed in", "error")
        response = self.redirect(back, f"signed in as {found.name}")
        response.set_cookie(
            SESSION_COOKIE,
            session_value(found.name, self.bench.session_key),
            httponly=True,
            samesite="strict",
            max_age=SESSION_SECONDS,
        )
        return response

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
            signed = urlencode({"msg": message, "kind": kind, "sig": self.signature(message)})
            target += ("&" if "?" in target else "?") + signed
        return RedirectResponse(target, status_code=303)

    def signature(self, message: str) -> str:
        key = self.bench.csrf.encode()
        return hmac.new(key, message.encode("utf-8", "replace"), "sha256").hexdigest()[:32]

    def message(self, request: Request) -> str | None:
        """The status line, when this server wrote it; a link's own `?msg=` is not shown."""
        shown = request.query_params.get("msg")
        offered = request.query_params.get("sig", "")
        if shown is None or not same_secret(offered, self.signature(shown)):
            return None
        return shown

    async def search(self, request: Request) -> JSONResponse:
        hits = self.finder().search(request.query_params.get("q", "")[:500])
        return JSONResponse([{"cre_id": h.cre_id, "name": h.name, "path": h.path} for h in hits])


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
    linked = detail.item.linked_as
    seen = decisions_seen(session, key)
    return {
        "key": key,
        "linked": linked,
        "decisions": seen,
        "needed": max(0, MIN_SOURCE_DECISIONS - seen),
        "rescored": rescored.get(key),
    }


def search_hub(hub: Hub, query: str, limit: int = 20) -> list[dict[str, str]]:
    """Hub nodes whose id, name or path hold every word of `query` (no model loaded)."""
    hits = HubSearch(hub, None, None).search(query, limit)
    return [{"cre_id": h.cre_id, "name": h.name, "path": h.path} for h in hits]


def _request(review_id: str, reviewer: str, form: Any) -> DecisionRequest:
    picked = str(form.get("pick") or "")
    action = str(form.get("action") or ("choose" if picked else ""))
    cre_ids = (picked,) if picked else tuple(str(c) for c in form.getlist("cre_ids"))
    duration = _int(str(form.get("duration_ms") or ""), -1)
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


def _local_path(back: str) -> str:
    """A path on this server to go back to; anything else (another site, `//host`) is
    the queue."""
    parts = urlsplit(back)
    if parts.scheme or parts.netloc or not back.startswith("/") or back.startswith("//"):
        return url("queue")
    return back


def _int(value: str | None, default: int) -> int:
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


def _filter(request: Request) -> QueueFilter:
    return _filter_of(dict(request.query_params))


def _filter_of(q: dict[str, str]) -> QueueFilter:
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


def _diff(before: str, after: str) -> list[tuple[str, str]]:
    """Word-level diff of an update: (kind, words), kind eq | del | ins."""
    old, new = before.split(), after.split()
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op in ("replace", "delete"):
            out.append(("del", " ".join(old[i1:i2])))
        if op in ("replace", "insert"):
            out.append(("ins", " ".join(new[j1:j2])))
        if op == "equal":
            out.append(("eq", " ".join(old[i1:i2])))
    return out
