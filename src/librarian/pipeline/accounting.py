"""Run accounting: every non-blank input line lands in exactly one outcome."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from librarian.errors import RunError
from librarian.schemas.envelopes import Envelope, LinkProposal, review_reason
from librarian.schemas.records import (
    BatchResult,
    DecisionFacts,
    Outcome,
    RawBatch,
    Rejection,
    RunSummary,
    Skip,
)
from librarian.text import markdown_cell


class AccountingError(RunError):
    """read != linked + review + rejected + skipped: some row went missing or was doubled."""


def _bump(summary: RunSummary, outcome: Outcome, reason: str) -> None:
    bucket = summary.by_reason.setdefault(outcome.value, {})
    bucket[reason] = bucket.get(reason, 0) + 1


def count_envelopes(
    summary: RunSummary, envelopes: Iterable[Envelope], facts: Mapping[str, DecisionFacts]
) -> None:
    for envelope in envelopes:
        if isinstance(envelope, LinkProposal):
            summary.linked += 1
            _bump(summary, Outcome.LINKED, envelope.links[0].link_type)
        else:
            summary.review += 1
            gated = envelope.chunk_id in facts and facts[envelope.chunk_id].unmappable
            _bump(summary, Outcome.REVIEW, review_reason(envelope, gated))


def count_rejections(summary: RunSummary, rejections: Iterable[Rejection]) -> None:
    for rejection in rejections:
        summary.rejected += 1
        _bump(summary, Outcome.REJECTED, rejection.reason.value)


def count_skips(summary: RunSummary, skips: Iterable[Skip]) -> None:
    for skip in skips:
        summary.skipped += 1
        _bump(summary, Outcome.SKIPPED, skip.reason.value)


def check_accounting(summary: RunSummary) -> None:
    decided = summary.linked + summary.review + summary.rejected + summary.skipped
    if decided != summary.read:
        raise AccountingError(
            f"read {summary.read} lines but accounted for {decided} "
            f"(linked {summary.linked} + review {summary.review} + "
            f"rejected {summary.rejected} + skipped {summary.skipped})"
        )
    if summary.lines_total != summary.read + summary.blank_lines:
        raise AccountingError(
            f"{summary.lines_total} lines in the input but {summary.read} read "
            f"+ {summary.blank_lines} blank"
        )


def close_out(summary: RunSummary, stored: Mapping[str, int] | None = None) -> None:
    """The summary's last fields, checked: every line accounted for. `stored`: what a
    database sink stored (commit mode)."""
    summary.finished_at = datetime.now(UTC).isoformat()
    summary.timings_s = {k: round(v, 4) for k, v in summary.timings_s.items()}
    if stored is not None:
        summary.stored = dict(stored)
    check_accounting(summary)


def add_timings(summary: RunSummary, timings: Mapping[str, float]) -> None:
    for stage, seconds in timings.items():
        summary.timings_s[stage] = summary.timings_s.get(stage, 0.0) + seconds


def record_batch(
    summary: RunSummary,
    raw: RawBatch,
    result: BatchResult,
    rejections: list[Rejection],
    skips: list[Skip],
) -> None:
    """Count one batch: its lines, and the outcome of every one of them."""
    summary.batches += 1
    summary.lines_total += len(raw.lines) + raw.blank_lines
    summary.blank_lines += raw.blank_lines
    summary.read += len(raw.lines)
    summary.explicit_fast_path += result.explicit
    summary.truncated_for_model += result.truncated
    for decision in result.routing:
        counts = summary.routing
        counts["routed"] = counts.get("routed", 0) + 1
        counts[decision.effective] = counts.get(decision.effective, 0) + 1
        if len(decision.selected) < len(decision.collections):
            counts["narrowed"] = counts.get("narrowed", 0) + 1
        if decision.widened:
            counts["widened"] = counts.get("widened", 0) + 1
    count_envelopes(summary, result.envelopes, result.facts)
    count_rejections(summary, rejections)
    count_skips(summary, skips)
    add_timings(summary, result.timings_s)


def record_sources(summary: RunSummary, statuses: dict[str, dict[str, Any]]) -> None:
    """Where each source linked in one window stands. A later window's status is the
    source's as a whole (it links its rows with the earlier windows' stored items)."""
    summary.sources.update(statuses)


def summary_markdown(summary: RunSummary) -> str:
    """The run summary as the Markdown a Prefect artifact shows."""
    lines = [
        f"# librarian run {markdown_cell(summary.run_id)} ({summary.mode})",
        "",
        f"Input: {markdown_cell(summary.input)} · outputs: {markdown_cell(summary.out_dir)}"
        + (f" · database: {markdown_cell(summary.database)}" if summary.database else ""),
        "",
        "| outcome | count | by reason |",
        "|---|---:|---|",
    ]
    for outcome in Outcome:
        reasons = summary.by_reason.get(outcome.value, {})
        detail = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
        lines.append(f"| {outcome.value} | {getattr(summary, outcome.value)} | {detail} |")
    lines.append(f"| **read** | **{summary.read}** | {summary.blank_lines} blank lines |")
    if summary.reading:
        lines += ["", *(f"- read: {markdown_cell(line)}" for line in summary.reading)]
    if summary.withdrawn:
        lines += ["", *(f"- withdrawn: {markdown_cell(line)}" for line in summary.withdrawn)]
    lines += ["", "| stage | seconds |", "|---|---:|"]
    lines += [f"| {stage} | {seconds:.2f} |" for stage, seconds in summary.timings_s.items()]
    models = ", ".join(f"{k}: {v}" for k, v in summary.models.items() if v)
    lines += [
        "",
        f"Cut: each source's own, in the table below (a section linked alone: "
        f"{summary.threshold:.3f}); explicit fast path {summary.explicit_fast_path}; "
        f"cut to fit a model {summary.truncated_for_model}.",
        "",
        f"Models: {models}",
        "",
        f"Retriever: {summary.retriever}",
        "",
        "Routing: " + (", ".join(f"{k} {v}" for k, v in summary.routing.items()) or "none"),
    ]
    if summary.sources:
        lines += ["", *_sources_table(summary.sources)]
    if summary.stored:
        stored = ", ".join(f"{k} {v}" for k, v in summary.stored.items())
        lines += ["", f"Stored: {stored}"]
    lines += ["", "Files: " + ", ".join(markdown_cell(p) for p in summary.outputs.values())]
    return "\n".join(lines) + "\n"


MAX_SUMMARY_SOURCES = 50  # the largest; a queue of many one-row sources lists no more


def _sources_table(sources: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The largest sources' cuts and what decided them, then how many more there are
    (summary.json has every one)."""
    shown = sorted(sources.items(), key=lambda kv: (-kv[1]["items"], kv[0]))
    lines = ["| source | items | decisions | cut | what decided it |", "|---|---:|---:|---:|---|"]
    for name, st in shown[:MAX_SUMMARY_SOURCES]:
        lines.append(
            f"| {markdown_cell(name)} | {st['items']} | {st['decisions']} | "
            f"{st['threshold']:.3f} | {markdown_cell(st.get('says', ''), 600)} |"
        )
    if len(shown) > MAX_SUMMARY_SOURCES:
        more = len(shown) - MAX_SUMMARY_SOURCES
        lines += ["", f"… and {more} more sources, each in summary.json's `sources`."]
    return lines
