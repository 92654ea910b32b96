"""`queue load` into the store: the rows that fit, in the table; the lines that do not,
kept with their reasons in the rejections table; one transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from librarian.schemas.records import RejectCode, Rejection, rejected
from librarian.store.decisions import add_rejection
from librarian.store.queue import add_rows, column_problem


@dataclass(frozen=True)
class Loaded:
    queued: int
    rejected: list[Rejection]
    ignored_columns: list[str]


def checked_rows(
    rows: Sequence[tuple[int, dict[str, Any]]],
) -> tuple[list[tuple[int, dict[str, Any]]], list[Rejection]]:
    """The rows whose every value fits its column, and a rejection naming the column for
    each other one."""
    fit: list[tuple[int, dict[str, Any]]] = []
    refused: list[Rejection] = []
    for line, row in rows:
        problem = column_problem(row)
        if problem is None:
            fit.append((line, row))
            continue
        chunk = row.get("chunk_id") if isinstance(row.get("chunk_id"), str) else None
        column, why = problem
        refused.append(rejected(line, RejectCode.INVALID_FIELD, why, chunk, column))
    return fit, refused


def load(
    engine: Engine,
    rows: Sequence[tuple[int, dict[str, Any]]],
    refused: Sequence[Rejection],
    raw_lines: Mapping[int, bytes],
    source: str,
    run_id: str,
) -> Loaded:
    fit, unfit = checked_rows(rows)
    every = sorted([*refused, *unfit], key=lambda r: r.line)
    now = datetime.now(UTC)
    with Session(engine) as session, session.begin():
        count, ignored = add_rows(session, fit)
        for rejection in every:
            add_rejection(session, run_id, source, rejection, raw_lines[rejection.line], now)
    return Loaded(count, every, ignored)
