"""Model cards list the sha256 of every file they describe; a file that differs is refused."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_problem(directory: Path, files: Mapping[str, str]) -> str | None:
    """Why the files in `directory` do not match the card's digests, or None when they do."""
    for name, digest in files.items():
        path = directory / name
        if not path.is_file():
            return f"{name} is listed in the card but missing"
        if sha256_of(path) != digest:
            return f"{name} does not match its card (changed since)"
    return None
