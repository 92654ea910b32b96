"""One honest try at a reranker that reads descriptions: a cross-encoder from the MiniLM
weights, trained on the frameworks `--holdout-dev` keeps, scored on the dev frameworks.

Lists: each curated training section (prose and titles) against the shipped retriever's
top 10 for it (evidence from every framework but its own) with the positive's parent and
siblings as hard negatives. The hub side reads "name | path | a linked section's text".
Listwise softmax loss: within a list every candidate shares the query, so a prior over
popular CREs cannot rank the right one first; the query must be read. A standing
query-sensitivity check scores every dev list again with a constant query.

    python scripts/train_cross_encoder.py [--epochs 1] [--lr 2e-5] [--max-tokens 256]
                                          [--out DIR] [--seed 13]

Prints top-1 against the retriever on the dev sections (McNemar) and the query check.
Deterministic for a seed on one machine. Results: docs/quality.md.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest, spearmanr

from librarian.catalogue.hub import Hub, load_hub, path_text
from librarian.models.cache import CachingEmbedder, SqliteVectorCache
from librarian.models.load import load_embedder
from librarian.models.seams import Vectors
from librarian.models.transformer import default_embedding_model_path
from librarian.paths import DEFAULT_HUB, DEFAULT_LINKS, DEFAULT_SECTION_TEXTS, librarian_home
from librarian.retrieval.evidence import EvidenceIndex, Exemplar, evidence_bonus
from librarian.retrieval.flat import retrieve
from librarian.retrieval.index import HubIndex, build_index
from librarian.training.links import (
    DEV_FRAMEWORKS,
    LinkedSection,
    linked_sections,
    load_links,
    load_section_texts,
)

LIST = 10


def candidate_lists(
    sections: list[LinkedSection], vectors: Vectors, evidence: EvidenceIndex, index: HubIndex
) -> list[list[str]]:
    out: list[list[str]] = []
    for i, s in enumerate(sections):
        best = evidence.excluding({s.framework_id}).best(vectors[i : i + 1])
        hits = retrieve(vectors[i : i + 1], index, LIST, -1.0, None, evidence_bonus(best))[0]
        out.append([h.cre_id for h in hits])
    return out


def hub_text(hub: Hub, cre: str, described: dict[str, str]) -> str:
    node = hub.by_id[cre]
    return f"{node.name} | {path_text(node)} | {described.get(cre, '')}"[:600]


def training_lists(
    hub: Hub, labelled: list[LinkedSection], lists: list[list[str]]
) -> list[tuple[str, list[str]]]:
    """(query, [positive, negatives...]): the retriever's misses, parent and siblings."""
    children: dict[str | None, list[str]] = {}
    for n in hub.nodes:
        children.setdefault(n.parent_id, []).append(n.cre_id)
    examples = []
    for s, cands in zip(labelled, lists, strict=True):
        hard: set[str] = set()
        for c in s.cre_ids:
            parent = hub.by_id[c].parent_id
            hard |= {*children.get(parent, []), *([parent] if parent else [])}
        negatives = [c for c in cands if c not in s.cre_ids] + sorted(hard - s.cre_ids)
        pool = list(dict.fromkeys(negatives))[: LIST - 1]
        examples += [(s.text, [p, *pool]) for p in sorted(s.cre_ids)[:2]]
    return examples


