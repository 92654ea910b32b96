"""A second reader of the section against each candidate CRE, on frozen embeddings (issue 59).

The cross-encoder costs more CPU than a first `make demo` may spend; this reader reads the
same pair through the vectors a run already has: the section's embedding against each
candidate's name, path and children vectors (their element-wise products: a learnt,
weighted cosine per dimension), fitted on (section, candidate) pairs labelled by the
section's links. Every framework's pairs are read by a reader fitted without that
framework, and the verifier (the shipped four, plus the reader's confidence in the first
suggestion and its margin over the best other candidate's) is scored as
`scripts/verifier_readers.py` scores it: each framework by a logistic fitted on the others.

    python scripts/pair_reader_probe.py [--out /tmp/pair-reader]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from verifier_readers import (  # scripts/ is on sys.path when run as a script
    dumped_by_training,
    logistic,
    report,
    scored,
)

import librarian.training.train as train

Array = Any


def captured_index() -> dict[str, Any]:
    """Rebinds `train.train` so that the hub, embedder and index it is given are kept."""
    kept: dict[str, Any] = {}
    namespace = vars(train)
    inner: Callable[..., Any] = namespace["train"]

    def keeping(options: Any, hub: Any, embedder: Any, index: Any, progress: Any) -> Any:
        kept.update(hub=hub, embedder=embedder, index=index)
        return inner(options, hub, embedder, index, progress)

    namespace["train"] = keeping
    return kept


def pair_features(rows: list[dict[str, Any]], kept: dict[str, Any], kinds: str) -> list[Array]:
    index = kept["index"]
    position = {str(cre): i for i, cre in enumerate(index["ids"])}
    texts = kept["texts"]
    out = []
    for r, s in zip(rows, texts, strict=True):
        at = [position[c] for c in r["ids"]]
        parts = []
        if "n" in kinds:
            parts.append(index["name_vectors"][at] * s)
        if "p" in kinds:
            parts.append(index["path_vectors"][at] * s)
        if "c" in kinds:
            parts.append(index["children_vectors"][at] * s)
        out.append(np.hstack(parts))
    return out


def pair_scores(rows: list[dict[str, Any]], pairs: list[Array], strength: float) -> list[Array]:
    from sklearn.linear_model import LogisticRegression

    frameworks = np.array([r["framework"] for r in rows])
    labels = [np.array([c in r["gold"] for c in r["ids"]]) for r in rows]
    out: list[Array] = [None] * len(rows)
    for held in sorted(set(frameworks)):
        train_rows = [i for i in range(len(rows)) if frameworks[i] != held]
        x = np.vstack([pairs[i] for i in train_rows])
        y = np.concatenate([labels[i] for i in train_rows])
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        model = make_pipeline(StandardScaler(), LogisticRegression(C=strength, max_iter=3000))
        model.fit(x, y)
        for i in np.flatnonzero(frameworks == held):
            out[i] = model.predict_proba(pairs[i])[:, 1]
    return out


def readers(rows: list[dict[str, Any]], scores: list[Array]) -> Array:
    first_of, margins, tops = [], [], []
    for r, s in zip(rows, scores, strict=True):
        first = r["first"]
        mine = float(s[first])
        others = [float(v) for j, v in enumerate(s) if j != first]
        first_of.append(mine)
        margins.append(mine - max(others, default=0.0))
        tops.append(float(first == int(np.argmax(s))))
    return np.array([first_of, margins, tops]).T


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/pair-reader"))
    args = parser.parse_args()
    cache = args.out / "probe-rows.json"
    if cache.is_file():
        import json

        rows = json.loads(cache.read_text())
        vectors = np.load(args.out / "probe-vectors.npz")
        kept = {"texts": vectors["texts"], "index": vectors}
    else:
        import json

        kept = captured_index()
        rows = dumped_by_training(args.out)
        texts = kept["embedder"].encode([r["text"] for r in rows])
        index = kept["index"]
        np.savez(
            args.out / "probe-vectors.npz",
            texts=texts,
            ids=np.array(index.ids),
            name_vectors=index.name_vectors,
            path_vectors=index.path_vectors,
            children_vectors=index.children_vectors,
        )
        cache.write_text(json.dumps(rows, default=sorted))
        kept = {"texts": texts, "index": np.load(args.out / "probe-vectors.npz")}
    y = np.array([r["right"] for r in rows])
    frameworks = np.array([r["framework"] for r in rows])
    shipped = np.array([r["shipped"] for r in rows])
    print(f"{len(rows)} rows, {int(y.sum())} right first, {len(set(frameworks))} frameworks")
    report("the shipped verifier", scored(shipped, y, frameworks, logistic), y, frameworks)
    raw = pair_features(rows, kept, "n")
    hits = sum(
        r["ids"][int(np.argmax(p.sum(1)))] in r["gold"] for r, p in zip(rows, raw, strict=True)
    )
    print(f"name cosine alone: its first right {hits} of {len(rows)}")
    for kinds in ("n", "npc"):
        pairs = pair_features(rows, kept, kinds)
        for strength in (0.1, 1.0):
            scores = pair_scores(rows, pairs, strength)
            extra = readers(rows, scores)
            hits = sum(
                r["ids"][int(np.argmax(s))] in r["gold"] for r, s in zip(rows, scores, strict=True)
            )
            print(f"pair reader {kinds} C={strength}: its own first right {hits} of {len(rows)}")
            name = f"+ pair reader {kinds} C={strength}"
            report(
                name, scored(np.hstack([shipped, extra]), y, frameworks, logistic), y, frameworks
            )
            report(name + " (alone)", extra[:, 0], y, frameworks)


if __name__ == "__main__":
    main()
