"""The workbench's sign-in pages: sign in (a name and its key, throttled, its key checked
off the event loop and a bounded number at a time), the sign-in form, and sign out. Who a
signed-in browser is, from then on: `pages.Pages.identity` (`signin.py` for the cookie)."""

from __future__ import annotations

from typing import Any, Protocol

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from librarian.review.bench import Workbench
from librarian.review.bounded import Bounded
from librarian.review.forms import local_path
from librarian.review.signin import (
    FAILURES_PER_CLIENT,
    FAILURES_PER_NAME,
    KEY_CHECKS_AT_ONCE,
    SESSION_COOKIE,
    SESSION_SECONDS,
    THROTTLE_SECONDS,
    session_value,
)
from librarian.review.urls import url
from librarian.store.reviewers import credential, signed_in


class FormPages(Protocol):
    """What the sign-in pages use of the workbench's pages (`pages.Pages`)."""

    bench: Workbench

    def refused(self, request: Request, form: Any) -> HTMLResponse | None: ...

    def render(
        self, request: Request, name: str, status: int = 200, **context: Any
    ) -> HTMLResponse: ...

    def problem(self, request: Request, status: int, heading: str, detail: str) -> HTMLResponse: ...

    def redirect(self, target: str, message: str | None, kind: str = "ok") -> RedirectResponse: ...


class SignInPages:
    def __init__(self, pages: FormPages) -> None:
        self.pages = pages
        self.bench = pages.bench
        self.key_checks = Bounded(KEY_CHECKS_AT_ONCE)

    async def sign_in(self, request: Request) -> Response:
        """A reviewer signs in with their name and secret (`review reviewers add`), by a
        same-origin POST only (its CSRF token): a link or another site's form cannot sign
        a browser in. Failed tries are limited per name and client, and per client
        (`signin.Throttle`); a try is counted before its key is checked, so tries sent at
        once are counted too. The key is checked off the event loop, on a bounded pool of
        its own (`bounded.Bounded`): past it, 429 at once."""
        form = await request.form()
        if refused := self.pages.refused(request, form):
            return refused
        back = local_path(str(form.get("back", "")))
        name, key = str(form.get("name", "")).strip(), str(form.get("key", ""))
        if self.bench.reviewer:
            said = f"this workbench is {self.bench.reviewer}'s alone"
            return self.pages.redirect(back, said, "error")
        client = request.client.host if request.client else "?"
        throttle = self.bench.throttle
        # Nothing below awaits before `failed`: no other try runs between the look and the
        # count, and none between the count and the key check's slot.
        if wait := throttle.wait(name, client):
            return self.too_many(request, name, wait)
        if self.key_checks.full():
            return self.busy(request)
        throttle.failed(name, client)
        bound = await self.key_checks.run(lambda: self.key_matches(name, key))
        if bound is None:
            return self.pages.redirect(back, "wrong name or key: nobody is signed in", "error")
        throttle.succeeded(name, client)
        response = self.pages.redirect(back, f"signed in as {name}")
        response.set_cookie(
            SESSION_COOKIE,
            session_value(name, bound, self.bench.session_key),
            httponly=True,
            samesite="strict",
            max_age=SESSION_SECONDS,
        )
        return response

    def key_matches(self, name: str, key: str) -> str | None:
        """The fingerprint of `name`'s key when `key` is it (a session is bound to it)."""
        with Session(self.bench.engine) as session:
            found = signed_in(session, name, key)
            return credential(session, found.name) if found is not None else None

    def too_many(self, request: Request, name: str, wait: int) -> HTMLResponse:
        detail = (
            f"too many failed sign-ins for {name or 'this name'} or from this address: try "
            f"again in {wait} s (at most {FAILURES_PER_NAME} a name from one address and "
            f"{FAILURES_PER_CLIENT} from an address every {THROTTLE_SECONDS // 60} minutes)"
        )
        answer = self.pages.problem(request, 429, "sign-in refused for now", detail)
        answer.headers["Retry-After"] = str(wait)
        return answer

    def busy(self, request: Request) -> HTMLResponse:
        detail = "other sign-ins are being checked: try again in a second"
        answer = self.pages.problem(request, 429, "sign-in busy", detail)
        answer.headers["Retry-After"] = "1"
        return answer

    async def sign_in_page(self, request: Request) -> Response:
        """The address `review reviewers add` prints: a sign-in form with the name filled
        in, the key typed. It changes nothing (a key in the address is ignored, and the
        page says so: it would be a credential in browser and shell history)."""
        name = request.query_params.get("name", "")[:200]
        keyed = "key" in request.query_params
        return self.pages.render(request, "signin.html", named=name, keyed=keyed)

    async def sign_out(self, request: Request) -> Response:
        """Ends this browser's session on the server (its cookie is refused from now on)
        and drops the cookie."""
        form = await request.form()
        if refused := self.pages.refused(request, form):
            return refused
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie:
            self.bench.ended_sessions.add(cookie.rsplit(".", 1)[-1])
        response = self.pages.redirect(url("queue"), "signed out")
        response.delete_cookie(SESSION_COOKIE)
        return response
