"""More readers for the verifier, tried on its own training rows (issue 59).

Runs `librarian train` into a scratch folder with `fit_verifier` wrapped so that each row
it fits on is kept as it reads it (out of fold: the framework's joint calibrator fitted
without it), then adds each reader to the shipped four and scores every framework by a
logistic fitted on the others (C=10, as shipped): pooled AUROC, the most confident prefix
at <= 1% wrong, and per framework. docs/quality.md ("More readers, tried ...") holds a run.

    python scripts/verifier_readers.py [--out /tmp/verifier-readers]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

import librarian.training.train as train
from librarian.artifacts.calibrator import FEATURES, Calibrator
from librarian.artifacts.verifier import content_words
from librarian.catalogue.hub import Hub, load_hub
from librarian.paths import DEFAULT_HUB
from librarian.training.sources import SourceFit
from librarian.training.verifier import VerifierFit, prefix, readings

Array = Any  # numpy arrays (the project's mypy runs without numpy's plugin)


def kept_rows(
    fit: SourceFit, alone_folds: Mapping[str, Calibrator], hub: Hub
) -> list[dict[str, Any]]:
    rows = []
    for row, shipped, right in zip(
        fit.rows, readings(fit, alone_folds, hub), fit.correct, strict=True
    ):
        framework = row.scored.section.framework_id
        first = row.first(fit.folds[framework], fit.chosen_margin)
        rows.append(
            {
                "framework": framework,
                "text": row.scored.section.text,
                "gold": row.scored.section.cre_ids,
                "ids": list(row.ids),
                "joint": [fit.folds[framework].probability(f) for f, _ in row.candidates],
                "first": first,
                "shipped": list(shipped),
                "right": bool(right),
                "scores": list(row.scored.scores),
                "alone": [
                    alone_folds[framework].probability(f[: len(FEATURES)])
                    for f, _ in row.candidates
                ],
            }
        )
    return rows


def dumped_by_training(out: Path) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    namespace = vars(train)  # the name train_models calls, rebound for this run
    fit_verifier: Callable[..., VerifierFit] = namespace["fit_verifier"]

    def keeping(fit: SourceFit, alone_folds: Mapping[str, Calibrator], hub: Hub) -> VerifierFit:
        kept.extend(kept_rows(fit, alone_folds, hub))
        return fit_verifier(fit, alone_folds, hub)

    namespace["fit_verifier"] = keeping
    from librarian.cli import main

    sys.argv = ["librarian", "train", "--out", str(out), "--force"]
    try:
        main()
    except SystemExit as done:
        if done.code:
            raise
    return kept


def hub_readers(rows: list[dict[str, Any]], hub: Hub) -> dict[str, Array]:
    """Readers of the first suggestion's place in the hub and in its source (2026-12-07):
    where the held-out standard's confident errors were a parent for its child, or a CRE
    the one-to-one assignment gave the wrong one of two sections."""
    links: dict[str, set[str]] = defaultdict(set)  # CRE -> frameworks that link it
    for r in rows:
        for cre in r["gold"]:
            links[cre].add(r["framework"])

    def ancestors(cre: str) -> set[str]:
        out, node = set(), hub.by_id.get(cre)
        while node is not None and node.parent_id:
            out.add(node.parent_id)
            node = hub.by_id.get(node.parent_id)
        return out

    names = {n.cre_id: content_words(n.name) for n in hub.nodes}
    spread: dict[str, int] = defaultdict(int)  # hub names that say each word
    for name in names.values():
        for word in name:
            spread[word] += 1
    rare = {w: math.log(len(names) / (1 + c)) + 1 for w, c in spread.items()}

    def said_rare(words: frozenset[str], cre: str) -> float:
        name = names.get(cre, frozenset())
        total = sum(rare[w] for w in name)
        return sum(rare[w] for w in words & name) / total if total else 0.0

    agree = [float(int(np.argmax(r["alone"])) == r["first"]) for r in rows]
    by_framework: dict[str, list[float]] = defaultdict(list)
    for r, a in zip(rows, agree, strict=True):
        by_framework[r["framework"]].append(a)
    out: dict[str, list[float]] = defaultdict(list)
    for r, a in zip(rows, agree, strict=True):
        first = r["ids"][r["first"]]
        others = set(r["ids"][:10]) - {first}
        node = hub.by_id.get(first)
        words = content_words(r["text"])
        shares = [said_rare(words, c) for c in r["ids"][:10]]
        mine = said_rare(words, first)
        out["the name overlap weighted by rarity among hub names"].append(mine)
        out["its margin over the best other candidate's"].append(
            mine - max((v for j, v in enumerate(shares) if j != r["first"]), default=0.0)
        )
        out["the section-alone first is the joint first"].append(a)
        out["the source's share of such agreement"].append(
            float(np.mean(by_framework[r["framework"]]))
        )
        out["a child of the first among the candidates"].append(
            float(any(first in ancestors(c) for c in others))
        )
        out["a parent of the first among the candidates"].append(
            float(bool(ancestors(first) & others))
        )
        out["frameworks that link the first (log)"].append(
            math.log1p(len(links[first] - {r["framework"]}))
        )
        out["the section's words (log)"].append(math.log1p(len(r["text"].split())))
        out["the first is a leaf"].append(float(hub.is_leaf.get(first, True)))
        out["the first's depth"].append(float(node.depth) if node else 0.0)
        joint = r["joint"]
        out["candidates at half the first's joint or more"].append(
            float(sum(p >= 0.5 * joint[r["first"]] for p in joint) - 1)
        )
    readers = {name: np.array(values)[:, None] for name, values in out.items()}
    weighted = "the name overlap weighted by rarity among hub names"
    margin = readers.pop("its margin over the best other candidate's")
    readers[f"{weighted}, and its margin"] = np.hstack([readers[weighted], margin])
    return readers


def with_framework_intercepts(x: Array, y: Array, frameworks: Array) -> Array:
    """Each framework scored by the slopes of a logistic fitted with one intercept per
    training framework (so the slopes rank within a source, not across sources)."""
    from sklearn.linear_model import LogisticRegression

    oof = np.zeros(len(y))
    for held in sorted(set(frameworks)):
        mask = frameworks == held
        others = sorted(set(frameworks[~mask]))
        dummies = (frameworks[~mask][:, None] == np.array(others)[None, :]).astype(float)
        fitted = LogisticRegression(C=10, max_iter=5000).fit(
            np.hstack([x[~mask], dummies]), y[~mask]
        )
        oof[mask] = x[mask] @ fitted.coef_[0][: x.shape[1]]
    return oof


def extra_readers(rows: list[dict[str, Any]]) -> dict[str, Array]:
    frameworks = [r["framework"] for r in rows]
    words = [content_words(r["text"]) for r in rows]
    seen: dict[str, int] = defaultdict(int)
    for w in words:
        for t in w:
            seen[t] += 1
    idf = {t: math.log(len(rows) / (1 + c)) + 1 for t, c in seen.items()}
    exemplars: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        for cre in r["gold"]:
            exemplars[cre].append(i)

    def said_in_exemplars(i: int, cre: str) -> float:
        total = sum(idf[t] for t in words[i])
        other = [j for j in exemplars.get(cre, []) if frameworks[j] != frameworks[i]]
        if not total or not other:
            return 0.0
        return max(sum(idf[t] for t in words[i] & words[j]) / total for j in other)

    out: dict[str, list[float]] = defaultdict(list)
    for i, r in enumerate(rows):
        first, joint = r["first"], r["joint"]
        others = [p for j, p in enumerate(joint) if j != first]
        out["the joint first-vs-second margin"].append(joint[first] - max(others, default=0.0))
        shares = [said_in_exemplars(i, cre) for cre in r["ids"][:10]]
        mine = said_in_exemplars(i, r["ids"][first])
        out["exemplar share"].append(mine)
        rest = [s for j, s in enumerate(shares) if j != first]
        out["exemplar share margin"].append(mine - max(rest, default=0.0))
        out["first is retrieval's first"].append(float(first == 0))
        out["entropy"].append(-sum(p * math.log(p + 1e-12) for p in joint))
        out["retrieval cosine"].append(r["scores"][0])
        out["retrieval gap"].append(r["scores"][0] - r["scores"][1])
    return {name: np.array(values)[:, None] for name, values in out.items()}


def scored(x: Array, y: Array, frameworks: Array, fit: Callable[[Array, Array], Any]) -> Array:
    oof = np.zeros(len(y))
    for held in sorted(set(frameworks)):
        mask = frameworks == held
        oof[mask] = fit(x[~mask], y[~mask]).predict_proba(x[mask])[:, 1]
    return oof


def logistic(x: Array, y: Array) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=10, max_iter=2000).fit(x, y)


def trees(x: Array, y: Array) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_depth=3, max_iter=150, learning_rate=0.05, min_samples_leaf=30
    ).fit(x, y)


def report(name: str, scores: Array, y: Array, frameworks: Array) -> None:
    from sklearn.metrics import roc_auc_score

    per = {
        f: round(float(roc_auc_score(y[frameworks == f], scores[frameworks == f])), 3)
        for f in sorted(set(frameworks))
        if 0 < y[frameworks == f].sum() < (frameworks == f).sum()
    }
    pooled = roc_auc_score(y, scores)
    sizes = [int((frameworks == f).sum()) for f in per]
    within = float(np.average(list(per.values()), weights=sizes))
    print(
        f"{name:48s} AUROC {pooled:.3f}  within a framework {within:.3f}  "
        f"<=1% prefix {prefix(list(scores), list(y), 0.01):4d}"
    )
    print("    " + ", ".join(f"{f} {a}" for f, a in per.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/verifier-readers"))
    args = parser.parse_args()
    rows = dumped_by_training(args.out)
    y = np.array([r["right"] for r in rows])
    frameworks = np.array([r["framework"] for r in rows])
    shipped = np.array([r["shipped"] for r in rows])
    extra = extra_readers(rows)
    print(f"{len(rows)} rows, {int(y.sum())} right first, {len(set(frameworks))} frameworks")
    report("the shipped verifier", scored(shipped, y, frameworks, logistic), y, frameworks)
    for name, column in extra.items():
        x = np.hstack([shipped, column])
        report(f"+ {name}", scored(x, y, frameworks, logistic), y, frameworks)
    everything = np.hstack([shipped, *extra.values()])
    report("+ all of these", scored(everything, y, frameworks, logistic), y, frameworks)
    report("+ all of these, trees", scored(everything, y, frameworks, trees), y, frameworks)
    hub = load_hub(DEFAULT_HUB)
    placed = hub_readers(rows, hub)
    for name, column in placed.items():
        x = np.hstack([shipped, column])
        report(f"+ {name}", scored(x, y, frameworks, logistic), y, frameworks)
    report(
        "+ all of the hub's and source's",
        scored(np.hstack([shipped, *placed.values()]), y, frameworks, logistic),
        y,
        frameworks,
    )
    report(
        "the shipped four, framework intercepts",
        with_framework_intercepts(shipped, y, frameworks),
        y,
        frameworks,
    )


if __name__ == "__main__":
    main()
