"""Update detection in the safety stage (C.8), over the stub pipeline's envelopes."""

from __future__ import annotations

from datetime import UTC, datetime

from librarian.pipeline import components as ids
from librarian.pipeline import one_shot
from librarian.pipeline.components import stage_ids
from librarian.pipeline.envelopes import RunContext
from librarian.pipeline.ingest import section_from_text
from librarian.policy import DecisionPolicy
from librarian.schemas.envelopes import (
    AdversarialFlag,
    Envelope,
    LinkProposal,
    ReasonCode,
    ReviewItem,
)
from librarian.schemas.records import PriorDecision
from tests.stubs import stub_pipeline

CTX = RunContext("run-2", DecisionPolicy(global_cut=0.1), datetime(2026, 11, 30, tzinfo=UTC))


def envelope(
    text: str, threshold: float = 0.1, priors: dict[str, PriorDecision] | None = None
) -> Envelope:
    linker = stub_pipeline(threshold=threshold)
    result = one_shot.link(linker, [section_from_text(text)], "run-2", CTX.now, priors=priors)
    return result.envelopes[0]


def apply_update(new: Envelope, prior: PriorDecision, threshold: float = 0.1) -> Envelope:
    """`new`'s text again, now with `prior` as its span's prior decision."""
    span = section_from_text(new.knowledge.text).span_key
    return envelope(new.knowledge.text, threshold, {span: prior})


def test_without_priors_update_detection_is_declared_not_evaluated() -> None:
    unchecked = envelope("rotate the session token after login")
    checked = envelope("rotate the session token after login", priors={})
    assert not unchecked.update_detection.is_update and not checked.update_detection.is_update
    assert stage_ids(unchecked.retrieval.retriever)["safety"] == ids.SAFETY
    assert ids.UPDATE_NOT_EVALUATED in unchecked.retrieval.retriever
    assert ids.UPDATE_EVALUATED in checked.retrieval.retriever
    assert ids.UPDATE_NOT_EVALUATED not in checked.retrieval.retriever


def test_an_explicit_citation_is_checked_for_updates_too() -> None:
    text = "Rotate it, see CRE 200-001."
    span = section_from_text(text).span_key
    out = envelope(text, priors={span: PriorDecision("old", "Rotate it.", "300-001")})
    assert isinstance(out, ReviewItem) and out.reason_code == ReasonCode.UPDATE_AMBIGUOUS
    assert out.update_detection.is_update and ids.UPDATE_EVALUATED in out.retrieval.retriever


def test_same_cre_above_threshold_links_as_an_update() -> None:
    new = envelope("rotate the session token after login")
    assert isinstance(new, LinkProposal) and new.links[0].cre_id == "200-001"
    out = apply_update(new, PriorDecision("old-chunk", "rotate session token", "200-001"))
    assert isinstance(out, LinkProposal)
    assert out.update_detection.is_update
    assert out.update_detection.prior_chunk_id == "old-chunk"
    assert out.update_detection.prior_document_ref == "200-001"


def test_another_cre_than_before_goes_to_review() -> None:
    new = envelope("rotate the session token after login")
    out = apply_update(new, PriorDecision("old", "sql queries", "300-001"))
    assert isinstance(out, ReviewItem)
    assert out.reason_code == ReasonCode.UPDATE_AMBIGUOUS
    assert out.update_detection.prior_document_ref == "300-001"
    assert out.suggested_links and out.suggested_links[0].cre_id == "200-001"


def test_negated_rewording_is_flagged_whatever_the_scores() -> None:
    new = envelope("do not rotate the session token after login")
    prior = PriorDecision("old", "rotate the session token after login", "200-001")
    out = apply_update(new, prior)
    assert isinstance(out, ReviewItem)
    assert out.reason_code == ReasonCode.ADVERSARIAL_FLAG
    assert AdversarialFlag.NEGATION_MISMATCH in out.update_detection.adversarial_flags


def test_prior_that_was_never_linked_keeps_the_new_decision() -> None:
    new = envelope("rotate the session token after login", threshold=0.99)
    assert isinstance(new, ReviewItem)
    out = apply_update(new, PriorDecision("old", "session tokens", None), threshold=0.99)
    assert isinstance(out, ReviewItem) and out.reason_code == ReasonCode.BELOW_THRESHOLD
    assert out.update_detection.is_update and out.update_detection.prior_document_ref is None
