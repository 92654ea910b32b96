"""The decision policy: which confidence decides, and from what evidence a source's cut.

One number orders a row's suggestions and decides it: the calibrated confidence (global
calibrator, collective evidence, the source's own adaptation). A source's cut is chosen
here and nowhere else, under one of two guarantees the team chooses (`RiskPolicy.risk`):

- `expected`: the expected share wrong of the source's auto-links is at most the budget
  (the posterior mean of a Beta-binomial);
- `bound`: the share wrong is at most the budget with probability at least `confidence`
  (the posterior's upper quantile).

The prior on a band's share wrong is centred on what the model expects of it (the mean of
1 - confidence of the items it would link), scaled by `prior_scale` and weighing
`prior_weight` items: both learnt by `train` across the frameworks held out in turn (how
far a framework's realised share wrong departs from what the calibrator expects), and
saved with the models. The evidence is the source's reviewed items at or above a cut.

The cuts are tested in a fixed sequence, from the trained global cut down through the
reviewed items' confidences (each with at least `min_reviewed` reviewed items above it),
and the first that fails ends the sequence (fixed-sequence testing, as in Learn-then-Test):
the cut is never read off the one place below a failure where the sample looked lucky.
docs/quality.md has the rule, its guarantee, its assumptions and the simulation that
checks them (`librarian eval --review-order random --draws N`).

Pure: no I/O, nothing read but the numbers given.

The package, by concern: `risk` (the team's promise and the learnt prior, stored per run),
`cut` (a source's cut), `adaptation` (a source's recalibration), `sample` (the calibration
sample), `verdict` (C.9's pure `decide`), `unmappable` (the gate that says no CRE covers a
section), `threshold` (training's global cut).
"""

from librarian.policy.adaptation import Adaptation, fit_adaptation
from librarian.policy.cut import Certified, choose_cut, posterior, upper_bound
from librarian.policy.risk import PRIOR_WEIGHT, RISKS, RiskPolicy
from librarian.policy.sample import CALIBRATION_SAMPLE, SAMPLE_REACH, calibration_sample

__all__ = [
    "CALIBRATION_SAMPLE",
    "PRIOR_WEIGHT",
    "RISKS",
    "SAMPLE_REACH",
    "Adaptation",
    "Certified",
    "RiskPolicy",
    "calibration_sample",
    "choose_cut",
    "fit_adaptation",
    "posterior",
    "upper_bound",
]
