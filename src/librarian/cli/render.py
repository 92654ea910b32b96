"""Everything the CLI prints as a table or a line of results: one place for presentation.
Text from inputs never goes through rich markup (it is printed as plain `Text`), and
never reaches the terminal raw: `plain` shows its control characters, escapes and bidi
controls (`text.terminal_line`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.table import Table
from rich.text import Text

from librarian.cli.common import out
from librarian.text import terminal_line, visible

if TYPE_CHECKING:  # imported where used: `librarian --version` loads no model code
    from librarian.artifacts.card import ModelCard
    from librarian.schemas.envelopes import Envelope
    from librarian.schemas.evaluation import EvalReport, GroupReport
    from librarian.schemas.records import RunSummary
    from librarian.schemas.routing import RoutingDecision


def plain(value: object) -> Text:
    """A cell or line that is printed as it reads: no markup, no highlighting, and what
    would act on the terminal shown instead (a document's heading or file name in a
    "read:" line may carry an ANSI or OSC escape, a bidi override or a line break)."""
    return Text(terminal_line(str(value)))


def run_summary(summary: RunSummary, target: Path) -> None:
    table = Table(title=plain(f"run {summary.run_id} ({summary.mode})"), show_header=True)
    table.add_column("outcome")
    table.add_column("count", justify="right")
    table.add_column("by reason")
    for outcome in ("linked", "review", "rejected", "skipped"):
        reasons = summary.by_reason.get(outcome, {})
        detail = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
        table.add_row(outcome, str(getattr(summary, outcome)), plain(detail))
    table.add_row("read", str(summary.read), f"{summary.blank_lines} blank lines tolerated")
    out.print(table)
    for line in summary.reading:
        out.print(plain(f"read: {line}"))
    for line in summary.withdrawn:
        out.print(plain(f"withdrawn: {line}"))
    # The full audit line (every stage's component and settings) is in summary.json and
    # every envelope's `retrieval.retriever`; a person reads which models decided.
    models = summary.models or {}
    decided_by = models.get("calibrator") or "raw scores (--uncalibrated)"
    out.print(plain(f"models: {models.get('embedding') or '?'}; calibrated by {decided_by}"))
    out.print(
        plain(
            f"explicit fast path: {summary.explicit_fast_path}; "
            f"cut to fit a model: {summary.truncated_for_model}"
        )
    )
    _plans(summary)
    out.print(plain(f"outputs: {target}/"))
    if summary.database:
        stored = ", ".join(f"{k} {v}" for k, v in summary.stored.items())
        out.print(plain(f"database: {summary.database} ({stored})"))


# Sources whose review plan the terminal shows (the largest first); summary.md has all.
PLANS_SHOWN = 5


def _plans(summary: RunSummary) -> None:
    """Each large source's review plan, one line: what its reviewers should decide next."""
    planned = [(name, st) for name, st in summary.sources.items() if st.get("plan")]
    planned.sort(key=lambda x: (-int(x[1].get("items", 0)), x[0]))
    for name, st in planned[:PLANS_SHOWN]:
        out.print(plain(f"review plan, {name}: {st['plan']}"))
    if len(planned) > PLANS_SHOWN:
        out.print(plain(f"review plans of {len(planned) - PLANS_SHOWN} more sources: summary.md"))


