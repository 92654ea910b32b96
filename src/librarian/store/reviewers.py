"""Reviewers who sign in: each has a secret, given once by `librarian review reviewers
add`, stored as an scrypt hash (the standard library's `hashlib.scrypt`, OpenSSL's: no
extra dependency, memory-hard, and its parameters travel with each hash)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from librarian.errors import UsageError
from librarian.store.tables import ReviewerRow

# scrypt's cost: 16 MiB and ~50 ms a check on the project machine; a sign-in is rare.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
NAME_LIMIT = 200
# The key a command acting for a registered reviewer reads (never an option: a key on a
# command line stays in shell history and in the process list).
KEY_ENV = "LIBRARIAN_KEY"


def hash_secret(secret: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P)
    parts = ("scrypt", str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P), _b64(salt), _b64(digest))
    return "$".join(parts)


def secret_matches(secret: str, stored: str) -> bool:
    """Constant-time; False for anything that is not one of our hashes."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        found = hashlib.scrypt(
            secret.encode("utf-8", "replace"),
            salt=base64.urlsafe_b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(found, base64.urlsafe_b64decode(digest))


def add_reviewer(session: Session, name: str, lead: bool) -> str:
    """Register `name` (or give them a new secret, which ends the old one); returns the
    secret, shown once. The caller commits."""
    name = checked_name(name)
    secret = secrets.token_urlsafe(24)
    row = session.get(ReviewerRow, name)
    if row is None:
        row = ReviewerRow(name=name, created_at=datetime.now(UTC))
        session.add(row)
    row.lead, row.secret_hash = lead, hash_secret(secret)
    return secret


def remove_reviewer(session: Session, name: str) -> bool:
    row = session.get(ReviewerRow, name.strip())
    if row is None:
        return False
    session.delete(row)
    return True


def signed_in(session: Session, name: str, secret: str) -> ReviewerRow | None:
    """The reviewer whose name and secret these are, or None."""
    row = session.get(ReviewerRow, name.strip()[:NAME_LIMIT])
    if row is None or not secret_matches(secret, row.secret_hash):
        return None
    return row


def proven(session: Session, name: str, key: str | None, lead: bool) -> str:
    """`name`, when the store has them (as a lead, when `lead`) and `key` is theirs: how a
    command acting for a person proves who it is. UsageError saying what is missing."""
    row = session.get(ReviewerRow, name.strip()[:NAME_LIMIT])
    add = f"`librarian review reviewers add {name.strip()}{' --lead' if lead else ''}`"
    if row is None:
        raise UsageError(f"{name.strip()!r} is not a registered reviewer here: {add} first")
    if lead and not row.lead:
        raise UsageError(f"{row.name} does not lead here (the store says so): {add}")
    if not key:
        raise UsageError(f"acting as {row.name} needs their key: set {KEY_ENV}")
    if not secret_matches(key, row.secret_hash):
        raise UsageError(f"that is not {row.name}'s key ({KEY_ENV})")
    return row.name


def is_registered(session: Session, name: str) -> bool:
    return session.get(ReviewerRow, name.strip()[:NAME_LIMIT]) is not None


def credential(session: Session, name: str) -> str | None:
    """The fingerprint of `name`'s current key (its stored hash, salt included), which a
    workbench session is bound to; None when nobody of that name is registered. It
    changes whenever a key is issued again, so re-keying or removing a reviewer ends
    every session opened with an earlier key."""
    row = session.get(ReviewerRow, name.strip()[:NAME_LIMIT])
    if row is None:
        return None
    return hashlib.sha256(row.secret_hash.encode()).hexdigest()


def reviewers(session: Session) -> dict[str, bool]:
    """Every registered reviewer: whether they lead."""
    rows = session.execute(select(ReviewerRow.name, ReviewerRow.lead).order_by(ReviewerRow.name))
    return {str(name): bool(lead) for name, lead in rows}


def checked_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > NAME_LIMIT or not name.isprintable():
        raise UsageError(f"a reviewer's name is 1 to {NAME_LIMIT} printable characters")
    return name


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()
