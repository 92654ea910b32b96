"""The reviewers' workbench: a local web application over the review queue.

Pages are rendered on the server (Jinja2, autoescaped); one static script adds the
keyboard and the hub search, and every action also works as a plain form. Safety: the
CSP allows no inline script or style; every POST carries the page's CSRF token and, when
the browser sends one, an Origin of this server; bound to anything but loopback, every
request must carry the access token (`?token=` once, then a cookie, or a Bearer header).
Only the host names it was bound to are served (Starlette's TrustedHostMiddleware): a
hostile page that rebinds its own name to 127.0.0.1 is answered 400. Undo takes back only
what this browser decided; status messages are signed, so a link cannot make one up.

This module assembles the application; the rest is by concern: `bench.py` (what it
serves), `guard.py` (every request's checks and headers), `pages.py` (the pages and
actions), `web_qa.py` (reviewer QA), `forms.py` (what a form or query asks for),
`web_signin.py` (sign-in and sign-out), `words.py` (what a page says about a suggestion),
`api.py` (the suggest API), `bounded.py` (the threads of their own that the sign-in's key
checks and the suggest API's model work run on, a bounded number at a time).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.middleware.trustedhost import TrustedHostMiddleware

from librarian.catalogue.hub import cre_url
from librarian.review.api import docs_page, suggest_router
from librarian.review.bench import Workbench
from librarian.review.guard import guard
from librarian.review.pages import Pages
from librarian.review.urls import url
from librarian.review.words import name_of, safe_link
from librarian.text import visible

HERE = Path(__file__).resolve().parent
OPENAPI_PATH = "/openapi.json"
SWAGGER_ASSETS = "/swagger"


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
        url=url,
        shown=visible,
        safe_link=safe_link,
        name_of=name_of(bench.hub),
        cre_url=cre_url,
    )
    # Every value a page shows, not only the section's text: a heading path, a chunk id or
    # a reviewer's note with a bidi override or an escape shows it as ⟨U+…⟩.
    # A macro's output is Markup the template wrote: shown as it is, never escaped again.
    templates.env.finalize = lambda value: (
        visible(value) if isinstance(value, str) and not isinstance(value, Markup) else value
    )
    app.add_exception_handler(RequestValidationError, _refused_input)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.mount(SWAGGER_ASSETS, StaticFiles(directory=str(swagger_assets())), name="swagger")
    app.middleware("http")(guard(bench))
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=bench.allowed_hosts())
    pages = Pages(bench, templates)
    # Pages are left out of the OpenAPI document: it describes the API alone.
    shown = (
        ("/", pages.queue),
        ("/item/{review_id}", pages.item),
        ("/qa", pages.qa.report),
        ("/signin", pages.signin.sign_in_page),
    )
    for path, page in shown:
        app.get(path, response_class=HTMLResponse, include_in_schema=False)(page)
    posted = (
        ("/item/{review_id}", pages.decide),
        ("/undo", pages.undo),
        ("/bulk", pages.bulk),
        ("/signin", pages.signin.sign_in),
        ("/signout", pages.signin.sign_out),
        ("/qa/{check_id}", pages.qa.rule),
    )
    for path, action in posted:
        app.post(path, include_in_schema=False)(action)
    app.get("/api/search", include_in_schema=False)(pages.search)
    app.get("/favicon.ico", include_in_schema=False)(_no_icon)
    app.include_router(suggest_router(bench.suggest_pipeline, bench.source_context))
    app.get("/docs", response_class=HTMLResponse, include_in_schema=False)(
        lambda: docs_page(OPENAPI_PATH, SWAGGER_ASSETS)
    )
    return app


async def _refused_input(request: Request, exc: Exception) -> Response:
    """A request the API's schema refuses: 422 naming each field and what is wrong with
    it, never the input itself (FastAPI's own answer echoes it, and a lone surrogate in it
    cannot be encoded: a 500 with a traceback)."""
    assert isinstance(exc, RequestValidationError)
    detail = [
        {
            "loc": [str(part) for part in error.get("loc", ())],
            "msg": str(error.get("msg", "")).encode("utf-8", "backslashreplace").decode(),
            "type": str(error.get("type", "")),
        }
        for error in exc.errors()
    ]
    return JSONResponse({"detail": detail}, status_code=422)


async def _no_icon() -> Response:
    return Response(status_code=204)
