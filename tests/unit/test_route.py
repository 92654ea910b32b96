from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from librarian.factory import assemble
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.pipeline import Pipeline
from librarian.retrieval.index import build_index
from librarian.routing.classifier import BranchClassifier
from librarian.routing.collections import RoutingError, hub_collections
from librarian.routing.router import Router
from librarian.routing.rules import load_rules
from librarian.schemas.envelopes import Envelope
from librarian.schemas.records import Section
from librarian.schemas.routing import RoutingMode
from librarian.settings import LinkerSettings
from tests.stubs import StubEmbedder, two_branch_hub

NOW = datetime(2026, 11, 30, tzinfo=UTC)
TECH = ["Technical application security controls"]
GOV = ["Governance processes for security"]


def linker(router: Router | None = None, mode: RoutingMode = "pins", top_k: int = 6) -> Pipeline:
    hub = two_branch_hub()
    embedder = StubEmbedder()
    settings = LinkerSettings(threshold=0.99, top_k=top_k, cache_dir=None, routing=mode)
    return assemble(settings, hub, embedder, build_index(hub, embedder, None), router=router)


def section(text: str, pin: tuple[str, ...] | None = None) -> Section:
    return section_from_text(text).model_copy(update={"collections": pin})


def cre_ids(envelope: Envelope) -> list[str]:
    return [c.cre_id for c in envelope.retrieval.candidates]


def test_collections_are_the_root_branches() -> None:
    assert hub_collections(two_branch_hub()) == {
        "technical": frozenset({"100-000", "100-001", "100-002"}),
        "governance": frozenset({"500-000", "500-001", "500-002"}),
    }


def test_characterization_with_no_router_configured_every_collection_is_searched() -> None:
    texts = ["rotate session token policy", "sql queries", "security policy review"]
    default = one_shot.link(linker(), [section(t) for t in texts], "r", NOW)
    off = one_shot.link(linker(mode="off"), [section(t) for t in texts], "r", NOW)
    assert [cre_ids(e) for e in default.envelopes] == [cre_ids(e) for e in off.envelopes]
    for decision in default.routing:
        assert decision.effective == "all" and not decision.widened
        assert decision.selected == ["technical", "governance"]
    # Both branches appear among the candidates: nothing narrowed.
    first = set(cre_ids(default.envelopes[0]))
    assert {"100-001", "500-002"} <= first


def test_an_input_pin_narrows_and_an_unknown_one_widens_with_a_warning() -> None:
    result = one_shot.link(
        linker(),
        [
            section("rotate session token policy", pin=("governance",)),
            section("rotate session token policy", pin=("nope",)),
            section("rotate session token policy", pin=("nope", "technical")),
        ],
        "r",
        NOW,
    )
    narrow, unknown, partly = result.routing
    assert narrow.effective == "pin" and narrow.selected == ["governance"]
    assert set(cre_ids(result.envelopes[0])) <= {"500-000", "500-001", "500-002"}
    assert unknown.widened and unknown.effective == "all"
    assert any("no known collection" in w for w in unknown.warnings)
    assert {"100-001", "500-002"} <= set(cre_ids(result.envelopes[1]))
    assert partly.selected == ["technical"] and any("nope" in w for w in partly.warnings)


def test_a_configured_pin_of_unknown_collections_is_refused() -> None:
    router = Router(hub_collections(two_branch_hub()), pin=("nope",))
    with pytest.raises(RoutingError, match="no such collection"):
        router.check_pin()


def rules_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    return path


def test_rules_boost_and_exclude_and_exclude_wins(tmp_path: Path) -> None:
    rules = load_rules(
        rules_file(
            tmp_path,
            """
rules:
  - name: policy-words
    keywords: [policy, governance]
    boost: [governance]
  - name: sql
    regex: "\\\\bsql\\\\b"
    fields: [text, title]
    boost: [technical]
  - name: no-gov-for-sql
    keywords: sql
    exclude: [governance]
""",
        ),
        ["technical", "governance"],
    )
    router = Router(hub_collections(two_branch_hub()), rules=rules)
    policy = router.route(section("the policy review"), None)
    assert policy.effective == "rules" and policy.selected == ["governance"]
    both = router.route(section("sql policy"), None)
    assert both.selected == ["technical"]  # governance boosted by one rule, excluded by another
    reasons = {c.collection: c.reason for c in both.collections}
    assert reasons["governance"] == "excluded by rule no-gov-for-sql"
    plain = router.route(section("rotate the token"), None)
    assert plain.effective == "all" and not plain.widened


