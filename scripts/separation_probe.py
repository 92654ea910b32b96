"""Which confidence ranks right first suggestions above wrong ones? A probe for issue 59.

Links the dev golden rows cold with models trained without the dev frameworks
(`librarian train --out models-dev --holdout-dev`) twice: each source as a whole (what a
run shows) and each section alone (`--source-level off`). For every ranked row it reads
candidate signals of the first suggestion (the joint confidence, its margin over the
second, the section-alone calibrator's confidence in the same CRE, the section-alone
first confidence, agreement, and each source's mean of these) and reports:

- each signal's AUROC for "the first suggestion is right", pooled and per framework;
- logistic verifiers over a few of them, each framework scored by a fit on the others
  (leave-one-framework-out), with the most confident prefix at <= 1% and <= 3% wrong.

Nothing here is shipped: it measures what a second reader could reach (docs/quality.md).

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

from librarian.factory import build_pipeline
from librarian.paths import librarian_home
from librarian.schemas.envelopes import Envelope, LinkProposal
from librarian.schemas.evaluation import GoldenRow
from librarian.settings import LinkerSettings
from librarian.training.evaluate import EVAL_RUN_ID, golden_priors, outcome_of
from librarian.training.golden import framework_of, sections_of, source_of

SIGNALS = (
    "joint_p1",
    "joint_margin",
    "solo_p_of_first",
    "solo_p1",
    "solo_margin",
    "agree",
    "source_mean_joint_p1",
    "source_mean_solo_p1",
)
VERIFIERS = (
    ("joint_p1",),
    ("solo_p_of_first",),
    ("joint_p1", "solo_p_of_first", "solo_p1", "source_mean_joint_p1", "source_mean_solo_p1"),
    SIGNALS,
)


def envelopes(rows: Sequence[GoldenRow], models: Path, level: str) -> list[Envelope]:
    settings = LinkerSettings(
        models_dir=models, cache_dir=librarian_home(None).cache, source_level=level
    )
    pipeline = build_pipeline(settings)
    sections = sections_of(rows)
    priors = golden_priors(rows, sections)
    by_source: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_source.setdefault(source_of(row), []).append(i)
    found: dict[int, Envelope] = {}
    for indices in by_source.values():
        result = pipeline.link([sections[i] for i in indices], EVAL_RUN_ID, priors=priors)
        found.update(zip(indices, result.envelopes, strict=True))
    return [found[i] for i in range(len(rows))]


def suggested(envelope: Envelope) -> list[tuple[str, float]]:
    if isinstance(envelope, LinkProposal):
        return [(link.cre_id, link.confidence) for link in envelope.links]
    return [(s.cre_id, s.confidence) for s in envelope.suggested_links or []]


def probe_rows(rows: Sequence[GoldenRow], models: Path) -> list[dict[str, object]]:
    joint, solo = envelopes(rows, models, "joint"), envelopes(rows, models, "off")
    out: list[dict[str, object]] = []
    for row, j, s in zip(rows, joint, solo, strict=True):
        outcome = outcome_of(row, j)
        if not outcome.scored_for_ranking:
            continue
        js, ss = suggested(j), suggested(s)
        first = outcome.final_top
        out.append(
            {
                "id": row.id,
                "framework": framework_of(row),
                "source": source_of(row),
                "correct": outcome.top1_correct,
                "joint_p1": js[0][1] if js else 0.0,
                "joint_margin": (js[0][1] - js[1][1]) if len(js) > 1 else 0.0,
                "solo_p_of_first": dict(ss).get(first or "", 0.0),
                "solo_p1": ss[0][1] if ss else 0.0,
                "solo_margin": (ss[0][1] - ss[1][1]) if len(ss) > 1 else 0.0,
                "agree": float(bool(ss) and ss[0][0] == first),
            }
        )
    add_source_means(out)
    return out


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
