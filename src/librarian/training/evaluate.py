"""Scores envelopes against a golden set. Pure: it reads decisions, it never fits anything."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from librarian.pipeline import one_shot
from librarian.pipeline.api import Priors
from librarian.pipeline.pipeline import Pipeline
from librarian.policy import GUARANTEES, DecisionPolicy, calibration_sample
from librarian.schemas.envelopes import Candidate, Envelope, LinkProposal, ReviewItem
from librarian.schemas.evaluation import (
    SLICES,
    AutoLink,
    Calibration,
    Correct,
    DecisionReport,
    Draw,
    DrawsSummary,
    EvalReport,
    GoldenRow,
    GroupReport,
    RecallAtK,
    Routed,
    SliceReport,
    Top1,
)
from librarian.schemas.records import History, PriorDecision, Reviewed, Section, SourceHistory
from librarian.training.calibrate import ReliabilityBin, reliability
from librarian.training.golden import framework_of, sections_of, source_of, style_of

CALIBRATION_BINS = 10
EVAL_RUN_ID = "eval"


@dataclass(frozen=True)
class RowOutcome:
    """What the pipeline did with one golden row, reduced to what the metrics need."""

    row: GoldenRow
    auto_linked: bool
    final_top: str | None  # the CRE the pipeline ranked first (or linked)
    retriever_top: str | None
    candidates: tuple[str, ...]  # retriever order
    confidence: float  # of final_top
    reason_code: str | None = None  # a review's reason
    is_update: bool = False

    @property
    def expected(self) -> set[str]:
        return set(self.row.expected.cre_ids or [])

    @property
    def top1_correct(self) -> bool:
        return self.final_top is not None and self.final_top in self.expected

    @property
    def decision_correct(self) -> bool:
        if self.row.expected.decision == "review":
            wanted = self.row.expected.reason_code
            return not self.auto_linked and (wanted is None or wanted == self.reason_code)
        return self.auto_linked and self.top1_correct

    @property
    def scored_for_ranking(self) -> bool:
        return self.row.slice != "explicit" and self.row.expected.decision == "linked"


def _ranked(candidates: Sequence[Candidate], reranked: Sequence[Candidate]) -> list[Candidate]:
    return list(reranked) if reranked else list(candidates)


def outcome_of(row: GoldenRow, envelope: Envelope) -> RowOutcome:
    retrieval = envelope.retrieval
    candidates = tuple(c.cre_id for c in retrieval.candidates)
    retriever_top = candidates[0] if candidates else None
    if isinstance(envelope, LinkProposal):
        link = envelope.links[0]
        return RowOutcome(
            row,
            True,
            link.cre_id,
            retriever_top,
            candidates,
            link.confidence,
            is_update=envelope.update_detection.is_update,
        )
    assert isinstance(envelope, ReviewItem)
    suggestions = envelope.suggested_links or []
    ranked = _ranked(retrieval.candidates, retrieval.reranked)
    top = suggestions[0].cre_id if suggestions else (ranked[0].cre_id if ranked else None)
    confidence = suggestions[0].confidence if suggestions else 0.0
    return RowOutcome(
        row,
        False,
        top,
        retriever_top,
        candidates,
        confidence,
        str(envelope.reason_code),
        envelope.update_detection.is_update,
    )


def score(
    outcomes: Sequence[RowOutcome],
    threshold: float,
    k: int,
    reviewed: Mapping[str, int] | None = None,
    sources: Mapping[str, Mapping[str, object]] | None = None,
) -> EvalReport:
    """`reviewed` (warm): rows per source that stood for its reviewers' decisions; the
    other fields are over `outcomes`, the rows scored."""
    explicit = [o for o in outcomes if o.row.slice == "explicit"]
    ranked = [o for o in outcomes if o.scored_for_ranking]
    ece, _ = calibration_bins(outcomes)
    return EvalReport(
        rows=len(outcomes),
        slices=dict(Counter(o.row.slice for o in outcomes)),
        explicit=Correct(correct=sum(o.decision_correct for o in explicit), total=len(explicit)),
        recall_at_k=RecallAtK(
            k=k,
            any_hit=sum(bool(o.expected & set(o.candidates[:k])) for o in ranked),
            all_hit=sum(o.expected <= set(o.candidates[:k]) for o in ranked),
            total=len(ranked),
        ),
        top1=Top1(
            retriever=Correct(
                correct=sum(o.retriever_top in o.expected for o in ranked), total=len(ranked)
            ),
            final=Correct(correct=sum(o.top1_correct for o in ranked), total=len(ranked)),
        ),
        calibration=Calibration(ece=round(ece, 4), bins=CALIBRATION_BINS),
        decision=_decisions([o for o in outcomes if o.row.slice != "explicit"], threshold),
        per_slice=_per_slice(outcomes),
        update_detection=_update_detection(outcomes),
        per_style=group_reports(ranked, k, lambda o: style_of(o.row)),
        per_framework=group_reports(
            ranked, k, lambda o: f"{style_of(o.row)} {framework_of(o.row)}"
        ),
        reviewed=dict(reviewed) if reviewed is not None else None,
        sources={k: dict(v) for k, v in (sources or {}).items()},
    )


def row_records(outcomes: Sequence[RowOutcome]) -> list[dict[str, object]]:
    """One record per row: what a paired comparison of two evals needs."""
    return [
        {
            "id": o.row.id,
            "group": style_and_framework(o),
            "ranked": o.scored_for_ranking,
            "top1": o.top1_correct,
            "first": o.final_top,
            "auto_linked": o.auto_linked,
            "decision_correct": o.decision_correct,
            "confidence": round(o.confidence, 6),
        }
        for o in outcomes
    ]


def style_and_framework(outcome: RowOutcome) -> str:
    return f"{style_of(outcome.row)} {framework_of(outcome.row)}"


def _decisions(decided: Sequence[RowOutcome], threshold: float) -> DecisionReport:
    auto = [o for o in decided if o.auto_linked]
    auto_right = sum(o.decision_correct for o in auto)
    expected_review = [o for o in decided if o.row.expected.decision == "review"]
    return DecisionReport(
        threshold=threshold,
        auto_link=AutoLink(
            correct=auto_right,
            wrong=len(auto) - auto_right,
            expected_linked=sum(o.row.expected.decision == "linked" for o in decided),
        ),
        review=Routed(
            routed=sum(not o.auto_linked for o in expected_review),
            expected_review=len(expected_review),
        ),
    )


def _per_slice(outcomes: Sequence[RowOutcome]) -> dict[str, SliceReport]:
    per_slice: dict[str, SliceReport] = {}
    for name in SLICES:
        rows = [o for o in outcomes if o.row.slice == name]
        if rows:
            per_slice[name] = SliceReport(
                top1_correct=sum(o.top1_correct for o in rows),
                total=len(rows),
                auto_linked=sum(o.auto_linked for o in rows),
                reviewed=sum(not o.auto_linked for o in rows),
            )
    return per_slice


def group_reports(
    ranked: Sequence[RowOutcome], k: int, key: Callable[[RowOutcome], str]
) -> dict[str, GroupReport]:
    """Top-1, recall@k, calibration and auto-links of the linkable rows, by `key`."""
    groups: dict[str, list[RowOutcome]] = {}
    for o in ranked:
        groups.setdefault(key(o), []).append(o)
    out = {}
    for name, rows in sorted(groups.items()):
        ece, _ = reliability([o.confidence for o in rows], [o.top1_correct for o in rows])
        auto = [o for o in rows if o.auto_linked]
        out[name] = GroupReport(
            rows=len(rows),
            top1=sum(o.top1_correct for o in rows),
            recall_at_k=sum(bool(o.expected & set(o.candidates[:k])) for o in rows),
            ece=round(ece, 4),
            mean_confidence=round(sum(o.confidence for o in rows) / len(rows), 4),
            auto_linked=len(auto),
            auto_link_wrong=sum(not o.top1_correct for o in auto),
        )
    return out


def calibration_bins(outcomes: Sequence[RowOutcome]) -> tuple[float, list[ReliabilityBin]]:
    """Does a confidence of p mean the first-ranked CRE is right p of the time?"""
    ranked = [o for o in outcomes if o.scored_for_ranking]
    return reliability(
        [o.confidence for o in ranked], [o.top1_correct for o in ranked], CALIBRATION_BINS
    )


def reliability_by_style(
    outcomes: Sequence[RowOutcome],
) -> dict[str, tuple[float, list[ReliabilityBin]]]:
    """ECE and its bins for the linkable rows of each text style."""
    ranked = [o for o in outcomes if o.scored_for_ranking]
    out: dict[str, tuple[float, list[ReliabilityBin]]] = {}
    for style in sorted({style_of(o.row) for o in ranked}):
        rows = [o for o in ranked if style_of(o.row) == style]
        out[style] = reliability(
            [o.confidence for o in rows], [o.top1_correct for o in rows], CALIBRATION_BINS
        )
    return out


def _update_detection(outcomes: Sequence[RowOutcome]) -> Correct | None:
    checked = [o for o in outcomes if o.row.expected.is_update is not None]
    if not checked:
        return None
    right = sum(o.is_update == o.row.expected.is_update for o in checked)
    return Correct(correct=right, total=len(checked))


def golden_priors(rows: Sequence[GoldenRow], sections: Sequence[Section]) -> Priors:
    """A golden row's `prior_text` is the span's prior decision (never linked: the golden
    format records no prior CRE); every other row was checked and has none."""
    return {
        section.span_key: PriorDecision(f"golden-prior:{row.id}", row.input.prior_text, None)
        for row, section in zip(rows, sections, strict=True)
        if row.input.prior_text is not None
    }


def gate_failures(report: EvalReport, max_ece: float = 0.10) -> list[str]:
    failures: list[str] = []
    if report.explicit.total and report.explicit.correct < report.explicit.total:
        failures.append(
            f"explicit fast path right on {report.explicit.correct} of {report.explicit.total}"
        )
    if report.calibration.ece >= max_ece:
        failures.append(f"ECE {report.calibration.ece:.3f} >= {max_ece}")
    return failures


def run_golden(
    pipeline: Pipeline,
    rows: Sequence[GoldenRow],
    reviewed: Sequence[GoldenRow] = (),
    progress: Callable[[int], None] | None = None,
) -> GoldenRun:
    """Every golden row through validation and the same pipeline a run uses, each source
    linked as a whole, with the rows' prior texts as prior decisions (update detection
    evaluated). `reviewed`: rows whose expected links stand for their source's reviewers'
    decisions (never scored)."""
    sections = sections_of(rows)
    priors = golden_priors(rows, sections)
    history = golden_history(reviewed)
    by_source: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_source.setdefault(source_of(row), []).append(i)
    found: dict[int, RowOutcome] = {}
    sources: dict[str, dict[str, object]] = {}
    for indices in by_source.values():
        batch = [sections[i] for i in indices]
        result = one_shot.link(pipeline, batch, EVAL_RUN_ID, priors=priors, history=history)
        sources.update(result.sources)
        for i, envelope in zip(indices, result.envelopes, strict=True):
            found[i] = outcome_of(rows[i], envelope)
        if progress:
            progress(len(batch))
    return GoldenRun(
        [found[i] for i in range(len(rows))],
        dict(Counter(source_of(r) for r in reviewed)),
        sources,
        people_links(reviewed),
    )


def people_links(reviewed: Sequence[GoldenRow]) -> dict[str, int]:
    """By source: the links its reviewers made, one a section (rows of one span key, a
    title and its prose, are one requirement, as a cut counts them)."""
    keys: dict[str, set[str]] = {}
    for row, section in zip(reviewed, sections_of(reviewed), strict=True):
        if row.expected.cre_ids:
            keys.setdefault(source_of(row), set()).add(section.span_key)
    return {source: len(found) for source, found in keys.items()}


@dataclass(frozen=True)
class GoldenRun:
    outcomes: list[RowOutcome]
    reviewed: dict[str, int]  # by source: rows standing for its reviewers' decisions
    sources: dict[str, dict[str, object]]  # where each source stood (C.5)
    reviewed_links: dict[str, int] = field(default_factory=dict)  # ... that linked a CRE


def golden_history(reviewed: Sequence[GoldenRow]) -> History:
    """Reviewed golden rows as their sources' history: the CREs linked, the decisions."""
    sections = sections_of(reviewed)
    out: dict[str, SourceHistory] = {}
    for row, section in zip(reviewed, sections, strict=True):
        known = out.get(section.source_key, SourceHistory())
        cres = tuple(row.expected.cre_ids or ())
        decided = Reviewed(section.span_key, section.text, section.title_hint, cres)
        out[section.source_key] = SourceHistory(
            known.linked | set(cres), (*known.reviewed, decided)
        )
    return out


