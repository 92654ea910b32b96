"""The decision policy: which confidence decides, and from what evidence a source's cut.

One number orders a row's suggestions and decides it: the calibrated confidence (global
calibrator, collective evidence, the source's own adaptation). A source's cut is chosen
here and nowhere else, under the guarantee the team states (`DecisionPolicy`):

- `bound`: the share wrong of the auto-links is at most the budget with probability at
  least `confidence`. (`expected`, the mean within the budget, was withdrawn: it did not
  hold leave-one-framework-out, `risk.WITHDRAWN`.)

A source's cut rests on its reviewed items alone: no prior, no model's own expectation.
The cuts are tested in a fixed sequence, from the highest reviewed item's confidence down
(each with at least `min_reviewed` reviewed items above it), each by an exact
hypergeometric test of the open items above it (`cut.certifies`), and the first that fails
ends the sequence (fixed-sequence testing, as in Learn-then-Test): the cut is never read
off the one place below a failure where the sample looked lucky, and the promise printed
is the one the test certifies. A source too small to be linked as a whole keeps the
trained global cut (`cut.alone`), said as such. docs/quality.md has the rule, its
assumptions and the check that measures them on every framework (`make risk-check`).

Pure: no I/O, nothing read but the numbers given.

The package, by concern: `risk` (the team's promise, stored per run), `cut` (a source's
cut), `evidence` (what it is chosen from, stored with it), `plan` (the reviews that would
certify one), `adaptation` (a source's recalibration), `sample` (the calibration
sample), `verdict` (C.9's pure `decide`), `unmappable` (the gate that says no CRE
covers a section), `threshold` (training's global cut).
"""

from librarian.policy.adaptation import Adaptation, fit_adaptation
from librarian.policy.cut import Certified, alone, choose_cut
from librarian.policy.decision import RISKS, DecisionPolicy
from librarian.policy.evidence import (
    CutEvidence,
    Evidence,
    distinct_decided,
    normalised,
    text_digest,
)
from librarian.policy.exact import certifies
from librarian.policy.guarantees import GUARANTEES, Guarantee
from librarian.policy.plan import ReviewPlan, outlook, review_next, review_plan
from librarian.policy.sample import CALIBRATION_SAMPLE, SAMPLE_REACH, calibration_sample

__all__ = [
    "CALIBRATION_SAMPLE",
    "GUARANTEES",
    "RISKS",
    "SAMPLE_REACH",
    "Adaptation",
    "Certified",
    "CutEvidence",
    "DecisionPolicy",
    "Evidence",
    "Guarantee",
    "ReviewPlan",
    "alone",
    "calibration_sample",
    "certifies",
    "choose_cut",
    "distinct_decided",
    "fit_adaptation",
    "normalised",
    "outlook",
    "review_next",
    "review_plan",
    "text_digest",
]
