"""Issue 30, item 7: the suggest API's contract. `POST /api/v1/suggest` answers the
envelope `librarian explain --json` prints, valid against the RFC schemas; the token, the
Host check, the size limit and bad bodies get clear 4xx answers; the OpenAPI document
describes the API (and only it), and /docs serves Swagger UI from this server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from librarian.review.api import MAX_BODY_BYTES, SUGGEST_PATH
from librarian.review.web import Workbench, create_app
from librarian.schemas.envelopes import dump_envelope
from librarian.store.db import make_engine, upgrade
from tests.rfc import assert_rfc_valid
from tests.stubs import small_hub, stub_pipeline

TOKEN = "t" * 20
TEXT = "Session tokens must be rotated after login"


@pytest.fixture
def api(tmp_path: Path) -> TestClient:
    engine = make_engine(f"sqlite:///{tmp_path / 'api.db'}")
    upgrade(engine)
    pipeline = stub_pipeline(threshold=0.5)
    bench = Workbench(engine, small_hub(), token=TOKEN, suggester=lambda: pipeline)
    return TestClient(create_app(bench), base_url="http://127.0.0.1:8765")


def ask(api: TestClient, body: object, **headers: str) -> Any:
    return api.post(
        SUGGEST_PATH,
        content=json.dumps(body),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", **headers},
    )


def test_suggest_answers_what_explain_json_prints(api: TestClient) -> None:
    answer = ask(api, {"text": TEXT, "title": "Sessions"})
    assert answer.status_code == 200, answer.text
    envelope = answer.json()
    assert_rfc_valid([envelope])
    explained = dump_envelope(stub_pipeline(threshold=0.5).explain(TEXT, "Sessions"))
    same = ("status", "chunk_id", "links", "suggested_links", "reason_code")
    assert {k: envelope.get(k) for k in same} == {k: explained.get(k) for k in same}
    ranked = envelope["retrieval"]["candidates"]
    assert ranked and all(c["cre_id"] and c["cre_name"] for c in ranked)


@pytest.mark.parametrize(
    ("body", "headers", "status", "says"),
    [
        ({"text": TEXT}, {"Authorization": "Bearer wrong-token-wrong-token"}, 401, "token"),
        ({"text": TEXT}, {"Host": "evil.example"}, 400, "Invalid host"),
        ({"text": ""}, {}, 422, "text"),
        ({"text": "   "}, {}, 422, "blank"),
        ({"words": TEXT}, {}, 422, "text"),
        ({"text": TEXT, "extra": 1}, {}, 422, "extra"),
        ({"text": "x" * (MAX_BODY_BYTES + 1)}, {}, 413, "at most"),
        ({"text": TEXT}, {"Origin": "http://evil.example"}, 403, "cross-origin"),
    ],
)
def test_refusals_are_clear_4xx(
    api: TestClient, body: object, headers: dict[str, str], status: int, says: str
) -> None:
    answer = ask(api, body, **headers)
    assert answer.status_code == status, answer.text
    assert says in answer.text


def test_not_json_and_no_models(api: TestClient, tmp_path: Path) -> None:
    bad = api.post(SUGGEST_PATH, content=b"{not json", headers={"Authorization": f"Bearer {TOKEN}"})
    assert bad.status_code == 422
    engine = make_engine(f"sqlite:///{tmp_path / 'none.db'}")
    upgrade(engine)
    untrained = TestClient(create_app(Workbench(engine, small_hub())), base_url="http://127.0.0.1")
    refused = untrained.post(SUGGEST_PATH, json={"text": TEXT})
    assert refused.status_code == 503 and "librarian train" in refused.text


def test_the_openapi_document_describes_the_api_and_docs_serve_it_locally(api: TestClient) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    document = api.get("/openapi.json", headers=headers).json()
    assert list(document["paths"]) == [SUGGEST_PATH]  # the pages are not the API
    request = document["components"]["schemas"]["SuggestRequest"]
    assert request["required"] == ["text"] and request["additionalProperties"] is False
    docs = api.get("/docs", headers=headers)
    assert docs.status_code == 200 and "/swagger/swagger-ui-bundle.js" in docs.text
    assert "<script>" not in docs.text  # no inline script: the CSP's script-src 'self' holds
    assert "script-src 'self'" in docs.headers["content-security-policy"]
    assert api.get("/swagger/swagger-ui-bundle.js", headers=headers).status_code == 200
    assert api.get("/static/swagger-init.js", headers=headers).status_code == 200
    assert api.get("/openapi.json").status_code == 401  # the token guards the docs too
