"""Ablation on leave-one-framework-out dev: what each candidate part buys over zero-shot.

Every variant ranks all hubs for each curated, readable section of a held-out framework,
using only links from the *other* frameworks (exemplars, learned weights, the
cross-encoder). Two protocols:

- dev: the five dev frameworks held out together (as `make dev-eval` does);
- lofo: every framework with text held out in turn (more rows, more power).

Each variant's top-1 is compared with zero-shot's on the same rows by an exact McNemar
test (two-sided binomial on the discordant rows). Prints a markdown table.

    python scripts/ablation.py [--cross-encoder] [--ce-epochs 3]
    python scripts/ablation.py --gate-gaps 0.01,0.03 [--ce-epochs 1]   # gated rerank on dev

The cross-encoder variant trains a MiniLM cross-encoder (listwise distillation of the
zero-shot scores plus the curated labels) for each run: ~5 min an epoch on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from librarian.catalogue.hub import Hub, load_hub
from librarian.learning.links import (
    DEV_FRAMEWORKS,
    LinkedSection,
    curated_sections,
    load_links,
)
from librarian.models.transformer import SentenceTransformerEmbedder, default_embedding_model_path
from librarian.paths import DEFAULT_HUB, DEFAULT_LINKS

Matrix = NDArray[np.float32]


@dataclass
class Data:
    hub: Hub
    sections: list[LinkedSection]
    texts: list[str]
    text_row: dict[str, int]
    vectors: Matrix  # one row per text
    name: Matrix
    path: Matrix
    enriched: Matrix  # name plus the names of the children


def load(embedder: SentenceTransformerEmbedder) -> Data:
    hub = load_hub(DEFAULT_HUB)
    sections = curated_sections(load_links(DEFAULT_LINKS), known_cres=hub.by_id)
    texts = sorted({s.text for s in sections})
    children: dict[str, list[str]] = defaultdict(list)
    for node in hub.nodes:
        if node.parent_id:
            children[node.parent_id].append(node.name)
    enriched = [
        n.name + (": " + "; ".join(sorted(children[n.cre_id])) if children[n.cre_id] else "")
        for n in hub.nodes
    ]
    return Data(
        hub=hub,
        sections=sections,
        texts=texts,
        text_row={t: i for i, t in enumerate(texts)},
        vectors=embedder.encode(texts),
        name=embedder.encode(hub.name_texts()),
        path=embedder.encode(hub.path_texts()),
        enriched=embedder.encode(enriched),
    )


Scorer = Callable[[Data, Sequence[LinkedSection], set[str]], Matrix]
"""(data, sections to score, frameworks held out) -> scores, one row per section."""


def rows(d: Data, sections: Sequence[LinkedSection]) -> Matrix:
    return d.vectors[[d.text_row[s.text] for s in sections]]


def zero_shot(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    q = rows(d, sections)
    return np.asarray((q @ d.name.T + q @ d.path.T) / 2, dtype=np.float32)


def name_only(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    return np.asarray(rows(d, sections) @ d.name.T, dtype=np.float32)


def path_only(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    return np.asarray(rows(d, sections) @ d.path.T, dtype=np.float32)


def with_children(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    q = rows(d, sections)
    return np.asarray((q @ d.name.T + q @ d.path.T + q @ d.enriched.T) / 3, dtype=np.float32)


def exemplar_max(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    """Per hub, the best cosine to a section other frameworks linked to it."""
    q = rows(d, sections)
    out = np.zeros((len(sections), len(d.hub.ids)), dtype=np.float32)
    index = {c: i for i, c in enumerate(d.hub.ids)}
    members: dict[str, list[int]] = defaultdict(list)
    for s in d.sections:
        if s.framework_id not in held:
            for cre in s.cre_ids:
                members[cre].append(d.text_row[s.text])
    for cre, text_rows in members.items():
        out[:, index[cre]] = (q @ d.vectors[text_rows].T).max(axis=1)
    return out


def with_exemplars(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    return zero_shot(d, sections, held) + 0.5 * exemplar_max(d, sections, held)


def with_lexical(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    """Zero-shot plus 0.3 x TF-IDF cosine (1-2 grams) over name, name and path."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    hub_texts = [f"{n.name} {n.name} {' '.join(n.hierarchy_path)}" for n in d.hub.nodes]
    vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words="english", ngram_range=(1, 2))
    vectorizer.fit(hub_texts + d.texts)  # unsupervised: vocabulary and idf only
    lexical = vectorizer.transform([s.text for s in sections]) @ vectorizer.transform(hub_texts).T
    dense = np.asarray(lexical.toarray(), dtype=np.float32)
    return zero_shot(d, sections, held) + 0.3 * dense


