"""Issue 59: a confidence that separates (the verifier), the guarantee over a source's links,
a band certified with a few wrong, and a team that follows the review plan."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from librarian.artifacts.calibrator import Calibrator
from librarian.artifacts.source_model import JOINT_FEATURES, SourceModel
from librarian.artifacts.verifier import (
    VERIFIER_FEATURES,
    Verifier,
    content_words,
    features,
    name_overlaps,
    rescaled,
)
from librarian.policy import DecisionPolicy, certifies, choose_cut, review_plan
from librarian.policy.plan import drawn_band
from librarian.retrieval.collective import PriorRule
from librarian.training.following import follow_plan
from librarian.training.verifier import prefix

BOUND = DecisionPolicy(budget=0.03, confidence=0.9, risk="bound")
LINKS = DecisionPolicy(budget=0.03, confidence=0.9, risk="links")


def test_the_cre_names_words_are_read_from_the_text() -> None:
    """The held-out standard's confident error: 'time-based OTPs have a defined lifetime'
    given 'Use time-based OTP only once' beside 'Defined lifetime of time-based one-time
    password'. The text says all of the second name's words, half of the first's."""
    text = content_words("Verify that time-based OTPs have a defined lifetime.")
    once = content_words("Use time-based OTP only once")
    lifetime = content_words("Defined lifetime of time-based one-time password")
    assert "define" in text and "the" not in text  # stems; no stop words
    first, second = name_overlaps(text, [once, lifetime])
    assert second > first
    joint, alone, overlap, margin = features(0.9, 0.4, [first, second], 0)
    assert (joint, alone, overlap) == (0.9, 0.4, first) and margin == pytest.approx(first - second)
    assert name_overlaps(text, [frozenset()]) == [0.0]  # a nameless hub says nothing


def test_the_verifier_reads_the_text_and_its_number_replaces_only_the_first() -> None:
    """Weighted on the name overlap alone: the same candidates score higher where the
    text says the first CRE's name; the others share what is left."""
    model = Calibrator((0.0, 0.0, 6.0, 0.0), -3.0, 100, VERIFIER_FEATURES)
    alone = Calibrator((1.0, 0.0, 0.0, 0.0), 0.0, 100)
    verifier = Verifier.of(model, alone, {"1": "Encrypt all communications", "2": "Log events"})
    read = verifier.overlaps("Encrypt communications in transit", ["1", "2"])
    says = verifier.confidence(read, [0.7, 0.6], None, 0.5, 0)
    unread = verifier.overlaps("Rotate the keys yearly", ["1", "2"])
    silent = verifier.confidence(unread, [0.7, 0.6], None, 0.5, 0)
    assert says > 0.5 > silent
    shown = rescaled([0.6, 0.3, 0.2], 0, 0.9)
    assert shown[0] == 0.9 and all(p <= 0.1 + 1e-12 for p in shown[1:])
    assert shown[1] > shown[2]  # the others keep their order


def test_a_source_model_keeps_its_verifier_and_reads_one_without(tmp_path: Path) -> None:
    joint = Calibrator(tuple(0.1 for _ in JOINT_FEATURES), 0.0, 10, JOINT_FEATURES)
    verifier = Calibrator((1.0, 2.0, 3.0, 4.0), -1.0, 10, VERIFIER_FEATURES)
    model = SourceModel(PriorRule(0.9, 0.05, 0.9, 0.02), joint, 0.9, verifier=verifier)
    path = tmp_path / "source.json"
    model.save(path)
    assert SourceModel.load(path).verifier == verifier
    older = json.loads(path.read_text())
    del older["verifier"]  # models trained before issue 59
    path.write_text(json.dumps(older))
    assert SourceModel.load(path).verifier is None


def test_the_guarantee_over_the_sources_links_counts_what_people_linked() -> None:
    """By hand: 50 reviewed of 60, all right, leave 10 open. Over the auto-links alone
    (3% of 10 < 1) one wrong open item breaks the promise: P(0 of 1 wrong in the sample)
    = 10/60 > 0.10. Over the source's 60 links, floor(0.03 * 60) = 1 wrong is within it:
    the null needs 2 wrong among the open ones, P = C(10,2)/C(60,2) = 0.025 <= 0.10."""
    assert not certifies(60, 50, 0, 0.03, 0.9)
    assert certifies(60, 50, 0, 0.03, 0.9, links=50)
    assert not BOUND.certifies(60, 50, 0, 50) and LINKS.certifies(60, 50, 0, 50)
    assert "auto-links" in BOUND.guarantee() and "source's links" in LINKS.guarantee()
    pending, reviewed = [0.95] * 10, [0.95] * 50
    cut = choose_cut(pending, reviewed, [True] * 50, LINKS)
    assert (cut.basis, cut.auto_links, cut.guarantee) == ("reviewed", 10, "links")
    assert choose_cut(pending, reviewed, [True] * 50, BOUND).basis == "none"


