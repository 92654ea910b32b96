"""Eval scoring over the stub linker: exact counts, the exact JSON keys, the gates."""

from __future__ import annotations

from typing import Any

from librarian.schemas.evaluation import GoldenRow
from librarian.training.evaluate import gate_failures, run_golden, score
from tests.stubs import stub_pipeline

SPEC_KEYS = {
    "rows": None,
    "slices": None,
    "explicit": {"correct", "total"},
    "recall_at_k": {"k", "any_hit", "all_hit", "total"},
    "top1": {"retriever", "final"},
    "calibration": {"ece", "bins"},
    "decision": {"threshold", "auto_link", "review"},
    "per_slice": None,
    "update_detection": None,  # null: no row says whether it is an update
    "per_style": None,
    "per_framework": None,
    "reviewed": None,  # null: cold (no --reviewed-first)
    "sources": None,
    "draws": None,  # null: not warm (--reviewed K gives one a run, --draws N random ones)
    "draws_summary": None,
}


def golden(rid: str, slice_: str, text: str, decision: str, *cres: str) -> GoldenRow:
    expected: dict[str, Any] = {"decision": decision}
    if cres:
        expected["cre_ids"] = list(cres)
    return GoldenRow.model_validate(
        {
            "id": rid,
            "slice": slice_,
            "input": {"text": text, "source_standard": "std"},
            "expected": expected,
        }
    )


ROWS = [
    golden("p1", "positive", "Rotate session token after login", "linked", "200-001"),
    golden("p2", "positive", "parameterized queries against SQL injection", "linked", "300-001"),
    golden("p3", "positive", "Rotate session token after login", "linked", "400-000"),
    golden("e1", "explicit", "see CRE 200-001", "linked", "200-001"),
    golden("e2", "explicit", "see CRE 999-999", "review"),
    golden("a1", "ambiguous", "the weather is lovely today", "review"),
]


def test_counts_are_exact() -> None:
    outcomes = run_golden(stub_pipeline(threshold=0.5, top_k=3), ROWS).outcomes
    report = score(outcomes, threshold=0.5, k=3)
    assert report.rows == 6
    assert report.slices == {"positive": 3, "explicit": 2, "ambiguous": 1}
    assert (report.explicit.correct, report.explicit.total) == (2, 2)
    assert report.top1.final.total == 3 and report.top1.final.correct == 2
    assert report.recall_at_k.any_hit == 2  # 400-000 is not in p3's top 3
    assert report.decision.auto_link.correct == 2
    assert report.decision.auto_link.wrong == 1  # p3 linked, to the wrong CRE
    assert report.decision.auto_link.expected_linked == 3
    assert (report.decision.review.routed, report.decision.review.expected_review) == (1, 1)
    assert report.per_slice["ambiguous"].reviewed == 1
    # No id names a framework or a style: the source standard stands in, the text decides.
    g = report.per_framework["title std"]
    assert (g.rows, g.top1, g.recall_at_k, g.auto_linked, g.auto_link_wrong) == (3, 2, 2, 3, 1)
    assert set(report.per_style) == {"title"}


def test_upstream_ids_name_the_framework_and_the_style() -> None:
    from librarian.training.golden import framework_of, style_of

    row = golden("gold:nist_800_53:AC-2:prose", "positive", "short", "linked", "200-001")
    assert (framework_of(row), style_of(row)) == ("nist_800_53", "prose")
    sentence = golden(
        "x", "positive", "Verify that tokens are rotated at login.", "linked", "200-001"
    )
    assert (framework_of(sentence), style_of(sentence)) == ("std", "prose")


def test_report_has_exactly_the_specified_keys() -> None:
    outcomes = run_golden(stub_pipeline(threshold=0.5), ROWS).outcomes
    dumped = score(outcomes, 0.5, 20).model_dump(mode="json")
    assert set(dumped) == set(SPEC_KEYS)
    for key, inner in SPEC_KEYS.items():
        if inner is not None:
            assert set(dumped[key]) == inner, key
    assert set(dumped["decision"]["auto_link"]) == {"correct", "wrong", "expected_linked"}
    assert set(dumped["decision"]["review"]) == {"routed", "expected_review"}
    assert set(dumped["per_slice"]["positive"]) == {
        "top1_correct",
        "total",
        "auto_linked",
        "reviewed",
    }
    assert isinstance(dumped["calibration"]["bins"], int)


def test_gates() -> None:
    outcomes = run_golden(stub_pipeline(threshold=0.5), ROWS).outcomes
    report = score(outcomes, 0.5, 20)
    wrong_explicit = [*ROWS[:3], golden("e9", "explicit", "see CRE 200-001", "review")]
    bad = score(run_golden(stub_pipeline(threshold=0.5), wrong_explicit).outcomes, 0.5, 20)
    assert any("explicit" in f for f in gate_failures(bad))
    assert all("explicit" not in f for f in gate_failures(report))
    assert any("ECE" in f for f in gate_failures(report, max_ece=0.0))


