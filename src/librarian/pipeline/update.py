"""Update detection: a span decided before, now with different text.

Pure over the new envelope and the prior decision the store found for the same span
(artifact, locator, span index). The store does the finding; this decides what it means:

- the new text negates the old one (must -> must not) -> review, ADVERSARIAL_FLAG /
  NEGATION_MISMATCH, whatever the scores say;
- linked before, and now the same CRE above threshold -> linked, as an update;
- linked before to another CRE than the new first one -> review, UPDATE_AMBIGUOUS;
- otherwise the new decision stands, marked as an update of the prior chunk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from librarian.pipeline.decide import Origin, review_item
from librarian.pipeline.negation import negation_differs
from librarian.schemas.envelopes import (
    AdversarialFlag,
    Envelope,
    LinkProposal,
    ReasonCode,
    ReviewItem,
    UpdateDetection,
)
from librarian.schemas.records import PriorDecision


def first_cre(envelope: Envelope) -> str | None:
    if isinstance(envelope, LinkProposal):
        return envelope.links[0].cre_id
    suggestions = envelope.suggested_links or []
    return suggestions[0].cre_id if suggestions else None


def apply_update(envelope: Envelope, prior: PriorDecision) -> Envelope:
    detection = UpdateDetection(
        is_update=True,
        prior_chunk_id=prior.chunk_id,
        prior_document_ref=prior.linked_cre,
        adversarial_flags=list(envelope.update_detection.adversarial_flags),
    )
    if negation_differs(prior.text, envelope.knowledge.text):
        flags = [*detection.adversarial_flags, AdversarialFlag.NEGATION_MISMATCH]
        detection = detection.model_copy(update={"adversarial_flags": list(dict.fromkeys(flags))})
        return _as_review(envelope, ReasonCode.ADVERSARIAL_FLAG, detection)
    new_cre = first_cre(envelope)
    if prior.linked_cre is not None and new_cre != prior.linked_cre:
        return _as_review(envelope, ReasonCode.UPDATE_AMBIGUOUS, detection)
    return envelope.model_copy(update={"update_detection": detection})


def apply_updates(
    envelopes: Sequence[Envelope],
    span_of: Mapping[str, str],
    prior_by_span: Mapping[str, PriorDecision],
) -> list[Envelope]:
    """`apply_update` for each envelope whose span (by chunk id) was decided before."""
    out: list[Envelope] = []
    for envelope in envelopes:
        prior = prior_by_span.get(span_of[envelope.chunk_id])
        out.append(apply_update(envelope, prior) if prior is not None else envelope)
    return out


def _as_review(envelope: Envelope, reason: ReasonCode, detection: UpdateDetection) -> ReviewItem:
    if isinstance(envelope, ReviewItem):
        return envelope.model_copy(update={"reason_code": reason, "update_detection": detection})
    origin = Origin(
        envelope.pipeline_run_id, envelope.chunk_id, envelope.artifact_id, envelope.classified_at
    )
    suggestions = list(envelope.links)
    return review_item(
        origin, reason, envelope.knowledge, envelope.retrieval, suggestions, detection
    )
