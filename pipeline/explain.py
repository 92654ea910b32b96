"""One text through the same stages as a run, for `librarian explain`."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.ingest import content_hash
from pipeline.linker import Linker
from schemas.envelopes import Envelope, Locator, Source
from schemas.records import Section

EXPLAIN_RUN_ID = "explain"


def section_from_text(text: str, title: str | None = None) -> Section:
    now = datetime.now(UTC)
    return Section(
        line=1,
        chunk_id="explain",
        artifact_id="explain",
        input_shape="knowledge_item",
        text=text,
        title_hint=title,
        source=Source(type="url", url="about:explain", committed_at=now),
        locator=Locator(kind="url", url="about:explain", title=title),
        content_hash=content_hash(text),
    )


def explain_text(linker: Linker, text: str, title: str | None = None) -> Envelope:
    return linker.link([section_from_text(text, title)], EXPLAIN_RUN_ID).envelopes[0]