def test_a_review_for_the_wrong_reason_is_not_right() -> None:
    rows = [
        GoldenRow.model_validate(
            {
                "id": rid,
                "slice": "explicit",
                "input": {"text": "see CRE 999-999"},
                "expected": {"decision": "review", "reason_code": reason},
            }
        )
        for rid, reason in (("right", "ADVERSARIAL_FLAG"), ("wrong", "BELOW_THRESHOLD"))
    ]
    report = score(run_golden(stub_pipeline(), rows).outcomes, 0.8, 20)
    assert (report.explicit.correct, report.explicit.total) == (1, 2)


def test_golden_prior_texts_run_update_detection_and_are_scored() -> None:
    rows = [
        GoldenRow.model_validate(
            {
                "id": rid,
                "slice": "update",
                "input": {"text": text, "prior_text": prior, "source_standard": "std"},
                "expected": {"decision": "review", "is_update": expected},
            }
        )
        for rid, text, prior, expected in (
            ("u1", "Rotate session token after login", "Rotate session tokens", True),
            ("u2", "Never rotate session token after login", "Rotate session token", True),
            ("u3", "Use parameterized queries", None, False),
        )
    ]
    outcomes = run_golden(stub_pipeline(threshold=0.5), rows).outcomes
    assert [o.is_update for o in outcomes] == [True, True, False]
    assert [o.reason_code for o in outcomes][1] == "ADVERSARIAL_FLAG"  # must -> never
    report = score(outcomes, 0.5, 20)
    assert report.update_detection is not None
    assert (report.update_detection.correct, report.update_detection.total) == (3, 3)


def test_reviewed_first_takes_the_first_linked_rows_of_each_source_and_scores_the_rest() -> None:
    from librarian.training.golden import reviewed_first, source_of

    other = golden("q1", "positive", "Encrypt data at rest", "linked", "300-001")
    other = other.model_copy(
        update={"input": other.input.model_copy(update={"source_standard": "OTHER"})}
    )
    rows = [*ROWS, other]
    reviewed, rest = reviewed_first(rows, 2)
    assert [r.id for r in reviewed] == ["p1", "p2", "q1"]
    assert [r.id for r in rest] == ["p3", "e1", "e2", "a1"]
    assert source_of(other) != source_of(ROWS[0])
    golden_run = run_golden(stub_pipeline(threshold=0.5), rest, reviewed)
    assert golden_run.reviewed == {source_of(ROWS[0]): 2, source_of(other): 1}
    report = score(golden_run.outcomes, 0.5, 20, golden_run.reviewed, golden_run.sources)
    assert report.rows == 4  # only the rest is scored
    assert report.reviewed == golden_run.reviewed


def test_random_review_draws_are_reproducible_by_seed_and_summarised() -> None:
    """Issue 37, item 4: `eval --reviewed K --review-order random --draws N --seed S`."""
    from librarian.policy import DecisionPolicy
    from librarian.training.evaluate import draw_of, random_reviewed, summarise_draws

    rows = [
        golden(f"r{i}", "positive", "Rotate session token after login", "linked", "200-001")
        for i in range(12)
    ] + ROWS
    first = random_reviewed(rows, 4, seed=7)
    assert first == random_reviewed(rows, 4, seed=7)
    assert len(first[0]) == 4 and len(first[0]) + len(first[1]) == len(rows)
    assert all(r.expected.decision == "linked" and r.slice != "explicit" for r in first[0])
    assert {r.id for r in random_reviewed(rows, 4, seed=8)[0]} != {r.id for r in first[0]} or {
        r.id for r in random_reviewed(rows, 4, seed=9)[0]
    } != {r.id for r in first[0]}
    pipeline = stub_pipeline(threshold=0.5)
    draws = []
    for seed in (7, 8):
        reviewed, scored = random_reviewed(rows, 4, seed)
        draws.append(draw_of(seed, run_golden(pipeline, scored, reviewed)))
    reviewed, scored = random_reviewed(rows, 4, 7)
    again = draw_of(7, run_golden(pipeline, scored, reviewed))
    assert again == draws[0]
    assert 0.0 < draws[0].auto_linked_share <= 1.0 and draws[0].wrong_share is not None
    summary = summarise_draws(draws, DecisionPolicy())
    assert summary.draws == 2 and summary.risk == "links"  # the default since issue 59
    wrong = [d.wrong_share for d in draws if d.wrong_share is not None]
    assert summary.mean_wrong == round(sum(wrong) / len(wrong), 4)
    assert summary.share_over_budget == sum(w > 0.03 for w in wrong) / 2
