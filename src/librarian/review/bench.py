"""What the workbench serves: the store, the hub, who may review, and the background
work it starts (re-scoring a source). Construction only: nothing is read until asked."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.catalogue.hub import Hub
from librarian.pipeline.pipeline import Pipeline
from librarian.policy import DecisionPolicy
from librarian.retrieval.hub_search import HubSearch
from librarian.review.api import KnownSource
from librarian.review.signin import Throttle
from librarian.store.history import (
    source_history,
)
from librarian.store.policies import policy_of, source_cut
from librarian.store.tables import DecisionRow

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
WILDCARD_BINDS = ("0.0.0.0", "::", "")


@dataclass
class Workbench:
    """What the application serves: construction only, nothing read yet."""

    engine: Engine
    hub: Hub
    reviewer: str | None = None  # fixed by --reviewer (loopback only); else reviewers sign in
    token: str | None = None  # required on every request when set
    host: str = "127.0.0.1"  # the address bound: only its names are served
    # Builds the search by meaning and words, once, at the first search (loading the
    # embedder takes seconds: the workbench starts without waiting); None: words alone.
    finder: Callable[[], HubSearch] | None = None
    # The text of a linked section, by its rationale label ("framework section (style)"):
    # the best linked section a suggestion was scored against, shown in full.
    exemplar_text: Callable[[str], str | None] | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    # Signs the session cookies of reviewers who signed in (drawn at start: a restart
    # signs everyone out).
    session_key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    # Sessions signed out here (their cookies' signatures): refused until the server stops,
    # when the session key that signed them goes too.
    ended_sessions: set[str] = field(default_factory=set)
    throttle: Throttle = field(default_factory=Throttle)
    decided_here: dict[str, list[str]] = field(default_factory=dict)  # desk -> review ids
    leads: frozenset[str] = frozenset()  # may change anyone's decision (their own: everyone)
    qa_every: int = 5  # a waiting check item comes after every this many decisions (0: never)
    # Decides a source's open items again with its reviewers' calibration (`relink`,
    # committed), returning what it did in a line; None: no trained models to do it with.
    relinker: Callable[[str], str] | None = None
    # The home's trained pipeline for `POST /api/v1/suggest`, built at its first use;
    # None (or returning None): no trained models, the API answers 503.
    suggester: Callable[[], Pipeline | None] | None = None
    rescored: dict[str, str] = field(default_factory=dict)  # source -> what re-scoring did
    background: ThreadPoolExecutor = field(
        init=False,
        repr=False,
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="rescore"),
    )

    def rescore(self, source: str) -> None:
        """Re-score `source`'s open items in the background (one at a time: a reviewer
        never waits for it); its line appears on the source's item pages."""
        if self.relinker is None:
            return
        relinker = self.relinker
        self.rescored[source] = "its open items are being decided again with its own calibration"

        def work() -> None:
            try:
                self.rescored[source] = relinker(source)
            except Exception as exc:
                self.rescored[source] = f"re-scoring failed: {type(exc).__name__}: {exc}"

        self.background.submit(work)

    def suggest_pipeline(self) -> Pipeline | None:
        return self.suggester() if self.suggester is not None else None

    def source_context(self, source: str, current: DecisionPolicy) -> KnownSource | None:
        """A source's history, the policy its runs keep (`current`'s where none is stored)
        and the cut the last of them chose (None: not since 0012), from this store (None:
        it has no item of that source). `source`: its key (`queue status` lists them), or
        the name a team gave a document with --source (its key is `plain:NAME`)."""
        with Session(self.engine) as session:
            key = next((k for k in (source, f"plain:{source}") if self._holds(session, k)), None)
            if key is None:
                return None
            history = source_history(session, {key})
            policy = policy_of(session, key, current)
            cut = source_cut(session, key)
        return KnownSource(history, policy, cut.certified if cut is not None else None, key)

    @staticmethod
    def _holds(session: Session, key: str) -> bool:
        found = select(DecisionRow.id).where(DecisionRow.source_key == key).limit(1)
        return session.execute(found).first() is not None

    def allowed_hosts(self) -> list[str]:
        """The Host headers served: loopback names, and the bound address. Bound to every
        interface, any name (the token is required there, and a rebound page has none)."""
        if self.host in WILDCARD_BINDS:
            return ["*"]
        bound = f"[{self.host}]" if ":" in self.host else self.host
        return [*LOOPBACK_NAMES, bound]
