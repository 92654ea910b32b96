"""Calibration maths: fitting, reliability, threshold choice, JSON round trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from librarian.artifacts.calibrator import (
    FEATURES,
    CalibrationError,
    Calibrator,
    candidate_features,
    top_features,
)
from librarian.policy.threshold import choose_threshold
from librarian.retrieval.evidence import NO_EVIDENCE
from librarian.training.calibrate import fit_calibrator, reliability


def synthetic(n: int = 400, seed: int = 0) -> tuple[list[tuple[float, ...]], list[bool]]:
    """Rows whose chance of being right rises with score, margin and evidence."""
    rng = np.random.default_rng(seed)
    score = rng.uniform(0.2, 0.9, n)
    margin = rng.uniform(0.0, 0.2, n)
    evidence = rng.uniform(0.0, 0.9, n)
    has = (rng.uniform(size=n) < 0.7).astype(float)
    evidence = evidence * has
    p = 1 / (1 + np.exp(-(-6 + 6 * score + 20 * margin + 2 * evidence)))
    right = rng.uniform(size=n) < p
    rows = zip(score.tolist(), margin.tolist(), evidence.tolist(), has.tolist(), strict=True)
    return [tuple(r) for r in rows], right.tolist()


def test_fitted_confidence_rises_with_score_margin_and_evidence() -> None:
    features, right = synthetic()
    cal = fit_calibrator(features, right)
    assert cal.probability((0.8, 0.1, 0.5, 1.0)) > cal.probability((0.5, 0.1, 0.5, 1.0))
    assert cal.probability((0.5, 0.1, 0.5, 1.0)) > cal.probability((0.5, 0.0, 0.5, 1.0))
    assert cal.probability((0.5, 0.1, 0.8, 1.0)) > cal.probability((0.5, 0.1, 0.1, 1.0))
    assert cal.fitted_on == 400 and cal.features == FEATURES


def test_fitted_calibrator_is_calibrated_on_fresh_rows_from_the_same_process() -> None:
    cal = fit_calibrator(*synthetic(2000, seed=1))
    features, right = synthetic(2000, seed=2)
    ece, _ = reliability([cal.probability(f) for f in features], right)
    assert ece < 0.05


def test_one_class_cannot_be_fitted() -> None:
    with pytest.raises(CalibrationError, match="right and wrong"):
        fit_calibrator([(0.5, 0.1, 0.0, 0.0)] * 20, [True] * 20)


def test_round_trip_through_json(tmp_path: Path) -> None:
    cal = Calibrator(weights=(3.0, 10.0, 1.0, 0.5), intercept=-4.0, fitted_on=9)
    cal.save(tmp_path / "c.json")
    assert Calibrator.load(tmp_path / "c.json") == cal


def test_damaged_file_is_a_calibration_error(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text('{"weights": [1.0]}')
    with pytest.raises(CalibrationError, match=r"c\.json"):
        Calibrator.load(tmp_path / "c.json")


def test_a_calibrator_of_other_features_is_refused(tmp_path: Path) -> None:
    old = {
        "kind": "logistic(score, margin)",
        "features": ["score", "margin"],
        "weights": [3.0, 10.0],
        "intercept": -4.0,
        "fitted_on": 9,
    }
    (tmp_path / "c.json").write_text(json.dumps(old))
    with pytest.raises(CalibrationError, match="run `librarian train` again"):
        Calibrator.load(tmp_path / "c.json")


def test_list_probabilities_use_margin_over_the_best_other_and_each_ones_evidence() -> None:
    cal = Calibrator(weights=(0.0, 10.0, 0.0, 0.0), intercept=0.0, fitted_on=1)
    first, second, third = cal.probabilities([0.9, 0.7, 0.7])
    assert first == pytest.approx(cal.probability((0.9, 0.2, 0.0, 0.0)))
    assert second == pytest.approx(cal.probability((0.7, -0.2, 0.0, 0.0)))
    assert second == third < 0.5 < first
    rows = candidate_features([0.9, 0.7], [0.6, NO_EVIDENCE])
    assert rows == [pytest.approx((0.9, 0.2, 0.6, 1.0)), pytest.approx((0.7, -0.2, 0.0, 0.0))]


def test_top_features() -> None:
    assert top_features([0.9, 0.7, 0.5]) == pytest.approx((0.9, 0.2, 0.0, 0.0))
    assert top_features([0.6]) == (0.6, 0.6, 0.0, 0.0)
    with pytest.raises(CalibrationError):
        top_features([])


def test_reliability_of_known_bins() -> None:
    ece, bins = reliability([0.95, 0.95, 0.15, 0.15], [True, False, False, False], bins=10)
    # bin 0.9-1.0: confidence 0.95, accuracy 0.5; bin 0.1-0.2: 0.15 vs 0.0
    assert ece == pytest.approx(0.5 * 0.45 + 0.5 * 0.15)
    assert [b.count for b in bins] == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert reliability([], []) == (0.0, [])


def test_threshold_is_the_lowest_cut_precise_enough() -> None:
    conf = [0.99, 0.98, 0.97, 0.96, 0.90, 0.80, 0.70]
    right = [True, True, True, True, False, True, False]
    assert choose_threshold(conf, right, max_wrong_rate=0.0) == 0.96
    assert choose_threshold(conf, right, max_wrong_rate=0.2) == 0.80
    assert choose_threshold([0.9, 0.8], [False, False], max_wrong_rate=0.03) == 1.0


def test_training_cut_stops_at_its_first_tested_failure_as_a_sources_cut_does() -> None:
    """The lowest passing cut would be 0.70 (1 wrong in 10); the sequence from the top
    fails, tested, at 0.80 (1 of 4 wrong, 4 rows >= min_support 3) and stops there."""
    conf = [0.99, 0.98, 0.97, 0.80, 0.79, 0.78, 0.77, 0.76, 0.75, 0.70]
    right = [True, True, True, False, True, True, True, True, True, True]
    assert choose_threshold(conf, right, 0.1, min_support=3) == 0.97
    # Below the support, a failure is not a test: the sequence goes on.
    assert choose_threshold(conf, right, 0.1, min_support=11) == 0.70


def test_threshold_never_cuts_between_equal_confidences() -> None:
    # Both 0.9 rows link together or not at all: one of them is wrong.
    assert choose_threshold([0.95, 0.9, 0.9], [True, True, False], 0.0) == 0.95
