"""The branch classifier `--routing auto` uses, trained beside the calibrator."""

from __future__ import annotations

from collections.abc import Sequence

from librarian.catalogue.hub import Hub
from librarian.models.seams import Vectors
from librarian.pipeline.ingest import section_from_text
from librarian.routing.classifier import BranchClassifier
from librarian.routing.collections import hub_collections
from librarian.routing.router import Router
from librarian.training.links import LinkedSection


def fit_router(
    sections: Sequence[LinkedSection], vectors: Vectors, hub: Hub
) -> tuple[BranchClassifier | None, dict[str, object]]:
    """The branch classifier `--routing auto` uses, and how often, out of fold, the router's
    selection held a collection of the section's CRE (what narrowing would have lost)."""
    collections = hub_collections(hub)
    branch_of = {cre: name for name, ids in collections.items() for cre in ids}
    rows = [(i, branch_of[c]) for i, s in enumerate(sections) for c in sorted(s.cre_ids)]
    rows = list(dict.fromkeys(rows))
    if len({b for _, b in rows}) < 2:
        return None, {"trained": False, "why": "links reach fewer than two collections"}
    x = vectors[[i for i, _ in rows]]
    labels = [b for _, b in rows]
    held_in, narrowed, total = 0, 0, 0
    for held in sorted({s.framework_id for s in sections}):
        fit = [j for j, (i, _) in enumerate(rows) if sections[i].framework_id != held]
        if len({labels[j] for j in fit}) < 2:
            continue
        fold = BranchClassifier.fit(x[fit], [labels[j] for j in fit], {})
        router = Router(collections, mode="auto", classifier=fold)
        for i, s in enumerate(sections):
            if s.framework_id != held:
                continue
            decision = router.route(section_from_text(s.text), vectors[i])
            total += 1
            narrowed += len(decision.selected) < len(collections)
            held_in += any(branch_of[c] in decision.selected for c in s.cre_ids)
    card: dict[str, object] = {
        "trained": True,
        "what": "logistic regression: section vector -> collection (root branch) of its CRE",
        "collections": {name: len(ids) for name, ids in collections.items()},
        "samples": len(rows),
        "out_of_fold": {
            "how": "leave-one-framework-out, router rule as shipped",
            "sections": total,
            "narrowed": narrowed,
            "answer_kept": held_in,
        },
    }
    return BranchClassifier.fit(x, labels, {"collections": sorted(collections)}), card
