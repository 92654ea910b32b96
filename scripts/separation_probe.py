"""Which confidence ranks right first suggestions above wrong ones? A probe for issue 59.

Links the dev golden rows cold with models trained without the dev frameworks
(`librarian train --out models-dev --holdout-dev`) three times: each source as a whole with
the joint calibrator's confidence (as shipped before issue 59), the same with the
verifier's (`artifacts.verifier`, the shown confidence since; it must leave every first
suggestion as it was), and each section alone (`--source-level off`). For every ranked
row it reads signals of the first suggestion (the shown and the joint confidence, its
margin over the second, the section-alone calibrator's confidence in the same CRE, the
section-alone first confidence, agreement, the share of the CRE name's words the text
says and its margin over the other candidates', and each source's mean of the first two)
and reports:

- each signal's AUROC for "the first suggestion is right", pooled and per framework;
- logistic verifiers over a few of them, each framework scored by a fit on the others
  (leave-one-framework-out), with the most confident prefix at <= 1% and <= 3% wrong.

It measures what each reader reaches (docs/quality.md); `shown_p1` is the one shipped.

    python scripts/separation_probe.py --models models-dev [--rows probe.jsonl]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from librarian.artifacts.verifier import content_words, features, name_overlaps
from librarian.catalogue.hub import load_hub
from librarian.factory import build_pipeline
from librarian.paths import DEFAULT_HUB, librarian_home
from librarian.pipeline import one_shot
from librarian.schemas.envelopes import Envelope, LinkProposal
from librarian.schemas.evaluation import GoldenRow
from librarian.settings import LinkerSettings
from librarian.training.evaluate import EVAL_RUN_ID, golden_priors, outcome_of
from librarian.training.golden import framework_of, sections_of, source_of

SIGNALS = (
    "shown_p1",
    "joint_p1",
    "joint_margin",
    "solo_p_of_first",
    "solo_p1",
    "solo_margin",
    "agree",
    "name_overlap",
    "name_overlap_margin",
    "source_mean_joint_p1",
    "source_mean_solo_p1",
)
VERIFIERS = (
    ("joint_p1",),
    ("solo_p_of_first",),
    ("joint_p1", "solo_p_of_first", "solo_p1", "source_mean_joint_p1", "source_mean_solo_p1"),
    ("joint_p1", "solo_p_of_first", "name_overlap", "name_overlap_margin"),
    SIGNALS[1:],
)


def envelopes(
    rows: Sequence[GoldenRow], models: Path, level: str, verified: bool = False
) -> list[Envelope]:
    settings = LinkerSettings(
        models_dir=models, cache_dir=librarian_home(None).cache, source_level=level
    )
    pipeline = build_pipeline(settings)
    if not verified:  # the joint calibrator's own confidence, as shipped before issue 59
        pipeline.source_level.verifier = None
    sections = sections_of(rows)
    priors = golden_priors(rows, sections)
    by_source: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_source.setdefault(source_of(row), []).append(i)
    found: dict[int, Envelope] = {}
    for indices in by_source.values():
        result = one_shot.link(pipeline, [sections[i] for i in indices], EVAL_RUN_ID, priors=priors)
        found.update(zip(indices, result.envelopes, strict=True))
    return [found[i] for i in range(len(rows))]


def suggested(envelope: Envelope) -> list[tuple[str, float]]:
    if isinstance(envelope, LinkProposal):
        return [(link.cre_id, link.confidence) for link in envelope.links]
    return [(s.cre_id, s.confidence) for s in envelope.suggested_links or []]


def probe_rows(rows: Sequence[GoldenRow], models: Path) -> list[dict[str, object]]:
    joint, solo = envelopes(rows, models, "joint"), envelopes(rows, models, "off")
    shown = envelopes(rows, models, "joint", verified=True)
    names = {n.cre_id: content_words(n.name) for n in load_hub(DEFAULT_HUB).nodes}
    out: list[dict[str, object]] = []
    for row, j, s, v in zip(rows, joint, solo, shown, strict=True):
        outcome = outcome_of(row, j)
        if not outcome.scored_for_ranking:
            continue
        js, ss = suggested(j), suggested(s)
        first = outcome.final_top
        verified = outcome_of(row, v)
        if verified.final_top != first:
            raise SystemExit(f"{row.id}: the verifier changed the first suggestion")
        out.append(
            {
                "id": row.id,
                "framework": framework_of(row),
                "source": source_of(row),
                "correct": outcome.top1_correct,
                "joint_p1": js[0][1] if js else 0.0,
                "shown_p1": verified.confidence,
                "joint_margin": (js[0][1] - js[1][1]) if len(js) > 1 else 0.0,
                "solo_p_of_first": dict(ss).get(first or "", 0.0),
                "solo_p1": ss[0][1] if ss else 0.0,
                "solo_margin": (ss[0][1] - ss[1][1]) if len(ss) > 1 else 0.0,
                "agree": float(bool(ss) and ss[0][0] == first),
                **name_signals(row, [c for c, _ in js], names),
                "joint": js,
                "solo": ss,
                "expected": sorted(row.expected.cre_ids or ()),
                "text": row.input.model_dump_json()[:2000],
            }
        )
    add_source_means(out)
    return out


def name_signals(
    row: GoldenRow, cres: Sequence[str], names: dict[str, frozenset[str]]
) -> dict[str, float]:
    """The share of the first CRE's name the text says, and its margin over the others'."""
    if not cres:
        return {"name_overlap": 0.0, "name_overlap_margin": 0.0}
    words = content_words(row.input.text)  # the section's text, as C.5 reads it
    found = features(0.0, 0.0, name_overlaps(words, [names[c] for c in cres]), 0)
    return {"name_overlap": found[2], "name_overlap_margin": found[3]}


def add_source_means(rows: list[dict[str, object]]) -> None:
    """What a whole source says of its difficulty, known before any decision."""
    for signal in ("joint_p1", "solo_p1"):
        by: dict[object, list[float]] = {}
        for r in rows:
            by.setdefault(r["source"], []).append(float(r[signal]))  # type: ignore[arg-type]
        for r in rows:
            values = by[r["source"]]
            r[f"source_mean_{signal}"] = sum(values) / len(values)


def prefix(scores: np.ndarray, right: np.ndarray, tolerance: float) -> int:
    """Rows in the most confident prefix whose share wrong is at most `tolerance`."""
    order = np.argsort(-scores, kind="stable")
    wrong = np.cumsum(~right[order]) / np.arange(1, len(order) + 1)
    within = np.flatnonzero(wrong <= tolerance)
    return int(within.max() + 1) if len(within) else 0


def lofo(x: np.ndarray, right: np.ndarray, frameworks: np.ndarray) -> np.ndarray:
    """Each framework scored by a verifier fitted on the others."""
    out = np.zeros(len(right))
    for framework in np.unique(frameworks):
        held = frameworks == framework
        model = LogisticRegression(max_iter=1000).fit(x[~held], right[~held])
        out[held] = model.predict_proba(x[held])[:, 1]
    return out


def per_framework(scores: np.ndarray, right: np.ndarray, frameworks: np.ndarray) -> str:
    cells = []
    for framework in np.unique(frameworks):
        mine = frameworks == framework
        if 0 < right[mine].sum() < mine.sum():
            cells.append(f"{framework} {roc_auc_score(right[mine], scores[mine]):.2f}")
    return ", ".join(cells)


def report(rows: list[dict[str, object]]) -> list[str]:
    right = np.array([bool(r["correct"]) for r in rows])
    frameworks = np.array([str(r["framework"]) for r in rows])
    n = len(rows)
    lines = [
        f"{n} ranked rows, {right.mean():.1%} right first",
        "",
        "| signal | AUROC | per framework |",
    ]
    lines.append("|---|---:|---|")
    for signal in SIGNALS:
        v = np.array([float(r[signal]) for r in rows])  # type: ignore[arg-type]
        lines.append(
            f"| {signal} | {roc_auc_score(right, v):.3f} | {per_framework(v, right, frameworks)} |"
        )
    lines += ["", "| verifier (LOFO) | AUROC | <=1% prefix | <=3% prefix | per framework |"]
    lines.append("|---|---:|---:|---:|---|")
    for signals in VERIFIERS:
        x = np.array([[float(r[s]) for s in signals] for r in rows])  # type: ignore[arg-type]
        p = lofo(x, right, frameworks)
        lines.append(
            f"| {' + '.join(signals)} | {roc_auc_score(right, p):.3f} | {prefix(p, right, 0.01)} "
            f"| {prefix(p, right, 0.03)} | {per_framework(p, right, frameworks)} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=Path("models-dev"))
    parser.add_argument("--golden", type=Path, default=Path("data/golden/dev.json"))
    parser.add_argument("--rows", type=Path, help="also write each row's signals here (JSONL)")
    args = parser.parse_args()
    rows = [GoldenRow.model_validate(r) for r in json.loads(args.golden.read_text())]
    found = probe_rows(rows, args.models)
    if args.rows:
        args.rows.write_text("".join(json.dumps(r) + "\n" for r in found))
    print("\n".join(report(found)))


if __name__ == "__main__":
    main()