def test_a_band_can_be_certified_with_a_wrong_item_tolerated_before_the_data() -> None:
    """One wrong decision among the 200 reviewed of a top band of 220: with none
    tolerated, that band's cut is the first of the sequence, fails, and ends it; nothing
    is linked. With one tolerated (chosen before the data), a cut is in the sequence only
    where one wrong could pass: the top band is not, and the band below, with 500
    reviewed, is certified. Tolerating costs decisions where all are right."""
    pending = [0.99] * 20 + [0.9] * 300
    reviewed = [0.99] * 200 + [0.9] * 300
    correct = [False] + [True] * 499
    tolerant = DecisionPolicy(budget=0.03, confidence=0.9, tolerated_wrong=1)
    assert choose_cut(pending, reviewed, correct, BOUND).basis == "none"
    assert choose_cut(pending, reviewed, correct, tolerant).auto_links == 320
    plan_strict = review_plan([0.9] * 1000, [], [], BOUND)
    plan_tolerant = review_plan([0.9] * 1000, [], [], tolerant)
    assert plan_tolerant.more > plan_strict.more


def test_a_team_following_the_plan_decides_in_the_band_until_it_is_certified() -> None:
    """A 600-item source, its most confident 300 all right and the rest 30% wrong: the
    plan's decisions certify a cut within K, each decided item once; the same seed gives
    the same decisions, another seed others."""
    rng = random.Random(5)
    confidence = sorted((rng.random() for _ in range(600)), reverse=True)
    right = [i < 300 or rng.random() > 0.3 for i in range(600)]
    followed = follow_plan(confidence, right, 150, BOUND, "source")
    assert len(followed.decided) == len(set(followed.decided)) == 150
    assert followed.certified_after is not None and followed.certified_after <= 150
    assert follow_plan(confidence, right, 150, BOUND, "source") == followed
    assert follow_plan(confidence, right, 150, BOUND, "other").decided != followed.decided
    assert follow_plan(confidence, right, 10, BOUND, "source").certified_after is None


def test_the_confident_prefix_is_read_off_the_answers() -> None:
    scores = [0.9, 0.8, 0.7, 0.6, 0.5]
    assert prefix(scores, [True, True, False, True, True], 0.0) == 2
    assert prefix(scores, [True, True, False, True, True], 0.25) == 5


def test_what_a_source_of_its_size_can_expect_is_said_in_plain_words() -> None:
    """Issue 59, item 5: the arithmetic favours large sources. A 40-rule policy: no band
    is worth certifying; a 1,000-row standard: under a hundred decisions, all right,
    certify nine in ten of its items; the guarantee over the links asks for fewer."""
    from librarian.policy import outlook

    assert "each need a person" in outlook(40, BOUND)
    large = outlook(1000, BOUND)
    decisions = int(large.split("about ")[1].split(" ")[0])
    linked = int(large.split("would link ")[1].split(" ")[0])
    assert decisions < 100 and linked > 900 and "auto-links" in large
    over_links = outlook(1000, LINKS)
    assert int(over_links.split("about ")[1].split(" ")[0]) < decisions
    assert "each need a person" not in outlook(100, LINKS)


@pytest.mark.parametrize("items", [100, 277, 1000])
def test_the_plan_weighs_a_band_as_the_outlook_does(items: int) -> None:
    """Issue 59: the plan's band is the one whose self-linking items less the decisions it
    asks for are the most, as `outlook` weighs it: with nothing decided, both name the
    same decisions and the same items linked."""
    from librarian.policy import outlook

    pending = [1.0 - i / (2 * items) for i in range(items)]
    plan = review_plan(pending, [], [], LINKS)
    said = outlook(items, LINKS)
    decisions = int(said.split("about ")[1].split(" ")[0])
    linked = int(said.split("would link ")[1].split(" ")[0])
    assert (plan.more, plan.covers) == (decisions, linked)
    assert not plan.review_all and plan.covers > plan.more


