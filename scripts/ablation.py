"""What each candidate part buys, leave-one-framework-out over every linked framework,
per text style (prose / title) and per framework, with exact McNemar tests on top-1.

Every section of a framework is scored with evidence from the other frameworks only (its
own framework's links never describe a hub), and anything learnt (the calibrator, the
learning-to-rank model) is fitted on the other frameworks only. The hand-written
sentence-style requirements (data/golden/requirements.json) are scored with evidence and
models from every framework: nothing was fitted on them.

    python scripts/ablation.py [--embedding-model DIR] [--json docs/ablation.json]

Results and their reading: docs/quality.md.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binomtest

from librarian.artifacts.calibrator import top_features
from librarian.catalogue.hub import Hub, load_hub
from librarian.models.cache import CachingEmbedder, SqliteVectorCache
from librarian.models.load import load_embedder
from librarian.paths import DEFAULT_HUB, DEFAULT_LINKS, DEFAULT_SECTION_TEXTS, librarian_home
from librarian.policy.threshold import choose_threshold
from librarian.retrieval.evidence import EVIDENCE_WEIGHT, EvidenceIndex, Exemplar
from librarian.retrieval.flat import combined_vectors
from librarian.retrieval.index import HubIndex, build_index
from librarian.training.calibrate import fit_calibrator, reliability
from librarian.training.golden import load_golden
from librarian.training.links import LinkedSection, linked_sections, load_links, load_section_texts

Matrix = NDArray[np.float32]
TOP_K = 20


@dataclass
class Data:
    hub: Hub
    index: HubIndex
    sections: list[LinkedSection]  # every linked section (exemplars)
    vectors: Matrix
    evidence: EvidenceIndex
    rows: list[int]  # the curated ones: what is scored
    requirements: list[tuple[str, frozenset[str]]]
    requirement_vectors: Matrix


def load(embedding_model: Path | None) -> Data:
    hub = load_hub(DEFAULT_HUB)
    embedder = load_embedder(embedding_model)
    home = librarian_home()
    cache = SqliteVectorCache(
        home.cache / f"queries-{embedder.fingerprint[:16]}.sqlite", embedder.dimension
    )
    cached = CachingEmbedder(embedder, cache)
    index = build_index(hub, cached, home.cache)
    links = load_links(DEFAULT_LINKS)
    sections = linked_sections(links, load_section_texts(DEFAULT_SECTION_TEXTS), hub.by_id)
    vectors = cached.encode([s.text for s in sections])
    exemplars = [
        Exemplar(s.framework_id, s.section_id, s.style, s.text, s.cre_ids) for s in sections
    ]
    evidence = EvidenceIndex.build(hub.ids, exemplars, vectors)
    golden = load_golden(Path("data/golden/requirements.json"))
    requirements = [(r.input.text, frozenset(r.expected.cre_ids or ())) for r in golden]
    rvectors = cached.encode([t for t, _ in requirements])
    rows = [i for i, s in enumerate(sections) if s.curated]
    return Data(hub, index, sections, vectors, evidence, rows, requirements, rvectors)


# --- scorers: (data, query vectors, evidence best-scores) -> (queries, hubs) -------------


def dense3(d: Data, q: Matrix, best: Matrix) -> Matrix:
    return np.asarray(q @ combined_vectors(d.index).T)


def dense2(d: Data, q: Matrix, best: Matrix) -> Matrix:
    return np.asarray(q @ ((d.index.name_vectors + d.index.path_vectors) / 2).T)


Scorer = Callable[[Data, Matrix, Matrix], Matrix]


def with_evidence(base: Scorer, weight: float = EVIDENCE_WEIGHT) -> Scorer:
    def score(d: Data, q: Matrix, best: Matrix) -> Matrix:
        return np.asarray(base(d, q, best) + weight * np.maximum(best, 0.0), dtype=np.float32)

    return score


SCORERS: dict[str, Scorer] = {
    "A today: dense mean(name, path, children)": dense3,
    "B dense mean(name, path)": dense2,
    "C shipped: A + 0.25 best linked section": with_evidence(dense3),
    "D B + 0.25 best linked section": with_evidence(dense2),
    "E A + 0.50 best linked section": with_evidence(dense3, 0.5),
    "F A + 1.00 best linked section": with_evidence(dense3, 1.0),
}


def lofo_best(d: Data) -> dict[int, Matrix]:
    """Each curated section's evidence with its own framework left out."""
    out: dict[int, Matrix] = {}
    for framework in sorted({d.sections[i].framework_id for i in d.rows}):
        rows = [i for i in d.rows if d.sections[i].framework_id == framework]
        best = d.evidence.excluding({framework}).best(d.vectors[rows])
        for k, i in enumerate(rows):
            out[i] = best[k]
    return out