def dev_split() -> tuple[Hub, CachingEmbedder, HubIndex, list[LinkedSection]]:
    """The hub, the home's embedder (cached), the hub index and every linked section."""
    hub = load_hub(DEFAULT_HUB)
    home = librarian_home()
    embedder = load_embedder(home.embedder_int8 if home.embedder_int8.is_dir() else None)
    name = f"queries-{embedder.fingerprint[:16]}.sqlite"
    cached = CachingEmbedder(embedder, SqliteVectorCache(home.cache / name, embedder.dimension))
    index = build_index(hub, cached, home.cache)
    prose = load_section_texts(DEFAULT_SECTION_TEXTS)
    return hub, cached, index, linked_sections(load_links(DEFAULT_LINKS), prose, hub.by_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--out", type=Path, default=Path("/tmp/librarian-cross-encoder"))
    args = parser.parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    hub, cached, index, sections = dev_split()
    kept = [s for s in sections if s.framework_id not in DEV_FRAMEWORKS]
    vectors = cached.encode([s.text for s in kept])
    exemplars = [Exemplar(s.framework_id, s.section_id, s.style, s.text, s.cre_ids) for s in kept]
    evidence = EvidenceIndex.build(hub.ids, exemplars, vectors)
    rows = [i for i, s in enumerate(kept) if s.curated]
    labelled = [kept[i] for i in rows]
    examples = training_lists(
        hub, labelled, candidate_lists(labelled, vectors[rows], evidence, index)
    )
    described: dict[str, str] = {}
    for s in sorted(kept, key=lambda s: (s.style != "title", len(s.text))):
        for c in s.cre_ids:
            described.setdefault(c, s.text[:200])
    print(f"{len(examples)} training lists from {len(labelled)} sections")
    model, tokenizer = fit(hub, examples, described, args)
    score_dev(
        hub, sections, cached, index, evidence, described, (model, tokenizer), args.max_tokens
    )


def fit(
    hub: Hub, examples: list[tuple[str, list[str]]], described: dict[str, str], args: Any
) -> tuple[Any, Any]:
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
        for step, (query, cands) in enumerate(examples):
            texts = [hub_text(hub, c, described) for c in cands]
            enc = tokenizer(
                [query] * len(cands),
                texts,
                truncation=True,
                max_length=args.max_tokens,
                padding=True,
                return_tensors="pt",
            )
            logits = model(**enc).logits.squeeze(-1)
            loss = torch.nn.functional.cross_entropy(logits.unsqueeze(0), torch.tensor([0]))
            loss.backward()  # type: ignore[no-untyped-call]
            if step % 4 == 3:
                optim.step()
                optim.zero_grad()
            if step % 200 == 0:
                took = time.perf_counter() - started
                print(
                    f"epoch {epoch} step {step}/{len(examples)} loss {loss.item():.3f} {took:.0f}s"
                )
    model.eval()
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    return model, tokenizer


def score_dev(
    hub: Hub,
    sections: list[LinkedSection],
    cached: CachingEmbedder,
    index: HubIndex,
    evidence: EvidenceIndex,
    described: dict[str, str],
    trained: tuple[Any, Any],
    max_tokens: int,
) -> None:
    import torch

    model, tokenizer = trained
    dev = [s for s in sections if s.curated and s.framework_id in DEV_FRAMEWORKS]
    lists = candidate_lists(dev, cached.encode([s.text for s in dev]), evidence, index)

    def scores(query: str, texts: list[str]) -> Any:
        enc = tokenizer(
            [query] * len(texts),
            texts,
            truncation=True,
            max_length=max_tokens,
            padding=True,
            return_tensors="pt",
        )
        return model(**enc).logits.squeeze(-1).numpy()

    retriever, reranked, rho = [], [], []
    with torch.no_grad():
        for s, cands in zip(dev, lists, strict=True):
            texts = [hub_text(hub, c, described) for c in cands]
            real = scores(s.text, texts)
            rho.append(spearmanr(real, scores("security requirement", texts)).statistic)
            retriever.append((s.style, cands[0] in s.cre_ids))
            reranked.append(cands[int(np.argmax(real))] in s.cre_ids)
    for style in ("prose", "title"):
        keep = [k for k, (st, _) in enumerate(retriever) if st == style]
        a = [retriever[k][1] for k in keep]
        b = [reranked[k] for k in keep]
        won = sum(y and not x for x, y in zip(a, b, strict=True))
        lost = sum(x and not y for x, y in zip(a, b, strict=True))
        p = binomtest(won, won + lost).pvalue if won + lost else 1.0
        print(
            f"{style}: {len(keep)} dev sections; retriever top-1 {sum(a)}, cross-encoder "
            f"{sum(b)} (won {won}, lost {lost}, p={p:.3g})"
        )
    print(f"query sensitivity: mean Spearman, real vs constant query, {np.nanmean(rho):.2f}")


if __name__ == "__main__":
    main()
