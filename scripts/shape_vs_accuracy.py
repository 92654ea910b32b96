"""Does a source's unlabelled shape tell an easy source from a hard one? Per framework
(each a source, scored leave-one-framework-out as `train` scores it, every framework in):
top-1 accuracy of what the run would link, its mean out-of-fold confidence, and the shape
a run can see without labels (mean top-1 score and margin, the share of items whose
chosen CRE was their own top-1, the mean number of rival claims).

    python scripts/shape_vs_accuracy.py [--embedder DIR] [--cache DIR]

Research for issue 27 (docs/quality.md, "a cold confidence from the source's shape").
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from librarian.catalogue.hub import load_hub
from librarian.factory import retrieve_stage
from librarian.models.load import load_embedder
from librarian.paths import DEFAULT_HUB, DEFAULT_LINKS, DEFAULT_SECTION_TEXTS, librarian_home
from librarian.retrieval.index import build_index
from librarian.settings import LinkerSettings
from librarian.training.links import links_digest, load_links, load_section_texts
from librarian.training.scoring import score_sections
from librarian.training.sources import fit_sources
from librarian.training.train import TrainOptions, build_evidence, cached, training_sections


def main() -> None:
    home = librarian_home()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", type=Path, default=home.embedder_int8)
    parser.add_argument("--cache", type=Path, default=home.cache)
    args = parser.parse_args()
    hub = load_hub(DEFAULT_HUB)
    embedder = cached(load_embedder(args.embedder), args.cache)
    index = build_index(hub, embedder, args.cache)
    links = load_links(DEFAULT_LINKS)
    options = TrainOptions(
        links=tuple(links),
        links_sources=(str(DEFAULT_LINKS),),
        links_sha256=links_digest(links),
        prose=load_section_texts(DEFAULT_SECTION_TEXTS),
    )
    evidence, labelled = build_evidence(training_sections(options, hub), hub, embedder)
    vectors = evidence.vectors[[x.row for x in labelled]]
    stage = retrieve_stage(LinkerSettings(), hub, index, evidence)
    column = {c: i for i, c in enumerate(index.ids)}
    scored = score_sections([x.section for x in labelled], vectors, stage, evidence, column)
    fit = fit_sources(scored, hub)
    by: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for row, confidence, right in zip(fit.rows, fit.oof, fit.correct, strict=True):
        first = row.candidates[0][0]  # score, margin, evidence, has_evidence, was_top, claimants
        by[row.scored.section.framework_id].append(
            (confidence, float(right), first[0], first[1], first[4], first[5])
        )
    print(f"{'framework':26s} {'rows':>4s} {'top-1':>5s} {'conf':>5s} "
          f"{'score':>6s} {'margin':>6s} {'own':>5s} {'rivals':>6s}")  # fmt: skip
    for name, rows in sorted(by.items(), key=lambda x: -float(np.mean([r[1] for r in x[1]]))):
        a = np.asarray(rows)
        mean = a.mean(axis=0)
        print(
            f"{name:26s} {len(a):4d} {mean[1]:5.2f} {mean[0]:5.2f} "
            f"{mean[2]:6.3f} {mean[3]:6.3f} {mean[4]:5.2f} {mean[5]:6.2f}"
        )


if __name__ == "__main__":
    main()
