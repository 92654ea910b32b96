"""The published OpenCRE RFC schemas (packaged in schemas/rfc/, as the RFC publishes them),
with `$ref`s resolved by `$id` and formats (date-time, uri) checked: what every envelope
the librarian writes must pass."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
from referencing import Registry, Resource

from librarian.paths import packaged

FILES = {
    "LinkProposal": "link-proposal.json",
    "ReviewItem": "review-item.json",
    "HumanDecision": "human-decision.json",
    "KnowledgeItem": "knowledge-item.json",
}


@cache
def _registry() -> Registry:
    resources = []
    for path in sorted(packaged("schemas", "rfc").glob("*.json")):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(packaged("schemas", "rfc", FILES[name]).read_text())
    return jsonschema.Draft202012Validator(
        schema,
        registry=_registry(),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def rfc_errors(envelope: dict[str, Any]) -> list[str]:
    """Why `envelope` (a LinkProposal or ReviewItem as JSON) fails the RFC, or []."""
    name = "LinkProposal" if envelope.get("status") == "linked" else "ReviewItem"
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
        for e in validator(name).iter_errors(envelope)
    ]


def assert_rfc_valid(envelopes: list[dict[str, Any]]) -> None:
    bad = [(e.get("chunk_id"), rfc_errors(e)) for e in envelopes]
    bad = [(c, errors) for c, errors in bad if errors]
    assert not bad, bad[:3]


def assert_rfc_valid_decisions(decisions: list[dict[str, Any]]) -> None:
    """Every HumanDecision valid against the RFC's human-decision.json, formats checked."""
    bad = [
        (d.get("review_id"), [e.message for e in validator("HumanDecision").iter_errors(d)])
        for d in decisions
    ]
    bad = [(r, errors) for r, errors in bad if errors]
    assert not bad, bad[:3]