def explanation(envelope: Envelope) -> None:
    """One text's candidates and decision, for a person: which text (hidden characters
    shown), every score to 3 decimals, the calibrated confidence as its own column, and
    the cut it was decided against."""
    description, threshold = envelope.retrieval.retriever, envelope.retrieval.threshold
    text = visible(envelope.knowledge.text)
    out.print(plain(f"text: {text[:200]}{'…' if len(text) > 200 else ''}"))
    from librarian.schemas.envelopes import UNMAPPABLE_AUDIT, LinkProposal

    links = envelope.links if isinstance(envelope, LinkProposal) else envelope.suggested_links
    confidence = {link.cre_id: link.confidence for link in links or []}
    table = Table(title=plain(f"candidates ({description})"))
    for column in ("rank", "cre_id", "name", "dense", "+evidence", "rerank", "confidence"):
        table.add_column(column, justify="left" if column in ("cre_id", "name") else "right")
    for rank, cand in enumerate(envelope.retrieval.candidates, start=1):
        table.add_row(
            str(rank),
            cand.cre_id,
            plain(cand.cre_name),
            f"{cand.score_vector:.3f}",
            _score(cand.score_hybrid),
            _score(cand.score_rerank),
            _score(confidence.get(cand.cre_id)),
        )
    out.print(table)
    flags = ", ".join(envelope.update_detection.adversarial_flags) or "none"
    if (update := _update_line(envelope)) is not None:
        out.print(plain(update))
    if isinstance(envelope, LinkProposal):
        link = envelope.links[0]
        said = (
            f"decision: LINK {link.cre_id} ({link.link_type}), confidence "
            f"{link.confidence:.3f} ≥ threshold {threshold:.3f}; flags: {flags}"
        )
        out.print(plain(said))
        return
    out.print(
        plain(
            f"decision: REVIEW ({envelope.reason_code}), threshold {threshold:.3f}; flags: {flags}"
        )
    )
    parts = envelope.retrieval.retriever.split("; ")
    gate = next((p for p in parts if p.startswith(UNMAPPABLE_AUDIT)), None)
    if gate is not None:
        out.print(plain(f"UNMAPPABLE: no CRE covers it well ({gate}); see docs/quality.md"))
    for link in envelope.suggested_links or []:
        out.print(plain(f"  suggest {link.cre_id} confidence {link.confidence:.3f}"))


def _update_line(envelope: Envelope) -> str | None:
    """What update detection found, when it found an update."""
    update = envelope.update_detection
    if not update.is_update:
        return None
    before = f", linked before to {update.prior_document_ref}" if update.prior_document_ref else ""
    return f"update of {update.prior_chunk_id}{before}"


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def routing(decision: RoutingDecision, sizes: dict[str, int]) -> None:
    table = Table(
        title=f"routing: configured {decision.configured}, effective {decision.effective}"
    )
    for column in ("collection", "hubs", "selected", "score", "reason"):
        table.add_column(column)
    for row in decision.collections:
        score = "" if row.score is None else f"{row.score:.3f}"
        table.add_row(
            row.collection,
            str(sizes[row.collection]),
            "yes" if row.selected else "no",
            score,
            plain(row.reason),
        )
    out.print(table)
    widened = " (widened)" if decision.widened else ""
    out.print(plain(f"searches: {', '.join(decision.selected)}{widened}"))


def trained(card: ModelCard, out_dir: Path) -> None:
    oof, data = card.out_of_fold, card.data
    table = Table(title=plain(f"trained {out_dir}/ in {card.seconds} s"))
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("sections (curated, with text)", str(data.sections))
    table.add_row("frameworks seen", ", ".join(data.frameworks_seen))
    table.add_row("frameworks excluded", ", ".join(data.frameworks_excluded) or "none")
    table.add_row("out-of-fold top-1", f"{oof.top1:.3f}")
    table.add_row("out-of-fold ECE", f"{oof.ece:.3f}")
    table.add_row(
        "threshold",
        f"{card.threshold:.3f} (auto-links {oof.auto_linked} of {oof.rows} "
        f"out of fold, {oof.auto_link_wrong} wrong)",
    )
    out.print(table)


def quantized(card: dict[str, Any], out_dir: Path) -> None:
    agreed = card["agreement"]
    out.print(
        plain(
            f"wrote {out_dir}/ ({card['backend']} of {card['source']['name']}) in "
            f"{card['seconds']} s; agreement with the source on {agreed['probe']}: "
            f"mean cosine {agreed['mean_cosine']}, min {agreed['min_cosine']}"
        )
    )


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100.0 * part / whole:.1f}%)" if whole else "0/0"


