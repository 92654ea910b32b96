"""Contract tests: the exported JSON Schemas are what consumers validate against."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.schemas.envelopes import LinkProposal, dump_envelope
from librarian.schemas.export import CONTRACTS, PACKAGED_SCHEMA_DIR, export_schemas
from tests.stubs import StubScorer, stub_pipeline

EXAMPLES = Path(__file__).parent / "examples"


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((PACKAGED_SCHEMA_DIR / f"{name}.schema.json").read_text())
    return loaded


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(
        schema(name), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_committed_schemas_match_the_models(tmp_path: Path) -> None:
    export_schemas(tmp_path)
    for name in CONTRACTS:
        fresh = json.loads((tmp_path / f"{name}.schema.json").read_text())
        assert fresh == schema(name), f"{name}: run `librarian schema export schemas/json`"


@pytest.mark.parametrize(
    ("name", "file"), [("LinkProposal", "link_proposal.json"), ("ReviewItem", "review_item.json")]
)
def test_hand_checked_examples_validate(name: str, file: str) -> None:
    validator(name).validate(json.loads((EXAMPLES / file).read_text()))


def _no_additional_properties(node: Any, path: str = "") -> list[str]:
    """Every object schema in the contract must refuse unknown keys."""
    found = []
    if isinstance(node, dict):
        if (
            node.get("type") == "object"
            and "properties" in node
            and node.get("additionalProperties") is not False
        ):
            found.append(path or "/")
        for key, value in node.items():
            found.extend(_no_additional_properties(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.extend(_no_additional_properties(value, f"{path}/{i}"))
    return found


@pytest.mark.parametrize("name", ["LinkProposal", "ReviewItem"])
def test_every_level_refuses_additional_properties(name: str) -> None:
    assert _no_additional_properties(schema(name)) == []


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(surprise=1),
        lambda d: d["knowledge"]["source"].update(surprise=1),
        lambda d: d["retrieval"]["candidates"][0].update(surprise=1),
        lambda d: d["links"][0].update(confidence=1.5),
        lambda d: d["links"].clear(),
        lambda d: d["links"][0].update(cre_id="61-305"),
        lambda d: d.update(status="review_required"),
        lambda d: d["knowledge"]["source"].pop("committed_at"),
        lambda d: d.pop("chunk_id"),
    ],
)
def test_broken_proposals_are_refused(mutate: Any) -> None:
    doc = copy.deepcopy(json.loads((EXAMPLES / "link_proposal.json").read_text()))
    mutate(doc)
    assert not validator("LinkProposal").is_valid(doc)


def test_review_needs_a_known_reason_code() -> None:
    doc = json.loads((EXAMPLES / "review_item.json").read_text())
    doc["reason_code"] = "BECAUSE"
    assert not validator("ReviewItem").is_valid(doc)


def test_every_envelope_the_linker_emits_validates() -> None:
    texts = [
        "see CRE 200-001",
        "see CRE 999-999",
        "CRE 200-001 CRE 300-001",
        "rotate session token",
        "zzzz",
        "parameterized queries",
    ]
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}"}) for i, t in enumerate(texts)
    ]
    for threshold, scorer in ((0.8, None), (0.1, StubScorer()), (0.99, StubScorer())):
        result = one_shot.link(
            stub_pipeline(threshold=threshold, scorer=scorer), sections, "r", datetime.now(UTC)
        )
        for env in result.envelopes:
            name = "LinkProposal" if isinstance(env, LinkProposal) else "ReviewItem"
            validator(name).validate(dump_envelope(env))


def test_the_stub_pipeline_envelopes_meet_the_published_rfc() -> None:
    from tests.rfc import assert_rfc_valid

    texts = [
        "rotate session token after login",
        "see CRE 200-001",
        "the weather",
        "Sessions are not rotated after login",
    ]
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}"}) for i, t in enumerate(texts)
    ]
    for linker in (stub_pipeline(threshold=0.2), stub_pipeline(threshold=0.2, scorer=StubScorer())):
        envelopes = [dump_envelope(e) for e in one_shot.link(linker, sections, "r").envelopes]
        assert {e["status"] for e in envelopes} == {"linked", "review_required"}
        assert_rfc_valid(envelopes)


def test_the_rfc_check_catches_what_the_rfc_forbids() -> None:
    from tests.rfc import rfc_errors

    good = json.loads((EXAMPLES / "link_proposal.json").read_text())
    assert rfc_errors(good) == []
    no_id = copy.deepcopy(good)
    del no_id["knowledge"]["locator"]["id"]
    assert any("'id' is a required property" in e for e in rfc_errors(no_id))
    naive = copy.deepcopy(good)
    naive["classified_at"] = "2026-11-30T09:15:00"  # no zone: not an RFC 3339 date-time
    assert any("date-time" in e for e in rfc_errors(naive))
    relative = copy.deepcopy(good)
    relative["knowledge"]["source"]["url"] = "not a uri"
    assert any("uri" in e for e in rfc_errors(relative))