def test_rules_that_exclude_everything_widen(tmp_path: Path) -> None:
    text = "rules:\n  - {name: all-out, keywords: [x], exclude: [technical, governance]}\n"
    rules = load_rules(rules_file(tmp_path, text), ["technical", "governance"])
    decision = Router(hub_collections(two_branch_hub()), rules=rules).route(section("x y"), None)
    assert decision.widened and decision.effective == "all"
    assert "left no collection" in decision.warnings[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [{name: a, keywords: [x]}]", "needs `boost` or `exclude`"),
        ("rules: [{name: a, keywords: [x], regex: y, boost: [technical]}]", "exactly one"),
        ("rules: [{name: a, regex: '(', boost: [technical]}]", "bad regex"),
        ("rules: [{name: a, keywords: [x], boost: [nope]}]", "unknown collection 'nope'"),
        ("rules: [{name: a, keywords: [x], fields: [body], boost: [technical]}]", "unknown field"),
        ("just a string", "expected a mapping"),
    ],
)
def test_bad_rules_are_refused_naming_the_rule(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(RoutingError, match="routing rules") as info:
        load_rules(rules_file(tmp_path, text), ["technical", "governance"])
    assert message in str(info.value)


def classifier(confident: bool, dimension: int = 1024) -> BranchClassifier:
    weights = np.zeros((2, dimension))
    bias = np.array([0.0, 8.0 if confident else 0.0])
    return BranchClassifier(("technical", "governance"), weights, bias)


def test_a_confident_classifier_narrows_a_doubtful_or_broken_one_widens() -> None:
    collections = hub_collections(two_branch_hub())
    vector = np.zeros(1024, dtype=np.float32)
    sure = Router(collections, "auto", classifier=classifier(True)).route(section("x"), vector)
    assert sure.effective == "classifier" and sure.selected == ["governance"]
    assert ({c.collection: c.score for c in sure.collections}["governance"] or 0.0) > 0.99
    doubt = Router(collections, "auto", classifier=classifier(False)).route(section("x"), vector)
    assert doubt.widened and "not confident" in doubt.warnings[0]
    broken = Router(collections, "auto", classifier=classifier(True, 8)).route(section("x"), vector)
    assert broken.widened and "classifier error" in broken.warnings[0]
    missing = Router(collections, "auto").route(section("x"), vector)
    assert missing.widened and "no trained branch classifier" in missing.warnings[0]
    pinned = Router(collections, "auto", classifier=classifier(True)).route(
        section("x", pin=("technical",)), vector
    )
    assert pinned.effective == "pin"  # a pin outranks the classifier
    off = Router(collections, "off", pin=("technical",), classifier=classifier(True))
    assert off.route(section("x"), vector).selected == ["technical", "governance"]


def test_the_classifier_round_trips_through_json(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 8)).astype(np.float32)
    labels = ["technical" if v > 0 else "governance" for v in x[:, 0]]
    fitted = BranchClassifier.fit(x, labels, {"samples": 40})
    fitted.save(tmp_path / "router.json")
    loaded = BranchClassifier.load(tmp_path / "router.json")
    assert np.allclose(fitted.probabilities(x), loaded.probabilities(x), atol=1e-6)
    predicted = [loaded.classes[i] for i in loaded.probabilities(x).argmax(axis=1)]
    assert np.mean([p == t for p, t in zip(predicted, labels, strict=True)]) > 0.9
    (tmp_path / "bad.json").write_text('{"classes": ["a"]}')
    with pytest.raises(RoutingError, match="damaged"):
        BranchClassifier.load(tmp_path / "bad.json")


def test_concurrent_batches_never_see_each_others_selection() -> None:
    shared = linker()
    text = "rotate session token policy"
    narrow_alone = one_shot.link(shared, [section(text, pin=("governance",))], "r", NOW).envelopes[
        0
    ]
    wide_alone = one_shot.link(shared, [section(text)], "r", NOW).envelopes[0]

    def one(pin: tuple[str, ...] | None) -> list[str]:
        return cre_ids(one_shot.link(shared, [section(text, pin=pin)], "r", NOW).envelopes[0])

    pins = [("governance",), None] * 50
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, pins))
    for pin, got in zip(pins, results, strict=True):
        assert got == cre_ids(narrow_alone if pin else wide_alone)
    assert cre_ids(narrow_alone) != cre_ids(wide_alone)
