"""C.8 safety: flags that send a row to a person whatever its confidence.

Two checks, behind one seam (`SafetyGuard`):

- negation: the section's polarity differs from its first candidate's name
  (NEGATION_MISMATCH);
- update detection, wherever prior decisions can be read (a store in commit and dry-run
  mode, a golden row's `prior_text`, `explain --prior-text`): a span decided before, now
  with different text. The new text negates the old one -> NEGATION_MISMATCH; linked
  before to another CRE than the new first one -> an update conflict (UPDATE_AMBIGUOUS).

A verdict says whether update detection was evaluated (the upstream's
`SafetyVerdict.evaluated`): `is_update: false` means "checked, not an update" only then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from librarian.pipeline.components import SAFETY, UPDATE_EVALUATED, UPDATE_NOT_EVALUATED, Component
from librarian.pipeline.negation import negation_differs
from librarian.schemas.envelopes import AdversarialFlag, UpdateDetection
from librarian.schemas.records import PriorDecision, Section


@dataclass(frozen=True)
class SafetyVerdict:
    flags: tuple[AdversarialFlag, ...] = ()
    update_evaluated: bool = False
    prior: PriorDecision | None = None
    update_conflict: bool = False  # linked before to another CRE than the new first one

    def detection(self) -> UpdateDetection:
        prior = self.prior
        return UpdateDetection(
            is_update=prior is not None,
            prior_chunk_id=prior.chunk_id if prior else None,
            prior_document_ref=prior.linked_cre if prior else None,
            adversarial_flags=list(dict.fromkeys(self.flags)),
        )


@dataclass(frozen=True)
class SafetyInput:
    """One row as the safety stage sees it. `first_name` None: no model candidate to
    compare with (an explicit citation, or none); `priors_read`: prior decisions could be
    read for this run (None `prior` then means "checked: none")."""

    section: Section
    first_cre: str | None
    first_name: str | None
    prior: PriorDecision | None
    priors_read: bool


class SafetyGuard(Protocol):
    def component(self, priors_read: bool) -> Component: ...

    def check(self, row: SafetyInput) -> SafetyVerdict: ...


class NegationAndUpdateGuard:
    """The shipped guard."""

    def component(self, priors_read: bool) -> Component:
        note = UPDATE_EVALUATED if priors_read else UPDATE_NOT_EVALUATED
        return Component("safety", SAFETY, note=note)

    def check(self, row: SafetyInput) -> SafetyVerdict:
        flags: list[AdversarialFlag] = []
        text, prior = row.section.text, row.prior
        if row.first_name is not None and negation_differs(text, row.first_name):
            flags.append(AdversarialFlag.NEGATION_MISMATCH)
        if prior is None:
            return SafetyVerdict(tuple(flags), row.priors_read)
        if negation_differs(prior.text, text):
            flags.append(AdversarialFlag.NEGATION_MISMATCH)
        conflict = prior.linked_cre is not None and row.first_cre != prior.linked_cre
        return SafetyVerdict(tuple(flags), True, prior, conflict)