def test_the_plan_draws_its_band_once_whatever_the_decisions() -> None:
    """Issue 59: a band re-drawn after each decision steers its own sample (it shrank
    after a wrong one and grew once certified), and the exact test reads the decisions
    above a cut as a simple random sample of it. A 277-item source, 20 decisions right
    at the top and 2 wrong at 0.9: the band is the most confident 60% of all 299 items,
    as with nothing decided, and the plan counts the decisions still needed in it."""
    pending = [1.0 - i / 554 for i in range(277)]
    reviewed = [0.999 - i / 1000 for i in range(20)] + [0.9, 0.9]
    everything = sorted(pending + reviewed, reverse=True)
    plan = review_plan(pending, reviewed, [True] * 20 + [False] * 2, LINKS)
    assert drawn_band(299, LINKS) == 180 and plan.at == everything[179]
    all_right = review_plan(pending, reviewed, [True] * 22, LINKS)
    assert all_right.at == plan.at and all_right.more < plan.more
    assert plan.covers == sum(c >= plan.at for c in pending) - plan.more


def test_a_large_sources_band_is_what_a_hundred_decisions_can_vouch_for() -> None:
    """On a 1,000-item source, 60% would be a band no hundred decisions with two wrong
    could certify; the band is the largest they could. Under the guarantee over the
    auto-links alone no large band survives two wrong: the plan searches the cuts."""
    band = drawn_band(1000, LINKS)
    assert 150 < band < 600
    assert LINKS.certifies(band, 100, 2, 98) and not LINKS.certifies(band + 1, 100, 2, 98)
    assert drawn_band(1000, BOUND) <= 110


def test_a_band_certifiable_only_at_more_decisions_than_it_links_says_review_all() -> None:
    """Weighed net, no band of a 60-item source is worth its decisions; the plan still
    names the cheapest band that could be certified and says reviewing all is cheaper
    (not "no band can be certified", which would be false)."""
    plan = review_plan([0.9] * 60, [], [], LINKS)
    assert plan.more and plan.review_all
    assert "reviewing all 60 open items with a suggestion is cheaper" in plan.says(LINKS)


def test_once_certified_a_team_decides_what_the_cut_leaves_to_people() -> None:
    """A 200-item source whose 150 most confident are right: following the plan certifies
    a cut; once more decisions would not extend it, each decision is an item the cut
    leaves to people, so more decisions never shrink what links itself (on the held-out
    standard 100 decisions linked fewer than 50 while the team went on deciding the
    certified band)."""
    confidence = [1.0 - i / 400 for i in range(200)]
    right = [i < 150 for i in range(200)]

    def linked_after(k: int) -> tuple[set[int], list[int]]:
        decided = follow_plan(confidence, right, k, LINKS, "source").decided
        open_items = [i for i in range(200) if i not in set(decided)]
        cut = choose_cut(
            [confidence[i] for i in open_items],
            [confidence[i] for i in decided],
            [right[i] for i in decided],
            LINKS,
        )
        return {i for i in open_items if confidence[i] >= cut.cut}, decided

    linked_75, _ = linked_after(75)
    linked_100, decided_100 = linked_after(100)
    linked_150, decided_150 = linked_after(150)
    assert 0 < len(linked_75) <= len(linked_100) <= len(linked_150)
    assert decided_150[:100] == decided_100
    assert not linked_100 & set(decided_150[100:])  # none it links is decided by a person


def test_the_plan_counts_an_open_item_once_for_each_of_its_rows_as_the_run_does() -> None:
    """A golden item read as a title and as prose is two rows: the run's cut counts both
    among the links it would make, and a team's decision on the item decides both. The
    plan that reads each item once certifies earlier than the run can; read as the run
    reads it, certification takes more decisions, and what it certifies holds on the rows."""
    confidence = [1.0 - i / 400 for i in range(200)]
    right = [i < 170 for i in range(200)]
    twice = [[c, c - 0.001] for c in confidence]
    once = follow_plan(confidence, right, 120, LINKS, "source")
    rows = follow_plan(confidence, right, 120, LINKS, "source", twice)
    assert once.certified_after is not None and rows.certified_after is not None
    assert rows.certified_after > once.certified_after
    open_rows = [c for i in range(200) if i not in set(rows.decided) for c in twice[i]]
    cut = choose_cut(
        open_rows, [confidence[i] for i in rows.decided], [right[i] for i in rows.decided], LINKS
    )
    assert cut.auto_links > 0
