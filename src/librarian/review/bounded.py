"""Blocking work the workbench runs off its event loop, a bounded number at a time, on
threads of its own: the sign-in's key checks (scrypt) and the suggest API's model work.

Each `Bounded` has its own thread limit, so none of them takes the threads of anyio's
default pool, which the static files and the rest of the server's work off the loop
share: a burst of sign-ins or of suggest calls cannot make a reviewer's page wait behind
it. Past its bound (`at_once` running and `waiting` more), work is refused at once
(`Full`): the caller answers 429 or 503 with Retry-After, never queues without end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


class Full(Exception):
    """`Bounded.run` refused: `at_once` are running and `waiting` more wait."""


class Bounded:
    """Used from the event loop only (its count is changed between awaits, never on a
    thread), so it needs no lock: asking `full()` and then calling `run` with nothing
    awaited between is one step."""

    def __init__(self, at_once: int, waiting: int = 0) -> None:
        self.at_once = at_once
        self.waiting = waiting
        self.admitted = 0  # running and waiting
        self._limiter = anyio.CapacityLimiter(at_once)

    def full(self) -> bool:
        return self.admitted >= self.at_once + self.waiting

    async def run(self, work: Callable[[], T]) -> T:
        """`work()` on one of this bound's threads, once one is free; Full when it is."""
        if self.full():
            raise Full
        self.admitted += 1
        try:
            return await anyio.to_thread.run_sync(work, limiter=self._limiter)
        finally:
            self.admitted -= 1
