"""`librarian explain` and `librarian route`: one text through the linker, shown."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from librarian.cli import render
from librarian.cli.common import err, linker_settings, linker_urls, out, unicode_text
from librarian.cli.options import (
    JsonOpt,
    LinkerOptions,
    PriorTextOpt,
    TitleOpt,
    with_linker_options,
)
from librarian.errors import UsageError
from librarian.pipeline import one_shot

TextArg = Annotated[str, typer.Argument(help="the section text, or - for one text a line on stdin")]


def _texts(text: str) -> list[str]:
    if text == "-":
        if sys.stdin is None or sys.stdin.closed:
            raise UsageError("TEXT is - but stdin is closed: pipe the texts in, one a line")
        try:
            texts = [line for line in sys.stdin.buffer.read().decode("utf-8").splitlines()]
        except UnicodeDecodeError as exc:
            raise UsageError(f"the texts on stdin are not UTF-8 (byte {exc.start})") from exc
        texts = [t for t in texts if t.strip()]
    else:
        texts = [unicode_text(text)]
    if not texts or not all(t.strip() for t in texts):
        raise UsageError("TEXT is empty")
    return texts


@with_linker_options
def explain(
    text: TextArg,
    title: TitleOpt = None,
    as_json: JsonOpt = False,
    prior_text: PriorTextOpt = None,
    *,
    linker: LinkerOptions,
) -> None:
    """Show the candidates, scores and decision for one text (no Prefect).

    `-` explains many texts (one a line on stdin) in one process, each in milliseconds.
    """
    texts = _texts(text)
    if prior_text is not None:
        unicode_text(prior_text, "--prior-text")
    settings = linker_settings(linker)
    from librarian.factory import build_pipeline
    from librarian.schemas.envelopes import dump_envelope

    built = build_pipeline(settings, linker_urls(linker))
    for one in texts:
        envelope = one_shot.explain(built, one, title, prior_text)
        if as_json:
            sys.stdout.write(json.dumps(dump_envelope(envelope), ensure_ascii=False) + "\n")
        else:
            render.explanation(envelope)


@with_linker_options
def route(
    text: Annotated[str, typer.Argument(help="the section text")],
    title: TitleOpt = None,
    as_json: JsonOpt = False,
    *,
    linker: LinkerOptions,
) -> None:
    """Show which hub collections one text would search, and why."""
    if not unicode_text(text).strip():
        raise UsageError("TEXT is empty")
    settings = linker_settings(linker)
    from librarian.factory import build_pipeline
    from librarian.pipeline.ingest import section_from_text

    built = build_pipeline(settings, linker_urls(linker))
    section = section_from_text(text, title)
    router = built.retrieve.router
    vector = built.embed.embedder.encode([text])[0] if settings.routing == "auto" else None
    decision = router.route(section, vector)
    if as_json:
        out.print(decision.model_dump_json(), markup=False)
        return
    render.routing(decision, {c: len(ids) for c, ids in router.collections.items()})
    for warning in decision.warnings:
        err.print(f"warning: {warning}", markup=False)
