"""Hub evidence from linked sections: best-exemplar scores, exclusion, persistence, and
what it does to a linker's ranking, confidence and rationale (stub embedder)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from librarian.artifacts.calibrator import Calibrator
from librarian.artifacts.card import TrainedModels
from librarian.pipeline import components as ids
from librarian.pipeline import one_shot
from librarian.pipeline.components import stage_ids
from librarian.pipeline.ingest import section_from_text
from librarian.retrieval.evidence import (
    EVIDENCE_WEIGHT,
    NO_EVIDENCE,
    EvidenceError,
    EvidenceIndex,
    Exemplar,
)
from librarian.schemas.envelopes import LinkProposal, ReviewItem
from tests.stubs import StubEmbedder, example_card, small_hub, stub_pipeline

HUB = small_hub()
SWAP = "swap the cookie identifier when someone signs in"
EXEMPLARS = [
    Exemplar("alpha", "1", "prose", SWAP, frozenset({"200-001"})),
    Exemplar("beta", "7", "title", "prepared statements for queries", frozenset({"300-001"})),
    Exemplar("beta", "8", "prose", "cookie identifier swapped", frozenset({"200-001", "400-000"})),
]


def index(exemplars: list[Exemplar] = EXEMPLARS) -> EvidenceIndex:
    vectors = StubEmbedder().encode([e.text for e in exemplars])
    return EvidenceIndex.build(HUB.ids, exemplars, vectors)


def test_each_hub_scores_its_best_exemplar_and_undescribed_hubs_score_nothing() -> None:
    ev = index()
    query = StubEmbedder().encode(["swap the cookie identifier when someone signs in"])
    best = ev.best(query)[0]
    column = {c: i for i, c in enumerate(HUB.ids)}
    assert best[column["200-001"]] == pytest.approx(1.0)
    assert NO_EVIDENCE < best[column["400-000"]] < 1.0  # described by beta 8 only
    assert best[column["100-000"]] == NO_EVIDENCE
    assert list(ev.counts()) == [
        {"200-001": 2, "300-001": 1, "400-000": 1}.get(c, 0) for c in HUB.ids
    ]


def test_a_framework_left_out_describes_nothing() -> None:
    ev = index().excluding({"alpha"})
    assert ev.frameworks == ("beta", "beta") and ev.size == 2
    query = StubEmbedder().encode(["swap the cookie identifier when someone signs in"])
    column = {c: i for i, c in enumerate(HUB.ids)}
    assert ev.best(query)[0][column["200-001"]] < 0.99  # only beta's wording is left
    found = ev.best_exemplar(query[0], column["200-001"])
    assert found is not None and found[0] == "beta 8 (prose)"
    assert found[1] == pytest.approx(float(ev.best(query)[0][column["200-001"]]))


def test_round_trip_and_a_new_hub_order(tmp_path: Path) -> None:
    ev = index()
    ev.save(tmp_path / "e.npz")
    loaded = EvidenceIndex.load(tmp_path / "e.npz", HUB.ids, 1024)
    query = StubEmbedder().encode(["prepared statements"])
    assert np.allclose(loaded.best(query), ev.best(query))
    reordered = tuple(reversed(HUB.ids))
    moved = EvidenceIndex.load(tmp_path / "e.npz", reordered, 1024)
    assert np.allclose(moved.best(query)[0][::-1], ev.best(query)[0])
    with pytest.raises(EvidenceError, match="width"):
        EvidenceIndex.load(tmp_path / "e.npz", HUB.ids, 384)
    (tmp_path / "bad.npz").write_bytes(b"not an npz")
    with pytest.raises(EvidenceError, match="cannot be read"):
        EvidenceIndex.load(tmp_path / "bad.npz", HUB.ids, 1024)


def trained(evidence: EvidenceIndex) -> TrainedModels:
    card = example_card()
    calibrator = Calibrator(weights=(4.0, 8.0, 4.0, 1.0), intercept=-5.0, fitted_on=10)
    return TrainedModels(Path("m"), card, calibrator, 0.5, evidence=evidence)


def test_evidence_lifts_the_described_hub_and_is_named_in_the_rationale() -> None:
    text = "swap the cookie identifier when someone signs in"
    plain = one_shot.link(stub_pipeline(threshold=0.99), [section_from_text("session token")], "r")
    with_evidence = one_shot.link(
        stub_pipeline(trained=trained(index())), [section_from_text(text)], "r"
    )
    envelope = with_evidence.envelopes[0]
    top = envelope.retrieval.candidates[0]
    assert top.cre_id == "200-001"
    assert top.score_hybrid == pytest.approx(top.score_vector + EVIDENCE_WEIGHT * 1.0, abs=1e-5)
    # Without trained models there is no evidence, and no hybrid score is claimed.
    assert all(c.score_hybrid is None for c in plain.envelopes[0].retrieval.candidates)
    links = envelope.links if isinstance(envelope, LinkProposal) else envelope.suggested_links
    assert links and "closest section already linked to it 1.00: alpha 1 (prose)" in (
        links[0].rationale or ""
    )
    said = links[0].rationale or ""
    assert "its name " in said and "its place in the hub " in said
    assert stage_ids(envelope.retrieval.retriever)["retrieve"] == f"{ids.RETRIEVE}:in-memory"
    assert envelope.retrieval.retriever.count("best of 3 linked sections") == 1


def test_a_negated_section_is_flagged_whatever_its_confidence() -> None:
    text = "Sessions are not rotated after login"
    for threshold in (0.0, 0.99):
        envelope = one_shot.link(stub_pipeline(threshold=threshold), [section_from_text(text)], "r")
        item = envelope.envelopes[0]
        assert isinstance(item, ReviewItem) and item.reason_code == "ADVERSARIAL_FLAG"
        assert item.update_detection.adversarial_flags == ["NEGATION_MISMATCH"]