def description_forms(d: Data) -> dict[str, dict[int, Matrix]]:
    """Other forms of a hub's description, per curated section, own framework left out:
    the centroid of its linked sections' vectors, the mean over frameworks of each
    framework's best section (so no framework dominates), and TF-IDF over their text."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    forms: dict[str, dict[int, Matrix]] = {"centroid": {}, "balanced": {}, "tfidf": {}}
    column = {c: j for j, c in enumerate(d.index.ids)}
    for framework in sorted({d.sections[i].framework_id for i in d.rows}):
        rows = [i for i in d.rows if d.sections[i].framework_id == framework]
        others = [k for k, s in enumerate(d.sections) if s.framework_id != framework]
        q = d.vectors[rows]
        members: dict[int, list[int]] = {}
        for k in others:
            for c in d.sections[k].cre_ids:
                members.setdefault(column[c], []).append(k)
        centroid = np.zeros((len(d.index.ids), q.shape[1]), dtype=np.float32)
        docs = [""] * len(d.index.ids)
        for h, ks in members.items():
            m = d.vectors[ks].mean(axis=0)
            centroid[h] = m / max(float(np.linalg.norm(m)), 1e-9)
            docs[h] = " ".join(d.sections[k].text for k in ks)
        balanced = np.zeros((len(rows), len(d.index.ids)), dtype=np.float32)
        for h, ks in members.items():
            by_fw: dict[str, list[int]] = {}
            for k in ks:
                by_fw.setdefault(d.sections[k].framework_id, []).append(k)
            sims = [np.max(q @ d.vectors[v].T, axis=1) for v in by_fw.values()]
            balanced[:, h] = np.mean(sims, axis=0)
        tfidf = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit(
            docs + [d.sections[i].text for i in rows]
        )
        lexical = (
            tfidf.transform([d.sections[i].text for i in rows]) @ tfidf.transform(docs).T
        ).toarray()
        for k, i in enumerate(rows):
            forms["centroid"][i] = q[k] @ centroid.T
            forms["balanced"][i] = balanced[k]
            forms["tfidf"][i] = lexical[k].astype(np.float32)
    return forms


def print_forms(d: Data, table: dict[str, Any], forms: dict[str, dict[int, Matrix]]) -> None:
    shipped = "C shipped: A + 0.25 best linked section"
    q = d.vectors[d.rows]
    print("\n### other forms of description (each added at 0.25 to A)\n")
    print("| form | style | top-1 | recall@20 | vs C (won/lost, p) |")
    print("|---|---|---:|---:|---|")
    for name, per_row in forms.items():
        extra = np.stack([per_row[i] for i in d.rows])
        scores = np.asarray(dense3(d, q, extra) + 0.25 * np.maximum(extra, 0), dtype=np.float32)
        top = ranked(scores, d.index.ids)
        for style in ("prose", "title"):
            keep = [k for k, i in enumerate(d.rows) if d.sections[i].style == style]
            h = [top[k][0] in d.sections[d.rows[k]].cre_ids for k in keep]
            r = [bool(set(top[k]) & d.sections[d.rows[k]].cre_ids) for k in keep]
            w, l_, p = mcnemar(h, [table["hits"][shipped][k] for k in keep])
            print(f"| {name} | {style} | {sum(h)} | {sum(r)} | {w}/{l_}, p={p:.3g} |")


def ranked(scores: Matrix, ids: Sequence[str]) -> list[list[str]]:
    order = np.argsort(-scores, axis=1, kind="stable")[:, :TOP_K]
    return [[ids[j] for j in row] for row in order]


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int, float]:
    """(rows only a got right, rows only b got right, exact two-sided p)."""
    wins = sum(x and not y for x, y in zip(a, b, strict=True))
    losses = sum(y and not x for x, y in zip(a, b, strict=True))
    p = binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    return wins, losses, float(p)


def retrieval_table(d: Data, best: dict[int, Matrix]) -> dict[str, Any]:
    """Top-1 and recall@20 per scorer and style; McNemar against A and against C."""
    q = d.vectors[d.rows]
    b = np.stack([best[i] for i in d.rows])
    hits: dict[str, list[bool]] = {}
    recall: dict[str, list[bool]] = {}
    for name, scorer in SCORERS.items():
        top = ranked(scorer(d, q, b), d.index.ids)
        want = [d.sections[i].cre_ids for i in d.rows]
        hits[name] = [t[0] in w for t, w in zip(top, want, strict=True)]
        recall[name] = [bool(set(t) & w) for t, w in zip(top, want, strict=True)]
    return {"hits": hits, "recall": recall}


def print_retrieval(d: Data, table: dict[str, Any]) -> None:
    styles = [d.sections[i].style for i in d.rows]
    base, shipped = (
        "A today: dense mean(name, path, children)",
        "C shipped: A + 0.25 best linked section",
    )
    for style in ("prose", "title"):
        keep = [k for k, s in enumerate(styles) if s == style]
        print(f"\n### {style}: {len(keep)} curated sections, leave-one-framework-out\n")
        print("| scorer | top-1 | recall@20 | vs A (won/lost, p) | vs C (won/lost, p) |")
        print("|---|---:|---:|---|---|")
        for name in SCORERS:
            h = [table["hits"][name][k] for k in keep]
            r = [table["recall"][name][k] for k in keep]
            va = mcnemar(h, [table["hits"][base][k] for k in keep])
            vc = mcnemar(h, [table["hits"][shipped][k] for k in keep])
            print(
                f"| {name} | {sum(h)} ({100 * sum(h) / len(h):.1f}%) | {sum(r)} "
                f"({100 * sum(r) / len(r):.1f}%) | {va[0]}/{va[1]}, p={va[2]:.3g} | "
                f"{vc[0]}/{vc[1]}, p={vc[2]:.3g} |"
            )


def print_per_framework(d: Data, table: dict[str, Any]) -> None:
    base, shipped = (
        "A today: dense mean(name, path, children)",
        "C shipped: A + 0.25 best linked section",
    )
    print("\n### per framework (top-1, A today -> C shipped)\n")
    print("| style | framework | rows | A | C | won/lost, p |")
    print("|---|---|---:|---:|---:|---|")
    keys = sorted({(d.sections[i].style, d.sections[i].framework_id) for i in d.rows})
    for style, framework in keys:
        group = (style, framework)
        keep = [
            k
            for k, i in enumerate(d.rows)
            if (d.sections[i].style, d.sections[i].framework_id) == group
        ]
        a = [table["hits"][base][k] for k in keep]
        c = [table["hits"][shipped][k] for k in keep]
        w, l_, p = mcnemar(c, a)
        print(
            f"| {style} | {framework} | {len(keep)} | {sum(a)} | {sum(c)} | {w}/{l_}, p={p:.3g} |"
        )


# --- calibration, out of fold ------------------------------------------------------------


def calibration(d: Data, best: dict[int, Matrix]) -> dict[str, Any]:
    """The shipped calibrator's out-of-fold confidence, and the auto-links at a threshold
    chosen (as train chooses it) on the *other* frameworks' out-of-fold rows."""
    scorer = SCORERS["C shipped: A + 0.25 best linked section"]
    q = d.vectors[d.rows]
    b = np.stack([best[i] for i in d.rows])
    scores = scorer(d, q, b)
    feats, right = [], []
    for k, i in enumerate(d.rows):
        order = np.argsort(-scores[k], kind="stable")[:TOP_K]
        feats.append(top_features(scores[k][order].tolist(), b[k][order].tolist()))
        right.append(d.index.ids[order[0]] in d.sections[i].cre_ids)
    frameworks = [d.sections[i].framework_id for i in d.rows]
    oof = _oof(feats, right, frameworks)
    thresholds = {f: _nested_threshold(feats, right, frameworks, f) for f in set(frameworks)}
    return {
        "features": feats,
        "right": right,
        "oof": oof,
        "thresholds": thresholds,
        "frameworks": frameworks,
    }


