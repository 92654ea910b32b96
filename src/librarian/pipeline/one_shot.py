"""A few texts through the whole pipeline in this process, outside any run: `explain`,
the suggest API, evaluation and training link with these. The runner (`run.py`) over one
batch, with no source, sink or store; the pipeline itself stays the stages and their
description."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from librarian.pipeline.batches import Priors
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import link_sections
from librarian.schemas.envelopes import Envelope
from librarian.schemas.records import PLAIN_URN, BatchResult, History, PriorDecision, Section

EXPLAIN_RUN_ID = "explain"


def link(
    pipeline: Pipeline,
    sections: Sequence[Section],
    run_id: str,
    now: datetime | None = None,
    priors: Priors | None = None,
    history: History | None = None,
) -> BatchResult:
    """C.2-C.10 over validated sections, each source's linked as a whole. `priors`
    None: update detection not evaluated. `history`: what each source already links
    and its reviewers decided (None: nothing known)."""
    return link_sections(pipeline, sections, pipeline.context(run_id, now), priors, history)


def explain(
    pipeline: Pipeline, text: str, title: str | None = None, prior_text: str | None = None
) -> Envelope:
    """One text through the same stages as a run, for `librarian explain`; with
    `prior_text`, as a new version of that text (update detection evaluated)."""
    section = section_from_text(text, title)
    priors = None
    if prior_text is not None:
        priors = {section.span_key: PriorDecision("explain-prior", prior_text, None)}
    return link(pipeline, [section], EXPLAIN_RUN_ID, priors=priors).envelopes[0]


def suggest(
    pipeline: Pipeline, text: str, title: str | None, source: str, history: History
) -> Envelope:
    """One text as a new section of `source` (a source key): linked with what its
    reviewers decided (`history`: its reviewed items, what it links), so that its
    adaptation and its cut apply, as the next run's would."""
    section = as_of_source(section_from_text(text, title), source)
    return link(pipeline, [section], EXPLAIN_RUN_ID, history=history).envelopes[0]


def as_of_source(section: Section, source: str) -> Section:
    """`section` as a section of the source whose key is `source`: a document of that
    name (`schemas.records.source_key_of` reads a plain input's artifact as its source)."""
    moved = section.source.model_copy(update={"type": "url", "url": f"{PLAIN_URN}api"})
    return section.model_copy(update={"source": moved, "artifact_id": source})
