from __future__ import annotations

from datetime import UTC, datetime

from librarian.pipeline import components as ids
from librarian.pipeline import one_shot
from librarian.pipeline.components import stage_ids
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.stages import RerankStage
from librarian.schemas.envelopes import AdversarialFlag, LinkProposal, ReasonCode, ReviewItem
from librarian.schemas.records import RejectCode
from tests.stubs import StubScorer, stub_pipeline

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def one(text: str, threshold: float = 0.8, scorer: StubScorer | None = None):  # type: ignore[no-untyped-def]
    linker = stub_pipeline(threshold=threshold, scorer=scorer)
    return one_shot.link(linker, [section_from_text(text)], "run-1", NOW).envelopes[0]


def test_below_threshold_goes_to_review_with_top_n_suggestions() -> None:
    env = one("rotate session token", threshold=0.99)
    assert isinstance(env, ReviewItem)
    assert env.reason_code == ReasonCode.BELOW_THRESHOLD
    assert env.suggested_links is not None and len(env.suggested_links) == 2
    assert env.suggested_links[0].cre_id == "200-001"
    assert stage_ids(env.retrieval.retriever)["rerank"] == ids.RERANK_NONE
    assert env.retrieval.reranked == []


def test_at_threshold_links_automatically() -> None:
    probe = one("rotate session token", threshold=0.99)
    assert isinstance(probe, ReviewItem) and probe.suggested_links
    top = probe.suggested_links[0].confidence
    env = one("rotate session token", threshold=top)
    assert isinstance(env, LinkProposal)
    assert env.links[0].cre_id == "200-001"
    assert env.links[0].link_type == "AutomaticallyLinkedTo"
    assert env.links[0].confidence == top


def test_nothing_retrieved_is_no_candidates() -> None:
    env = one("zzzz qqqq")
    assert isinstance(env, ReviewItem) and env.reason_code == ReasonCode.NO_CANDIDATES
    assert env.retrieval.candidates == []


def test_reranker_reorders_and_drives_confidence() -> None:
    env = one("Cryptography session", threshold=0.99, scorer=StubScorer())
    assert isinstance(env, ReviewItem)
    assert stage_ids(env.retrieval.retriever)["rerank"] == f"{ids.RERANK}:stub-overlap"
    reranked = env.retrieval.reranked
    assert len(reranked) == 2
    assert all(c.score_rerank is not None for c in env.retrieval.candidates)
    assert [c.score_rerank for c in reranked] == sorted(
        (c.score_rerank or 0.0 for c in reranked), reverse=True
    )
    assert env.suggested_links is not None
    assert env.suggested_links[0].confidence == reranked[0].score_rerank


def test_rerank_gap_sends_only_undecided_sections_to_the_reranker() -> None:
    texts = ["rotate session token", "Cryptography session", "zzzz qqqq"]
    sections = [section_from_text(t) for t in texts]
    plain = one_shot.link(stub_pipeline(threshold=0.99), sections, "run-1", NOW).envelopes
    gaps = [
        e.retrieval.candidates[0].score_vector - e.retrieval.candidates[1].score_vector
        for e in plain[:2]
    ]
    assert gaps[0] != gaps[1]
    gap = (gaps[0] + gaps[1]) / 2  # one section is decisive, the other is not
    scorer = StubScorer()
    gated = stub_pipeline(threshold=0.99, scorer=scorer, rerank_gap=gap)
    assert gated.stage(RerankStage).component.settings == {"rerank_gap": gap}
    result = one_shot.link(gated, sections, "r", NOW)
    undecided = 0 if gaps[0] < gaps[1] else 1
    assert result.reranked == 1
    assert set(scorer.queries) == {texts[undecided]}
    for row, env in enumerate(result.envelopes[:2]):
        scored = [c.score_rerank is not None for c in env.retrieval.candidates]
        assert all(scored) if row == undecided else not any(scored)
        assert bool(env.retrieval.reranked) == (row == undecided)
    assert stage_ids(result.envelopes[0].retrieval.retriever)["rerank"].startswith(ids.RERANK)


def test_explicit_single_known_links_without_models() -> None:
    linker = stub_pipeline()
    calls_before = getattr(linker.embed.embedder, "calls", None)
    result = one_shot.link(linker, [section_from_text("Rotate it, see CRE 200-001.")], "r", NOW)
    env = result.envelopes[0]
    assert isinstance(env, LinkProposal)
    assert env.links[0].link_type == "LinkedTo" and env.links[0].confidence == 1.0
    assert list(stage_ids(env.retrieval.retriever)) == ["explicit", "safety"]
    assert stage_ids(env.retrieval.retriever)["explicit"] == ids.EXPLICIT
    assert result.explicit == 1
    # no query was embedded
    assert calls_before is not None
    assert getattr(linker.embed.embedder, "calls", None) == calls_before


def test_explicit_unknown_and_conflicting_go_to_review() -> None:
    unknown = one("see CRE 999-999")
    assert isinstance(unknown, ReviewItem) and unknown.reason_code == ReasonCode.ADVERSARIAL_FLAG
    assert unknown.update_detection.adversarial_flags == [AdversarialFlag.UNKNOWN_CRE_REFERENCE]
    both = one("see CRE 200-001 and CRE 300-001")
    assert isinstance(both, ReviewItem)
    assert both.update_detection.adversarial_flags == [AdversarialFlag.CONFLICTING_CRE_REFERENCES]
    assert both.suggested_links is not None
    assert {s.cre_id for s in both.suggested_links} == {"200-001", "300-001"}


def test_order_of_envelopes_follows_input() -> None:
    linker = stub_pipeline()
    texts = ["see CRE 200-001", "rotate session token", "CRE 300-001 here", "cryptography"]
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}"}) for i, t in enumerate(texts)
    ]
    result = one_shot.link(linker, sections, "r", NOW)
    assert [e.chunk_id for e in result.envelopes] == ["c0", "c1", "c2", "c3"]


def test_one_failing_row_does_not_sink_the_batch() -> None:
    linker = stub_pipeline(scorer=StubScorer(fail_on="poison"))
    sections = [
        section_from_text("rotate session token").model_copy(update={"chunk_id": "good"}),
        section_from_text("poison session token").model_copy(update={"chunk_id": "bad", "line": 2}),
    ]
    result = one_shot.link(linker, sections, "r")
    rejected = result.rejections
    assert [e.chunk_id for e in result.envelopes] == ["good"]
    assert len(rejected) == 1 and rejected[0].reason == RejectCode.PROCESSING_ERROR
    assert rejected[0].chunk_id == "bad" and "poison" in rejected[0].message


def test_a_broken_model_fails_the_batch_loudly() -> None:
    linker = stub_pipeline(scorer=StubScorer(fail_on="e"))
    sections = [section_from_text("rotate session token"), section_from_text("use queries")]
    try:
        one_shot.link(linker, sections, "r")
    except RuntimeError as exc:
        assert "cannot handle" in str(exc)
    else:
        raise AssertionError("a batch where every row fails must raise")
