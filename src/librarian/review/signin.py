"""Who is deciding: the workbench's identity of a request, from the server, never the form.

Two modes:
- one person on this machine (`review serve --reviewer NAME`, loopback only): every
  request is that reviewer's;
- reviewers who sign in (`librarian review reviewers add NAME [--lead]`): a reviewer
  signs in once with their name and secret, and the server answers with a session cookie
  it signed (HMAC-SHA256 under a key drawn when it started). From then on the name and the
  role are read from that cookie and the store: change, undo, QA answers, rulings and
  bulk all check them. A cookie naming someone else fails its signature; a reviewer
  removed from the store is signed out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass

SESSION_COOKIE = "librarian_session"
SESSION_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class Identity:
    name: str
    lead: bool


def session_value(name: str, key: bytes, now: float | None = None) -> str:
    """A cookie that says `name` signed in at `now`, signed with `key`."""
    issued = str(int(now if now is not None else time.time()))
    encoded = base64.urlsafe_b64encode(name.encode()).decode()
    return f"{encoded}.{issued}.{_mac(encoded, issued, key)}"


def session_name(value: str | None, key: bytes, now: float | None = None) -> str | None:
    """The name a cookie this server signed carries, or None (missing, forged, expired)."""
    if not value or value.count(".") != 2:
        return None
    encoded, issued, mac = value.split(".")
    if not hmac.compare_digest(mac, _mac(encoded, issued, key)):
        return None
    if not issued.isdigit() or (now or time.time()) - int(issued) > SESSION_SECONDS:
        return None
    try:
        return base64.urlsafe_b64decode(encoded.encode()).decode()
    except ValueError:
        return None


def _mac(encoded: str, issued: str, key: bytes) -> str:
    return hmac.new(key, f"{encoded}.{issued}".encode(), hashlib.sha256).hexdigest()