def learned_combination(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
    """Logistic regression over per-candidate features, fitted on the other frameworks."""
    from sklearn.linear_model import LogisticRegression

    depth = np.array([n.depth for n in d.hub.nodes], dtype=np.float32) / 4
    leaf = np.array([n.is_leaf for n in d.hub.nodes], dtype=np.float32)

    def features(part: Sequence[LinkedSection], held_part: set[str]) -> Matrix:
        q = rows(d, part)
        sn, sp = q @ d.name.T, q @ d.path.T
        z = (sn + sp) / 2
        ex = exemplar_max(d, part, held_part)
        length = np.array([min(len(s.text.split()), 40) / 40 for s in part])[:, None]
        return np.stack(
            [sn, sp, z - z.max(1, keepdims=True), ex, depth + 0 * z, leaf + 0 * z,
             depth * length, leaf * length],
            axis=-1,
        ).astype(np.float32)  # fmt: skip

    train = [s for s in d.sections if s.framework_id not in held]
    x_parts, y_parts = [], []
    for fw in sorted({s.framework_id for s in train}):
        part = [s for s in train if s.framework_id == fw]
        f = features(part, held | {fw})  # exemplars never include the row's own framework
        z = zero_shot(d, part, held)
        for i, s in enumerate(part):
            top = np.argsort(-z[i])[:20]
            x_parts.append(f[i, top])
            y_parts.append([d.hub.ids[j] in s.cre_ids for j in top])
    model = LogisticRegression(C=1.0, max_iter=3000)
    model.fit(np.concatenate(x_parts), np.concatenate(y_parts))
    f = features(sections, held)
    z = zero_shot(d, sections, held)
    out = np.full_like(z, -1e9)
    for i in range(len(sections)):
        top = np.argsort(-z[i])[:20]
        out[i, top] = model.decision_function(f[i, top])
    return out


def cross_encoder(epochs: int) -> Scorer:
    def score(d: Data, sections: Sequence[LinkedSection], held: set[str]) -> Matrix:
        return train_and_score_cross_encoder(d, sections, held, epochs)

    return score


def train_and_score_cross_encoder(
    d: Data,
    sections: Sequence[LinkedSection],
    held: set[str],
    epochs: int,
    retrieval: Scorer = zero_shot,
) -> Matrix:
    """Listwise distillation of zero-shot scores, mixed with curated labels, then rerank."""
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    random.seed(0)
    model = CrossEncoder(
        str(default_embedding_model_path()), num_labels=1, max_length=64, device="cpu"
    )
    net, tok = model.model, model.tokenizer
    hub_text = [" > ".join(n.hierarchy_path) for n in d.hub.nodes]
    labels = {s.text: s.cre_ids for s in d.sections if s.framework_id not in held}
    held_texts = {s.text for s in d.sections if s.framework_id in held}
    queries = [t for t in d.texts if t not in held_texts]
    teacher = zero_shot(d, [LinkedSection("", "", t, frozenset()) for t in queries], set())
    index = {c: i for i, c in enumerate(d.hub.ids)}
    k, temperature = 12, 0.05
    optimizer = torch.optim.AdamW(net.parameters(), lr=8e-5)
    net.train()
    started = time.perf_counter()
    order = list(range(len(queries)))
    for epoch in range(epochs):
        random.shuffle(order)
        for start in range(0, len(order), 4):
            firsts, seconds, targets = [], [], []
            for qi in order[start : start + 4]:
                cand = list(np.argsort(-teacher[qi])[:k])
                gold = labels.get(queries[qi])
                if gold:
                    for g in (index[c] for c in gold):
                        if g not in cand:
                            cand[-1] = g
                t = torch.softmax(torch.tensor(teacher[qi][cand] / temperature), 0)
                if gold:
                    onehot = torch.tensor([float(d.hub.ids[j] in gold) for j in cand])
                    t = 0.5 * t + 0.5 * onehot / onehot.sum()
                firsts += [queries[qi]] * k
                seconds += [hub_text[j] for j in cand]
                targets.append(t)
            enc = tok(firsts, seconds, padding=True, truncation=True, max_length=64,
                      return_tensors="pt")  # fmt: skip
            logits = net(**enc).logits.view(len(targets), k)
            loss = -(torch.stack(targets).float() * torch.log_softmax(logits, 1)).sum(1).mean()
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
            optimizer.zero_grad()
        print(f"  cross-encoder epoch {epoch + 1}/{epochs}: {time.perf_counter() - started:.0f} s")
    net.eval()
    z = retrieval(d, sections, held)
    out = np.full_like(z, -1e9)
    with torch.no_grad():
        for i, s in enumerate(sections):
            top = np.argsort(-z[i])[:20]
            enc = tok([s.text] * len(top), [hub_text[j] for j in top], padding=True,
                      truncation=True, max_length=64, return_tensors="pt")  # fmt: skip
            out[i, top] = net(**enc).logits.view(-1).numpy()
    return out


def gated_rerank_sweep(d: Data, epochs: int, gaps: Sequence[float]) -> None:
    """Rerank only where the shipped retriever's first two scores lie within a gap: the share
    of dev sections the cross-encoder sees, and what top-1 does, against retrieval alone."""
    held = set(DEV_FRAMEWORKS)
    part = [s for s in d.sections if s.framework_id in held]
    dense = with_children(d, part, held)
    ce = train_and_score_cross_encoder(d, part, held, epochs, retrieval=with_children)
    ordered = np.sort(dense, axis=1)
    margin = ordered[:, -1] - ordered[:, -2]
    base = top1_hits(d, part, dense)
    print("\n| rerank where gap < | sections reranked | top-1 | vs retrieval alone (McNemar p) |")
    print("|---|---|---|---|")
    for gap in gaps:
        gated = margin < gap
        scores = np.where(gated[:, None], ce, dense)
        top1 = top1_hits(d, part, scores)
        print(
            f"| {gap} | {gated.sum()}/{len(part)} ({gated.mean():.0%}) "
            f"| {top1.sum()}/{len(top1)} ({top1.mean():.1%}) "
            f"| {int(top1.sum()) - int(base.sum()):+d}, p={mcnemar_p(base, top1):.3f} |",
            flush=True,
        )


def top1_hits(d: Data, sections: Sequence[LinkedSection], scores: Matrix) -> NDArray[np.bool_]:
    best = scores.argmax(axis=1)
    return np.array([d.hub.ids[b] in s.cre_ids for b, s in zip(best, sections, strict=True)])


def recall_hits(
    d: Data, sections: Sequence[LinkedSection], scores: Matrix, k: int = 20
) -> NDArray[np.bool_]:
    top = np.argsort(-scores, axis=1)[:, :k]
    return np.array(
        [any(d.hub.ids[j] in s.cre_ids for j in row) for row, s in zip(top, sections, strict=True)]
    )


def mcnemar_p(base: NDArray[np.bool_], other: NDArray[np.bool_]) -> float:
    from scipy.stats import binomtest

    gained = int((other & ~base).sum())
    lost = int((base & ~other).sum())
    if gained + lost == 0:
        return 1.0
    return float(binomtest(gained, gained + lost, 0.5).pvalue)


def evaluate(d: Data, scorer: Scorer, protocol: str) -> tuple[NDArray[np.bool_], ...]:
    """(top-1 hits, recall@20 hits, ssdf mask) over the protocol's held-out rows."""
    if protocol == "dev":
        folds = [set(DEV_FRAMEWORKS)]
    else:
        folds = [{fw} for fw in sorted({s.framework_id for s in d.sections})]
    top1, recall, ssdf = [], [], []
    for held in folds:
        part = [s for s in d.sections if s.framework_id in held]
        scores = scorer(d, part, held)
        top1.append(top1_hits(d, part, scores))
        recall.append(recall_hits(d, part, scores))
        ssdf.append(np.array([s.framework_id == "nist_ssdf" for s in part]))
    return np.concatenate(top1), np.concatenate(recall), np.concatenate(ssdf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cross-encoder", action="store_true", help="also train and score a CE")
    parser.add_argument("--ce-epochs", type=int, default=3)
    parser.add_argument(
        "--gate-gaps",
        default=None,
        help="comma-separated gaps: only the gated cross-encoder sweep on dev (e.g. 0.01,0.03)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    started = time.perf_counter()
    d = load(SentenceTransformerEmbedder(Path(default_embedding_model_path())))
    if args.gate_gaps:
        gaps = [float(g) for g in args.gate_gaps.split(",")]
        gated_rerank_sweep(d, args.ce_epochs, [*gaps, 2.0])
        print(f"\n({time.perf_counter() - started:.0f} s)")
        return
    variants: list[tuple[str, Scorer, tuple[str, ...]]] = [
        ("dense: name only", name_only, ("dev", "lofo")),
        ("dense: path only", path_only, ("dev", "lofo")),
        ("dense: mean(name, path) — zero-shot baseline", zero_shot, ("dev", "lofo")),
        ("+ children's names in hub text — shipped", with_children, ("dev", "lofo")),
        ("+ exemplar kNN (0.5 x best linked-section cosine)", with_exemplars, ("dev", "lofo")),
        ("+ lexical TF-IDF (0.3 x cosine)", with_lexical, ("dev", "lofo")),
        ("+ learned combination (logistic, 8 features)", learned_combination, ("dev", "lofo")),
    ]
    if args.cross_encoder:
        name = f"+ cross-encoder rerank of top 20 ({args.ce_epochs} epochs)"
        variants.append((name, cross_encoder(args.ce_epochs), ("dev",)))

    base = {p: evaluate(d, zero_shot, p) for p in ("dev", "lofo")}
    print(
        "| variant | protocol | top-1 | recall@20 | nist_ssdf top-1 "
        "| top-1 vs zero-shot (McNemar p) | recall vs zero-shot |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, scorer, protocols in variants:
        for protocol in protocols:
            top1, recall, ssdf = evaluate(d, scorer, protocol)
            b_top1 = base[protocol][0]
            delta = int(top1.sum()) - int(b_top1.sum())
            p = mcnemar_p(b_top1, top1)
            p_recall = mcnemar_p(base[protocol][1], recall)
            print(
                f"| {name} | {protocol} | {top1.sum()}/{len(top1)} ({top1.mean():.1%}) "
                f"| {recall.mean():.1%} | {top1[ssdf].sum()}/{ssdf.sum()} "
                f"| {delta:+d}, p={p:.3f} | p={p_recall:.3f} |",
                flush=True,
            )
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
