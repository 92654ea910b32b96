"""Every request's guard: the access token off loopback, same-origin POSTs, bounded API
bodies, and the security headers on every answer (see `web.py` for the whole story)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from librarian.review.api import DOCS_CSP, MAX_BODY_BYTES
from librarian.review.bench import Workbench

TOKEN_COOKIE = "librarian_token"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

Handler = Callable[[Request], Awaitable[Response]]


def guard(bench: Workbench) -> Callable[[Request, Handler], Awaitable[Response]]:
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
