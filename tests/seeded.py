"""A seeded store and the workbench's client, for the tests of every part that reads or
writes decisions: the store as a run leaves it (`seed`), a reviewer's browser (`client`,
`signed_in`, `post`), and a store at an older schema revision (`store_at_revision`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session

from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.review.bench import Workbench
from librarian.review.decisions import DecisionRequest, RequestAction
from librarian.review.qa import answer_check
from librarian.review.web import create_app
from librarian.schemas.records import Section
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, write
from librarian.store.human import standing_decisions
from librarian.store.tables import DecisionRow
from tests.stubs import small_hub, stub_pipeline

TEXTS = [
    "rotate session token after login",
    "sql injection queries must be parameterized",
    "session management cryptography",
    "Use \u202ecryptography\u202c <b>keys</b> [bold]x[/bold] for session management, "
    "token rotation and sql injection protection controls",
]


def seeded_batch(texts: list[str], run: str, chunks_of: str | None = None) -> StoredBatch:
    """`texts` as a run decides them, all to review; `chunks_of`: the run whose chunks
    they are (default `run`: new items; an earlier run: the same items decided again)."""
    batch = [
        section_from_text(t).model_copy(
            update={
                "chunk_id": f"{chunks_of or run}-c{i}",
                "line": i + 1,
                "artifact_id": f"art-{i % 2}",
                "span_index": i,  # each its own item
                "heading_path": ("Guide", f"Part {i}"),
            }
        )
        for i, t in enumerate(texts)
    ]
    result = one_shot.link(
        stub_pipeline(threshold=0.99, top_k=6, top_n=5), batch, run
    )  # all to review
    return StoredBatch.linked(run, result, batch, "t")


def seed(engine: Engine, texts: list[str], run: str = "r1") -> None:
    with Session(engine) as session:
        write(session, seeded_batch(texts, run))
        session.commit()


def seeded_engine(path: Path) -> Engine:
    """A SQLite store at `path` holding the four TEXTS as open items."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    seed(engine, TEXTS)
    return engine


def client(engine: Engine, reviewer: str | None = "rita", token: str | None = None) -> TestClient:
    bench = Workbench(engine, small_hub(), reviewer, token, csrf="test-csrf")
    return TestClient(create_app(bench), base_url="http://127.0.0.1:8765", follow_redirects=False)


def register(engine: Engine, name: str, lead: bool = False) -> str:
    """`librarian review reviewers add NAME`: the secret, shown once."""
    from librarian.store.reviewers import add_reviewer

    with Session(engine) as session, session.begin():
        return add_reviewer(session, name, lead)


def signed_in(engine: Engine, name: str, lead: bool = False) -> TestClient:
    """A browser whose reviewer signed in (registered first)."""
    web = client(engine, reviewer=None)
    key = register(engine, name, lead)
    said = web.post("/signin", data={"csrf": "test-csrf", "name": name, "key": key})
    assert said.status_code == 303 and "signed+in" in said.headers["location"], said.headers
    return web


def review_ids(engine: Engine) -> list[str]:
    with Session(engine) as session:
        rows = session.execute(select(DecisionRow.review_id).order_by(DecisionRow.id))
        return [str(r) for r in rows.scalars()]


def post(web: TestClient, path: str, **form: Any) -> Any:
    return web.post(path, data={"csrf": "test-csrf", **form})


def decisions(engine: Engine) -> list[dict[str, Any]]:
    with Session(engine) as session:
        return [d.model_dump(mode="json", exclude_none=True) for d in standing_decisions(session)]


def store_at_revision(path: Path, revision: str, rows: list[dict[str, Any]]) -> Engine:
    """A store migrated to `revision` only, holding `rows` of decision_queue (each a dict
    of its columns, as that revision has them): what a migration after it finds."""
    from alembic import command
    from alembic.config import Config

    from librarian.store.db import MIGRATIONS

    engine = make_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        for row in rows:
            columns = ", ".join(row)
            values = ", ".join(f":{c}" for c in row)
            conn.execute(text(f"INSERT INTO decision_queue ({columns}) VALUES ({values})"), row)
    return engine


def old_row(row_id: int, envelope: str, **columns: Any) -> dict[str, Any]:
    """A decision_queue row as any revision since 0001 holds it."""
    return {
        "id": row_id,
        "chunk_id": f"c{row_id}",
        "content_hash": "h",
        "artifact_id": "a",
        "span_key": "s",
        "status": "review_required",
        "is_update": 0,
        "text": "t",
        "envelope": envelope,
        "created_at": "2026-11-01",
        **columns,
    }


def answer(engine: Engine, check_id: int, who: str, cre_ids: tuple[str, ...]) -> None:
    """`who` answers the QA check `check_id`: the CREs named, or a rejection."""
    action: RequestAction = "choose" if cre_ids else "reject"
    with Session(engine) as session, session.begin():
        asked = DecisionRequest("", action, who, cre_ids)
        answer_check(session, check_id, asked, set(small_hub().ids))


DIGEST = "models-1"  # the models that decided the stored items


def text_sections() -> list[Section]:
    """The TEXTS as the sections of one document."""
    return [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}", "line": i + 1})
        for i, t in enumerate(TEXTS)
    ]


def store_texts(engine: Engine, run: str) -> int:
    """The TEXTS decided by `run` (all to review) and stored; how many were decided again."""
    batch = text_sections()
    result = one_shot.link(
        stub_pipeline(threshold=0.99, top_k=6, top_n=5), batch, run
    )  # all to review
    with Session(engine) as session:
        stored = replace(StoredBatch.linked(run, result, batch, "t"), models_digest=DIGEST)
        written = write(session, stored)
        session.commit()
    return written.redecided
