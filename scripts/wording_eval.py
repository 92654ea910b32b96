"""Is this a requirement? The wording classifier against the word list, per house style.

Scores three readers of a paragraph's wording (`pipeline.shapes.wording`): the word list a
paragraph needed before (`segment.states_requirement`: must, shall, should, ...), the
classifier alone, and either of them (what the segmenter uses). On:

- the packaged corpus, each of its styles scored by a classifier fitted on the others;
- the seven policies written blind (`tests/blind_policies*.py`, none of whose text the
  corpus holds): each requirement's text, and each note's (a lead-in ending in ":" left
  out), per house style, by the classifier fitted on the whole corpus, as shipped.

    python scripts/wording_eval.py
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from librarian.pipeline.shapes.segment import states_requirement
from librarian.pipeline.shapes.wording import (
    CORPUS,
    THRESHOLD,
    WordingModel,
    fitted,
    reads_as_requirement,
)

Reader = Callable[[str], bool]


def scored(name: str, texts: Sequence[str], labels: Sequence[bool], read: Reader) -> str:
    said = [read(t) for t in texts]
    kept = sum(s and y for s, y in zip(said, labels, strict=True))
    wrong = sum(s and not y for s, y in zip(said, labels, strict=True))
    right = sum(s == y for s, y in zip(said, labels, strict=True))
    return (
        f"{name:10s} requirements kept {kept}/{sum(labels)}, other text taken "
        f"{wrong}/{len(labels) - sum(labels)}, right {right}/{len(labels)}"
    )


def corpus_by_style() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    styles: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        styles[row["style"]].append(i)
    print(f"corpus: {len(rows)} sentences, {len(styles)} styles, each scored held out")
    for style, held in sorted(styles.items()):
        rest = [r for i, r in enumerate(rows) if i not in set(held)]
        model = fitted([r["text"] for r in rest], [r["requirement"] for r in rest])

        def read(text: str, model: WordingModel = model) -> bool:
            return model.probability(text) >= THRESHOLD

        texts = [rows[i]["text"] for i in held]
        labels = [rows[i]["requirement"] for i in held]
        print(f"  {style}")
        for name, reader in readers(read).items():
            print("    " + scored(name, texts, labels, reader))


def readers(classifier: Reader) -> dict[str, Reader]:
    return {
        "word list": states_requirement,
        "classifier": classifier,
        "either": lambda t: states_requirement(t) or classifier(t),
    }


def blind_by_style() -> None:
    from tests.blind_policies import POLICIES
    from tests.blind_policies_two import POLICIES as HELD_OUT

    print("policies written blind, the classifier fitted on the whole corpus")
    for policy in (*POLICIES, *HELD_OUT):
        notes = [n for n in policy.notes if not n.rstrip().endswith(":")]
        texts = [r.text for r in policy.requirements] + notes
        labels = [True] * len(policy.requirements) + [False] * len(notes)
        print(f"  {policy.name}")
        for name, reader in readers(reads_as_requirement).items():
            print("    " + scored(name, texts, labels, reader))
        missed = [
            t for t, y in zip(texts, labels, strict=True) if y and not reads_as_requirement(t)
        ]
        taken = [t for t, y in zip(texts, labels, strict=True) if not y and reads_as_requirement(t)]
        for text in missed[:3]:
            print(f"      missed: {text[:90]}")
        for text in taken[:3]:
            print(f"      taken:  {text[:90]}")


if __name__ == "__main__":
    corpus_by_style()
    blind_by_style()