def _share(part: int, whole: int) -> str:
    """Compact, for tables of many columns (the rows column gives the whole): 33.6%."""
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def eval_report(report: EvalReport, description: str) -> None:
    if report.reviewed is not None:
        reviewed = ", ".join(f"{k} {v}" for k, v in sorted(report.reviewed.items()))
        out.print(plain(f"warm: reviewed first (not scored): {reviewed or 'none'}"))
    else:
        out.print(plain("cold: nothing reviewed"))
    out.print(_overall(report))
    out.print(_per_slice(report))
    out.print(_groups("per text style (linkable rows)", report.per_style, report.recall_at_k.k))
    title = "per text style and framework (linkable rows)"
    out.print(_groups(title, report.per_framework, report.recall_at_k.k))
    for name, st in sorted(report.sources.items()):
        out.print(
            plain(
                f"source {name}: {st['items']} items, {st['decisions']} decisions, cut "
                f"{st['threshold']:.3f}: {st.get('says', '')}"
            )
        )
    out.print(plain(f"pipeline: {description}"))


def _overall(report: EvalReport) -> Table:
    table = Table(title=f"eval: {report.rows} rows")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("explicit fast path", _pct(report.explicit.correct, report.explicit.total))
    r = report.recall_at_k
    table.add_row(f"recall@{r.k} (any / all)", f"{_pct(r.any_hit, r.total)} / {r.all_hit}")
    table.add_row(
        "top-1 retriever", _pct(report.top1.retriever.correct, report.top1.retriever.total)
    )
    table.add_row("top-1 final", _pct(report.top1.final.correct, report.top1.final.total))
    table.add_row("ECE", f"{report.calibration.ece:.4f} ({report.calibration.bins} bins)")
    d = report.decision
    table.add_row("threshold", f"{d.threshold:.3f}")
    auto = d.auto_link.correct + d.auto_link.wrong
    table.add_row("auto-linked right", _pct(d.auto_link.correct, d.auto_link.expected_linked))
    table.add_row("auto-links wrong", _pct(d.auto_link.wrong, auto))
    table.add_row("expected review routed", _pct(d.review.routed, d.review.expected_review))
    return table


def _per_slice(report: EvalReport) -> Table:
    slices = Table(title="per slice")
    for column in ("slice", "rows", "top-1", "auto-linked", "reviewed"):
        slices.add_column(column, justify="left" if column == "slice" else "right")
    for name, entry in report.per_slice.items():
        slices.add_row(
            name,
            str(entry.total),
            str(entry.top1_correct),
            str(entry.auto_linked),
            str(entry.reviewed),
        )
    return slices


def _groups(title: str, groups: dict[str, GroupReport], k: int) -> Table:
    # No side borders or edge padding: fits an 80-column terminal.
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    columns = ("group", "rows", "top-1", f"rec@{k}", "ECE", "conf.", "auto", "wrong")
    for column in columns:  # a group's name is never cut: it is what the row is about
        group = column == "group"
        table.add_column(column, justify="left" if group else "right", no_wrap=True)
    for name, g in groups.items():
        table.add_row(
            plain(name),
            str(g.rows),
            _share(g.top1, g.rows),
            _share(g.recall_at_k, g.rows),
            f"{g.ece:.3f}",
            f"{g.mean_confidence:.3f}",
            _share(g.auto_linked, g.rows),
            str(g.auto_link_wrong),
        )
    return table


def _setting(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def plan(plan: dict[str, Any]) -> None:
    """`run --plan`: the stages in order, one a line (ids are never cut short), then where
    rows come from and go."""
    out.print(plain(f"plan ({plan['mode']}, batches of {plan['batch_size']}):"))
    for stage in plan["stages"]:
        parts = [f"  {stage['name']:<13} {stage['component']}"]
        if stage["uses"]:
            parts.append(f"uses {stage['uses']}")
        if stage["settings"]:
            parts.append(", ".join(f"{k}={_setting(v)}" for k, v in stage["settings"].items()))
        if stage["note"]:
            parts.append(f"({stage['note']})")
        out.print(plain("  ".join(parts)))
    out.print(plain(f"source: {plan['source']['kind']} {plan['source']['name']}"))
    for sink in plan["sinks"]:
        out.print(plain(f"sink: {sink['kind']} {sink['name']}"))
    priors = plan["priors"] or "none (update detection not evaluated)"
    out.print(plain(f"prior decisions: {priors}"))