def product_reviewed(
    pipeline: Pipeline,
    rows: Sequence[GoldenRow],
    k: int,
    progress: Callable[[int], None] | None = None,
    salt: str = "",
) -> tuple[list[GoldenRow], list[GoldenRow]]:
    """The `k` rows of each source the product would have its reviewers decide first
    (`policy.calibration_sample`), and the rest. It chooses from a cold run over the rows'
    text: no label, of a chosen row or any other, is read to choose. `salt`: added to
    each source's seed (another draw of the same design)."""
    cold = run_golden(pipeline, rows, progress=progress)
    chosen: set[int] = set()
    for indices in model_rows(cold).values():
        confidences = [cold.outcomes[i].confidence for i in indices]
        seed = source_of(rows[indices[0]]) + salt
        policy = pipeline.policy
        picks = calibration_sample(confidences, k, seed, policy)
        chosen.update(indices[j] for j in picks)
    reviewed = [rows[i] for i in sorted(chosen)]
    return reviewed, [row for i, row in enumerate(rows) if i not in chosen]


def model_rows(cold: GoldenRun) -> dict[str, list[int]]:
    """Each source's rows the models decided (indices into its outcomes): the ones a
    reviewer can be asked for (a cited CRE needs no review)."""
    by_source: dict[str, list[int]] = {}
    for i, outcome in enumerate(cold.outcomes):
        if outcome.candidates:
            by_source.setdefault(source_of(outcome.row), []).append(i)
    return by_source