def _oof(feats: list[Any], right: list[bool], frameworks: list[str]) -> list[float]:
    conf = [0.0] * len(right)
    for held in sorted(set(frameworks)):
        fit = [k for k, f in enumerate(frameworks) if f != held]
        cal = fit_calibrator([feats[k] for k in fit], [right[k] for k in fit])
        for k, f in enumerate(frameworks):
            if f == held:
                conf[k] = cal.probability(feats[k])
    return conf


def _nested_threshold(
    feats: list[Any], right: list[bool], frameworks: list[str], held: str
) -> float:
    keep = [k for k, f in enumerate(frameworks) if f != held]
    inner = _oof([feats[k] for k in keep], [right[k] for k in keep], [frameworks[k] for k in keep])
    return choose_threshold(inner, [right[k] for k in keep], 0.03)


def print_calibration(d: Data, cal: dict[str, Any]) -> None:
    styles = [d.sections[i].style for i in d.rows]
    print("\n### calibration out of fold (shipped retriever and calibrator)\n")
    print(
        "| style | rows | top-1 | mean confidence | ECE | auto-linked (nested threshold) | wrong |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for style in ("prose", "title"):
        keep = [k for k, s in enumerate(styles) if s == style]
        conf = [cal["oof"][k] for k in keep]
        right = [cal["right"][k] for k in keep]
        ece, _ = reliability(conf, right)
        auto = [k for k in keep if cal["oof"][k] >= cal["thresholds"][cal["frameworks"][k]]]
        wrong = sum(not cal["right"][k] for k in auto)
        print(
            f"| {style} | {len(keep)} | {sum(right)} | {np.mean(conf):.3f} | {ece:.3f} | "
            f"{len(auto)} ({100 * len(auto) / len(keep):.1f}%) | {wrong} |"
        )


def print_requirements(d: Data, cal: dict[str, Any]) -> None:
    """The hand-written sentence-style requirements, with everything fitted on all data."""
    q = d.requirement_vectors
    best = d.evidence.best(q)
    calibrator = fit_calibrator(cal["features"], cal["right"])
    threshold = choose_threshold(cal["oof"], cal["right"], 0.03)
    print(f"\n### hand-written requirements ({len(d.requirements)} sentences, one CRE each)\n")
    print("| scorer | top-1 | recall@20 | mean confidence | ECE | auto-linked | wrong |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in (
        "A today: dense mean(name, path, children)",
        "B dense mean(name, path)",
        "C shipped: A + 0.25 best linked section",
    ):
        scores = SCORERS[name](d, q, best)
        top = ranked(scores, d.index.ids)
        right = [t[0] in w for t, (_, w) in zip(top, d.requirements, strict=True)]
        rec = sum(bool(set(t) & w) for t, (_, w) in zip(top, d.requirements, strict=True))
        row = f"| {name} | {sum(right)} | {rec} |"
        if name.startswith("C"):
            conf = []
            for k in range(len(q)):
                order = np.argsort(-scores[k], kind="stable")[:TOP_K]
                conf.append(
                    calibrator.probability(
                        top_features(scores[k][order].tolist(), best[k][order].tolist())
                    )
                )
            ece, _ = reliability(conf, right)
            auto = [r for c, r in zip(conf, right, strict=True) if c >= threshold]
            row += f" {np.mean(conf):.3f} | {ece:.3f} | {len(auto)} | {len(auto) - sum(auto)} |"
        else:
            row += " | | | |"
        print(row)


# --- learning to rank over the shipped shortlist, nested leave-one-framework-out ------------


def ltr_features(
    d: Data, q: Matrix, best: Matrix, counts: NDArray[np.float64]
) -> tuple[NDArray[np.int64], Matrix]:
    """The shipped retriever's top 20 and, per candidate, what a ranker may weigh."""
    name, path = q @ d.index.name_vectors.T, q @ d.index.path_vectors.T
    children = q @ d.index.children_vectors.T
    score = (name + path + children) / 3 + EVIDENCE_WEIGHT * np.maximum(best, 0)
    cand = np.argsort(-score, kind="stable")[:TOP_K]
    depth = np.asarray([n.depth for n in d.hub.nodes], dtype=np.float32)
    leaf = np.asarray([n.is_leaf for n in d.hub.nodes], dtype=np.float32)
    rank = np.log1p(np.arange(len(cand)))
    columns = [
        name[cand],
        path[cand],
        children[cand],
        np.maximum(best[cand], 0),
        (best[cand] > -1).astype(np.float32),
        np.log1p(counts[cand]),
        score[cand],
        score[cand] - score[cand[0]],
        rank,
        depth[cand],
        leaf[cand],
    ]
    return cand, np.column_stack(columns).astype(np.float32)


def ltr(d: Data) -> list[bool]:
    """Top-1 of a logistic ranker over ltr_features, per held-out framework, trained on the
    other frameworks' sections with evidence that excludes both frameworks."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    frameworks = [d.sections[i].framework_id for i in d.rows]
    hits = [False] * len(d.rows)
    for held in sorted(set(frameworks)):
        x, y = [], []
        for other in sorted(set(frameworks) - {held}):
            ev = d.evidence.excluding({held, other})
            rows = [i for i in d.rows if d.sections[i].framework_id == other]
            best = ev.best(d.vectors[rows])
            for k, i in enumerate(rows):
                cand, f = ltr_features(d, d.vectors[i], best[k], ev.counts().astype(np.float64))
                x.append(f)
                y.append([d.index.ids[j] in d.sections[i].cre_ids for j in cand])
        model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=3000))
        model.fit(np.vstack(x), np.concatenate(y))
        ev = d.evidence.excluding({held})
        keep = [k for k, f in enumerate(frameworks) if f == held]
        best = ev.best(d.vectors[[d.rows[k] for k in keep]])
        for n, k in enumerate(keep):
            cand, f = ltr_features(d, d.vectors[d.rows[k]], best[n], ev.counts().astype(np.float64))
            top = cand[int(np.argmax(model.predict_proba(f)[:, 1]))]
            hits[k] = d.index.ids[top] in d.sections[d.rows[k]].cre_ids
    return hits


def print_ltr(d: Data, table: dict[str, Any], hits: list[bool]) -> None:
    shipped = "C shipped: A + 0.25 best linked section"
    print("\n### learning to rank over the shipped top 20 (nested leave-one-framework-out)\n")
    print("| style | rows | shipped top-1 | LTR top-1 | won/lost, p |")
    print("|---|---:|---:|---:|---|")
    for style in ("prose", "title"):
        keep = [k for k, i in enumerate(d.rows) if d.sections[i].style == style]
        c = [table["hits"][shipped][k] for k in keep]
        h = [hits[k] for k in keep]
        w, l_, p = mcnemar(h, c)
        print(f"| {style} | {len(keep)} | {sum(c)} | {sum(h)} | {w}/{l_}, p={p:.3g} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--embedding-model",
        type=Path,
        default=None,
        help="default: the int8 embedder in the librarian home",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the raw hits here")
    parser.add_argument("--ltr", action="store_true", help="also the learning-to-rank model")
    args = parser.parse_args()
    model = args.embedding_model or librarian_home().embedder_int8
    d = load(model if model.is_dir() else None)
    best = lofo_best(d)
    table = retrieval_table(d, best)
    print_retrieval(d, table)
    print_per_framework(d, table)
    cal = calibration(d, best)
    print_calibration(d, cal)
    print_requirements(d, cal)
    print_forms(d, table, description_forms(d))
    if args.ltr:
        print_ltr(d, table, ltr(d))
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": len(d.rows), **table}, indent=1) + "\n")


if __name__ == "__main__":
    main()
