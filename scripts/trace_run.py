"""Which modules a run's policy and its database pass through (issue 57's measure: "the
database URL and the policy from the command to the store cross 14 modules").

Runs `librarian run FILE --commit --db sqlite:///...` in this process with a profile hook
on every thread, and records, for every call into a librarian function, whether one of
its arguments is the run's `DecisionPolicy`, or its database (the URL as text, a
SQLAlchemy `URL`, an `Engine` or a `Session` on it). Prints the modules each passes
through, the command's own and the library's; nothing is written but the scratch run.

    python scripts/trace_run.py [FILE]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

from sqlalchemy import URL
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from librarian.paths import packaged_data
from librarian.policy import DecisionPolicy


def carried(value: Any, database: str) -> str | None:
    """What of the run `value` is: "policy", "database" or None."""
    if isinstance(value, DecisionPolicy):
        return "policy"
    if isinstance(value, str) and value == database:
        return "database"
    if isinstance(value, URL | Engine | Session):
        return "database"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path)
    args = parser.parse_args()
    source = args.file or packaged_data("samples", "queue_sample.jsonl")
    scratch = Path(tempfile.mkdtemp(prefix="librarian-trace-"))
    database = f"sqlite:///{scratch / 'run.db'}"
    seen: dict[str, set[str]] = defaultdict(set)

    def hook(frame: FrameType, event: str, _: Any) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("librarian"):
            return
        code = frame.f_code
        for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
            what = carried(frame.f_locals.get(name), database)
            if what is not None:
                seen[what].add(module)

    from librarian.cli import main as cli

    sys.argv = ["librarian", "run", str(source), "--commit", "--db", database,
                "--out", str(scratch / "out"), "--quiet"]  # fmt: skip
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        cli()
    except SystemExit as done:
        if done.code:
            raise
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    for what in ("policy", "database"):
        print(f"{what}: {len(seen[what])} modules: {', '.join(sorted(seen[what]))}")
    both = seen["policy"] | seen["database"]
    print(f"either: {len(both)} modules")


if __name__ == "__main__":
    main()
