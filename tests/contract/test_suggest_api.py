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

from librarian.pipeline import one_shot
from librarian.review.api import MAX_BODY_BYTES, SUGGEST_PATH
from librarian.review.bench import Workbench
from librarian.review.web import create_app
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
    named = envelope.pop("cres")  # the librarian's addition; the rest is the RFC envelope
    assert_rfc_valid([envelope])
    # Issue 41, item 6: the CREs suggested, with their names and places in the hub.
    links = envelope.get("links") or envelope["suggested_links"]
    assert [c["cre_id"] for c in named] == [link["cre_id"] for link in links]
    hub = small_hub()
    first = named[0]
    assert first["name"] == hub.by_id[first["cre_id"]].name
    assert first["path"] == list(hub.by_id[first["cre_id"]].hierarchy_path)
    explained = dump_envelope(one_shot.explain(stub_pipeline(threshold=0.5), TEXT, "Sessions"))
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


def test_top_k_and_a_source_the_store_does_not_know(api: TestClient) -> None:
    three = ask(api, {"text": TEXT, "top_k": 1}).json()
    assert len(three["cres"]) == 1
    unknown = ask(api, {"text": TEXT, "source": "plain:nobody"})
    assert unknown.status_code == 404 and "no source" in unknown.text


def test_a_source_applies_its_stored_policy_and_history(tmp_path: Path) -> None:
    """Issue 41, item 6: the API refused `source` (422) and always applied the cut for a
    section linked alone."""
    from sqlalchemy.orm import Session

    from librarian.policy import DecisionPolicy
    from librarian.store.policies import record_policy
    from tests.seeded import seed

    engine = make_engine(f"sqlite:///{tmp_path / 'src.db'}")
    upgrade(engine)
    seed(engine, ["rotate session tokens", "parameterized sql queries"], run="r1")
    with Session(engine) as session:
        from sqlalchemy import select

        from librarian.store.tables import DecisionRow

        source = session.execute(select(DecisionRow.source_key)).scalars().first()
        record_policy(session, "r1", DecisionPolicy(budget=0.25, risk="bound"))
        session.commit()
    assert source
    pipeline = stub_pipeline(threshold=None)
    bench = Workbench(engine, small_hub(), token=TOKEN, suggester=lambda: pipeline)
    web = TestClient(create_app(bench), base_url="http://127.0.0.1:8765")
    answer = ask(web, {"text": TEXT, "source": source})
    assert answer.status_code == 200, answer.text
    said = answer.json()["retrieval"]["retriever"]
    assert f"source={source}" in said and "with probability" in said and "25%" in said


@pytest.mark.parametrize(
    "raw",
    [
        b'{"text": "\\ud800 lone surrogate"}',
        b'{"text": "ok", "title": "\\udfff"}',
        b'{"text": "\xff\xfe not utf-8"}',
        b'{"text": "\\u0000 nul"}',
    ],
)
def test_undecodable_or_unencodable_input_is_a_422_naming_the_field(
    api: TestClient, raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 47, item 11: a lone surrogate in the body answered 500, with an 80-line
    traceback in the log."""
    answer = api.post(
        SUGGEST_PATH,
        content=raw,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    # Bytes that are not UTF-8 are no JSON text at all (400, "error parsing the body"); a
    # lone surrogate is JSON whose string Python cannot encode (422, naming the field).
    assert answer.status_code in (200, 400, 422), answer.text
    if answer.status_code == 422:
        assert "Traceback" not in answer.text
        said = answer.json()["detail"]
        assert said and all("loc" in d and "msg" in d for d in said)
    assert "Traceback" not in caplog.text


def test_a_document_is_found_by_the_name_given_with_source_too(tmp_path: Path) -> None:
    """Issue 58, item 7: the API took a document only as `plain:NAME`, not by the name the
    team gave it with --source. Both name it now; an unknown one says how to name it."""
    from tests.unit.test_myopencre import store

    engine = make_engine(f"sqlite:///{tmp_path / 'plain.db'}")
    upgrade(engine)
    store(engine, "r1", threshold=0.99)  # "Acme Policy", read from a plain file
    pipeline = stub_pipeline(threshold=None)
    bench = Workbench(engine, small_hub(), token=TOKEN, suggester=lambda: pipeline)
    web = TestClient(create_app(bench), base_url="http://127.0.0.1:8765")
    by_key = ask(web, {"text": TEXT, "source": "plain:Acme Policy"})
    by_name = ask(web, {"text": TEXT, "source": "Acme Policy"})
    assert by_key.status_code == by_name.status_code == 200, by_name.text
    for answer in (by_key, by_name):
        assert "source=plain:Acme Policy" in answer.json()["retrieval"]["retriever"]
    unknown = ask(web, {"text": TEXT, "source": "Another Policy"})
    assert unknown.status_code == 404 and "the name given with --source" in unknown.text