def random_reviewed(
    rows: Sequence[GoldenRow], k: int, seed: int
) -> tuple[list[GoldenRow], list[GoldenRow]]:
    """`k` linked rows of each source drawn at random (seeded), standing for its
    reviewers' decisions, and the rest: a team that reviewed a random sample."""
    draw = random.Random(seed)
    by_source: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if row.expected.decision == "linked" and row.slice != "explicit":
            by_source.setdefault(source_of(row), []).append(i)
    chosen = {
        i for indices in by_source.values() for i in draw.sample(indices, min(k, len(indices)))
    }
    return [r for i, r in enumerate(rows) if i in chosen], [
        r for i, r in enumerate(rows) if i not in chosen
    ]


def _wrong_share(outcomes: Sequence[RowOutcome]) -> float | None:
    auto = [o for o in outcomes if o.auto_linked and o.row.slice != "explicit"]
    return sum(not o.decision_correct for o in auto) / len(auto) if auto else None


def realised(auto: int, wrong: int, people: int, guarantee: str) -> float | None:
    """The share the guarantee named `guarantee` bounds, measured (`Guarantee.realised`)."""
    return GUARANTEES[guarantee].realised(auto, wrong, people)


def draw_of(
    seed: int, golden: GoldenRun, certified_after: Mapping[str, int | None] | None = None
) -> Draw:
    """What one draw did and what its largest source's run said."""
    scored = [o for o in golden.outcomes if o.scored_for_ranking]
    counts = Counter(source_of(o.row) for o in golden.outcomes)
    largest = max(sorted(counts), key=lambda s: counts[s])
    mine = [o for o in golden.outcomes if source_of(o.row) == largest]
    said = next((v for key, v in golden.sources.items() if key.endswith("/" + largest)), {})
    cut = said.get("cut") if isinstance(said, dict) else None
    if not isinstance(cut, dict) or cut.get("basis") == "none":
        cut = None  # the run linked nothing of it, and said so
    guarantee = str(cut.get("guarantee", "bound")) if isinstance(cut, dict) else None
    auto = [o for o in mine if o.auto_linked and o.row.slice != "explicit"]
    wrong = sum(not o.decision_correct for o in auto)
    people = golden.reviewed_links.get(largest, 0)
    return Draw(
        seed=seed,
        auto_linked_share=round(sum(o.auto_linked for o in scored) / max(1, len(scored)), 4),
        wrong_share=_wrong_share(golden.outcomes),
        largest_source=largest,
        source_auto_linked=sum(o.auto_linked and o.row.slice != "explicit" for o in mine),
        source_wrong_share=_wrong_share(mine),
        stated_estimate=cut.get("estimated_wrong") if isinstance(cut, dict) else None,
        stated_bound=cut.get("upper_bound") if isinstance(cut, dict) else None,
        guarantee=guarantee,
        realised_share=realised(len(auto), wrong, people, guarantee) if guarantee else None,
        certified_after=(certified_after or {}).get(largest),
    )


def summarise_draws(draws: Sequence[Draw], policy: DecisionPolicy) -> DrawsSummary:
    wrong = [d.wrong_share for d in draws if d.wrong_share is not None]
    over_bound = [
        d
        for d in draws
        if d.realised_share is not None
        and d.stated_bound is not None
        and d.realised_share > d.stated_bound + 1e-9
    ]
    return DrawsSummary(
        draws=len(draws),
        risk=policy.risk,
        budget=policy.budget,
        confidence=policy.confidence,
        mean_auto_linked=round(sum(d.auto_linked_share for d in draws) / max(1, len(draws)), 4),
        mean_wrong=round(sum(wrong) / len(wrong), 4) if wrong else 0.0,
        share_over_budget=round(
            sum(w > policy.budget + 1e-9 for w in wrong) / max(1, len(draws)), 4
        ),
        share_over_bound=round(len(over_bound) / max(1, len(draws)), 4),
    )
