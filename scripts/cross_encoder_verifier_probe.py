"""Does a cross-encoder earn a place as the verifier's second reader? A probe for issue 59.

Not a reranker (two tries in issue 41 ranked far worse than the retriever): a reader of
the section against each candidate whose word the verifier weighs beside the others.
Pointwise, so that it must read the section:

- every curated section of the frameworks `--holdout-dev` keeps, against each of its CREs
  (positive), the retriever's top misses and the positive's parent and siblings
  (negatives, read against the same section);
- each CRE also against the nearest kept section that does not link to it (a negative
  on the query side: else it learns which CREs are often linked).

Then every dev row `scripts/separation_probe.py --rows` wrote (linked cold by models
trained without the dev frameworks) has its candidates read, and a verifier over the
shipped four features, with and without the reader's confidence in the first suggestion
and its margin over the best other candidate, scores each dev framework by a logistic
fitted on the other dev frameworks. Prints pooled AUROC, the most confident prefix at
<= 1% and <= 3% wrong, per framework, and the reader's own top-1 against the product's.

    python scripts/cross_encoder_verifier_probe.py --rows /tmp/probe.jsonl [--epochs 2]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from train_cross_encoder import LIST, candidate_lists, dev_split  # scripts/ on sys.path

from librarian.catalogue.hub import Hub, path_text
from librarian.models.transformer import default_embedding_model_path
from librarian.retrieval.evidence import EvidenceIndex, Exemplar
from librarian.schemas.evaluation import GoldenRow
from librarian.training.links import (
    DEV_FRAMEWORKS,
    LinkedSection,
)
from librarian.training.verifier import prefix

SHIPPED = ("joint_p1", "solo_p_of_first", "name_overlap", "name_overlap_margin")


def cre_text(hub: Hub, cre: str) -> str:
    node = hub.by_id[cre]
    return f"{node.name} | {path_text(node)}"


def pairs(hub: Hub, kept: list[LinkedSection], vectors: Any, index: Any) -> list[Any]:
    """(section text, CRE, label) for training."""
    exemplars = [Exemplar(s.framework_id, s.section_id, s.style, s.text, s.cre_ids) for s in kept]
    evidence = EvidenceIndex.build(hub.ids, exemplars, vectors)
    curated = [i for i, s in enumerate(kept) if s.curated]
    sections = [kept[i] for i in curated]
    lists = candidate_lists(sections, vectors[curated], evidence, index)
    children: dict[str | None, list[str]] = {}
    for n in hub.nodes:
        children.setdefault(n.parent_id, []).append(n.cre_id)
    out: list[tuple[str, str, float]] = []
    for s, cands in zip(sections, lists, strict=True):
        near: set[str] = set()
        for c in s.cre_ids:
            out.append((s.text, c, 1.0))
            parent = hub.by_id[c].parent_id
            near |= {*children.get(parent, []), *([parent] if parent else [])}
        misses = [c for c in cands if c not in s.cre_ids][:4]
        family = sorted(near - s.cre_ids - set(misses))[:2]
        out += [(s.text, c, 0.0) for c in misses + family]
    # The query side: each linked CRE against the nearest section that does not link it.
    unit = vectors[curated] / np.linalg.norm(vectors[curated], axis=1, keepdims=True)
    similar = unit @ unit.T
    for i, s in enumerate(sections):
        for c in s.cre_ids:
            for j in np.argsort(-similar[i]):
                if c not in sections[j].cre_ids:
                    out.append((sections[j].text, c, 0.0))
                    break
    return out


def fit(hub: Hub, examples: list[Any], args: Any) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    source = str(default_embedding_model_path())
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=1, local_files_only=True
    )
    optim = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()
    started = time.perf_counter()
    for epoch in range(args.epochs):
        random.shuffle(examples)
        for step in range(0, len(examples), args.batch):
            batch = examples[step : step + args.batch]
            enc = tokenizer(
                [q for q, _, _ in batch],
                [cre_text(hub, c) for _, c, _ in batch],
                truncation=True,
                max_length=args.max_tokens,
                padding=True,
                return_tensors="pt",
            )
            logits = model(**enc).logits.squeeze(-1)
            labels = torch.tensor([y for _, _, y in batch])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
            loss.backward()  # type: ignore[no-untyped-call]
            optim.step()
            optim.zero_grad()
            if step // args.batch % 50 == 0:
                took = time.perf_counter() - started
                print(f"epoch {epoch} {step}/{len(examples)} loss {loss.item():.3f} {took:.0f}s")
                sys.stdout.flush()
    model.eval()
    return model, tokenizer


def read(hub: Hub, trained: tuple[Any, Any], text: str, cres: list[str], tokens: int) -> Any:
    import torch

    model, tokenizer = trained
    enc = tokenizer(
        [text] * len(cres),
        [cre_text(hub, c) for c in cres],
        truncation=True,
        max_length=tokens,
        padding=True,
        return_tensors="pt",
    )
    with torch.no_grad():
        return torch.sigmoid(model(**enc).logits.squeeze(-1)).numpy().reshape(-1)


def lofo(x: Any, y: Any, frameworks: Any) -> Any:
    out = np.zeros(len(y))
    for held in sorted(set(frameworks)):
        mask = frameworks == held
        model = LogisticRegression(C=10, max_iter=2000).fit(x[~mask], y[~mask])
        out[mask] = model.predict_proba(x[mask])[:, 1]
    return out


def report(name: str, scores: Any, y: Any, frameworks: Any) -> None:
    per = {
        f: round(float(roc_auc_score(y[frameworks == f], scores[frameworks == f])), 3)
        for f in sorted(set(frameworks))
        if 0 < y[frameworks == f].sum() < (frameworks == f).sum()
    }
    print(
        f"{name:44s} AUROC {roc_auc_score(y, scores):.3f}  <=1% prefix "
        f"{prefix(list(scores), list(y), 0.01):4d}  <=3% {prefix(list(scores), list(y), 0.03):4d}"
    )
    print("    " + ", ".join(f"{f} {a}" for f, a in per.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=Path, required=True)
    parser.add_argument("--golden", type=Path, default=Path("data/golden/dev.json"))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    random.seed(args.seed)
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    hub, cached, index, sections = dev_split()
    kept = [s for s in sections if s.framework_id not in DEV_FRAMEWORKS]
    examples = pairs(hub, kept, cached.encode([s.text for s in kept]), index)
    print(f"{len(examples)} pairs, {sum(y for *_, y in examples):.0f} positive")
    trained = fit(hub, examples, args)
    golden = {
        r.id: r for r in (GoldenRow.model_validate(g) for g in json.loads(args.golden.read_text()))
    }
    rows = [json.loads(line) for line in args.rows.read_text().splitlines()]
    first_p, margin, own_right = [], [], 0
    for r in rows:
        cres = [c for c, _ in r["joint"]][:LIST]
        probs = read(hub, trained, golden[r["id"]].input.text, cres, args.max_tokens)
        others = [float(p) for p in probs[1:]]
        first_p.append(float(probs[0]))
        margin.append(float(probs[0]) - max(others, default=0.0))
        own_right += cres[int(np.argmax(probs))] in r["expected"]
    y = np.array([bool(r["correct"]) for r in rows])
    frameworks = np.array([r["framework"] for r in rows])
    print(f"{len(rows)} dev rows; right first: product {int(y.sum())}, the reader {own_right}")
    shipped = np.array([[float(r[f]) for f in SHIPPED] for r in rows])
    reader = np.array([first_p, margin]).T
    report("shown (as shipped)", np.array([float(r["shown_p1"]) for r in rows]), y, frameworks)
    report("the shipped four, refitted on dev LOFO", lofo(shipped, y, frameworks), y, frameworks)
    report("the reader alone (its p of the first)", reader[:, 0], y, frameworks)
    both = np.hstack([shipped, reader])
    report("the shipped four + the reader, dev LOFO", lofo(both, y, frameworks), y, frameworks)


if __name__ == "__main__":
    main()
