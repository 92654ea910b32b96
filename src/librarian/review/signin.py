"""Who is deciding: the workbench's identity of a request, from the server, never the form.

Two modes:
- one person on this machine (`review serve --reviewer NAME`, loopback only): every
  request is that reviewer's;
- reviewers who sign in (`librarian review reviewers add NAME [--lead]`): a reviewer
  signs in once with their name and secret, and the server answers with a session cookie
  it signed (HMAC-SHA256 under a key drawn when it started). From then on the name and the
  role are read from that cookie and the store: change, undo, QA answers, rulings and
  bulk all check them. A cookie naming someone else fails its signature.

A session is bound to the credential it was opened with, not only to the name: its
signature covers a fingerprint of the reviewer's stored key hash (a fresh salt each time
`reviewers add` issues a key). Re-keying a reviewer, removing them, or removing and adding
them back each change or drop that hash, so every session opened with an earlier key
fails its signature at once: the remedy for a leaked key works the moment it is applied.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SESSION_COOKIE = "librarian_session"
SESSION_SECONDS = 7 * 24 * 3600
# Failed sign-ins allowed in THROTTLE_SECONDS, per reviewer name from one client address,
# and per client address whatever the names; past either, sign-in is refused (429, with
# the seconds to wait) without checking a key.
FAILURES_PER_NAME = 5
FAILURES_PER_CLIENT = 20
THROTTLE_SECONDS = 300
# Keys checked at once (scrypt: ~50 ms and 16 MiB each, on threads of their own:
# `bounded.Bounded`); a sign-in past them is refused at once (429), never queued.
KEY_CHECKS_AT_ONCE = 2


@dataclass(frozen=True)
class Identity:
    name: str
    lead: bool


def session_value(name: str, credential: str, key: bytes, now: float | None = None) -> str:
    """A cookie that says `name` signed in at `now` with the key `credential` fingerprints,
    signed with `key`."""
    # A nonce beside the time: two sign-ins in one second are two sessions (signing out of
    # one must not end the other, nor the one opened right after it).
    issued = f"{int(now if now is not None else time.time())}n{secrets.token_hex(8)}"
    encoded = base64.urlsafe_b64encode(name.encode()).decode()
    return f"{encoded}.{issued}.{_mac(encoded, issued, credential, key)}"


def session_name(
    value: str | None,
    key: bytes,
    credential: Callable[[str], str | None],
    now: float | None = None,
) -> str | None:
    """The name a cookie this server signed carries, or None (missing, forged, expired,
    or opened with a key that has since been replaced or removed). `credential`: the
    fingerprint of a name's current key (`store.reviewers.credential`), None for nobody
    registered."""
    if not value or value.count(".") != 2:
        return None
    encoded, issued, mac = value.split(".")
    at = issued.split("n", 1)[0]
    if not at.isdigit() or (now or time.time()) - int(at) > SESSION_SECONDS:
        return None
    try:
        name = base64.urlsafe_b64decode(encoded.encode()).decode()
    except ValueError:
        return None
    current = credential(name)
    if current is None or not hmac.compare_digest(mac, _mac(encoded, issued, current, key)):
        return None
    return name


def _mac(encoded: str, issued: str, credential: str, key: bytes) -> str:
    message = f"{encoded}.{issued}.{credential}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


@dataclass
class Throttle:
    """Failed sign-ins over a sliding window, by reviewer name and client together, and by
    client: a guesser gets FAILURES_PER_NAME tries at one name from one address, and
    FAILURES_PER_CLIENT at any, every THROTTLE_SECONDS; a key is never checked past that.

    A burst of wrong keys for one name locks out that name from that address alone:
    another reviewer at the same address (behind one NAT) still signs in, the burst having
    been refused before it reached the address's limit. A try is counted when it is let
    through, before its key is checked (`failed`), and taken back when the key was right
    (`succeeded`): tries sent at once are each counted, so no more than the limit of them
    is ever checked."""

    failures: dict[tuple[str, ...], list[float]] = field(default_factory=dict)

    def wait(self, name: str, client: str, now: float | None = None) -> int:
        """Seconds before `client` may try `name` again (0: now)."""
        now = now if now is not None else time.time()
        waits = [
            self._wait(("name", name, client), FAILURES_PER_NAME, now),
            self._wait(("client", client), FAILURES_PER_CLIENT, now),
        ]
        return max(waits)

    def failed(self, name: str, client: str, now: float | None = None) -> None:
        now = now if now is not None else time.time()
        for key in (("name", name, client), ("client", client)):
            self.failures.setdefault(key, []).append(now)

    def succeeded(self, name: str, client: str) -> None:
        """Take back one try counted for `name` from `client`: its key was right."""
        for key in (("name", name, client), ("client", client)):
            counted = self.failures.get(key)
            if counted:
                counted.pop()

    def _wait(self, key: tuple[str, ...], limit: int, now: float) -> int:
        recent = [t for t in self.failures.get(key, []) if now - t < THROTTLE_SECONDS]
        if not recent:  # a name tried once is not remembered for ever
            self.failures.pop(key, None)
            return 0
        self.failures[key] = recent
        if len(recent) < limit:
            return 0
        return max(1, int(recent[-limit] + THROTTLE_SECONDS - now) + 1)
