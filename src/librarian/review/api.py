"""The suggest API on the workbench server: `POST /api/v1/suggest`, a text in, the same
envelope `librarian explain --json` prints out (ranked CREs with names and confidences,
and the decision: a LinkProposal, or a ReviewItem with its reason). Token-protected and
Host-checked as every page is (`web._guard`); a body over MAX_BODY_BYTES is refused
before it is read. OpenAPI at `/openapi.json`, read in a browser at `/docs` (Swagger UI 5
from the fastapi-offline package, served from this server: no CDN).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from librarian.schemas.envelopes import dump_envelope

if TYPE_CHECKING:
    from librarian.pipeline.pipeline import Pipeline

SUGGEST_PATH = "/api/v1/suggest"
MAX_BODY_BYTES = 64 * 1024
MAX_TEXT_CHARS = 20_000
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
)


class SuggestRequest(BaseModel):
    """One section's text, and its title when it has one (the linker reads both)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, description="the section's text")
    title: str | None = Field(default=None, max_length=500, description="its title or heading")


class SuggestResponse(BaseModel):
    """The envelope `librarian explain --json` prints: a LinkProposal (`status` linked,
    `links`) or a ReviewItem (`reason_code`, `suggested_links`), each link with its CRE
    id, name and confidence, and `retrieval.candidates` ranked."""

    model_config = ConfigDict(extra="allow")

    status: str
    chunk_id: str


def suggest_router(pipeline: Callable[[], Pipeline | None]) -> APIRouter:
    """The API's routes; `pipeline` gives the home's trained pipeline (built at the first
    call), or None when there are no trained models."""
    router = APIRouter()

    @router.post(
        SUGGEST_PATH,
        response_model=SuggestResponse,
        responses={
            401: {"description": "no access token (the workbench was started with one)"},
            411: {"description": "no Content-Length"},
            413: {"description": f"a body over {MAX_BODY_BYTES} bytes"},
            422: {"description": "not a JSON object with a non-empty `text`"},
            503: {"description": "no trained models on this server (`librarian train`)"},
        },
        summary="Suggest CREs for one text",
    )
    async def suggest(asked: SuggestRequest) -> dict[str, Any]:
        if not asked.text.strip():
            raise HTTPException(422, "text is blank")
        built = await run_in_threadpool(pipeline)
        if built is None:
            raise HTTPException(503, "no trained models on this server: run `librarian train`")
        envelope = await run_in_threadpool(built.explain, asked.text, asked.title)
        return dump_envelope(envelope)

    return router


def docs_page(openapi_url: str, assets: str) -> HTMLResponse:
    """Swagger UI over the OpenAPI document; its script and styles from this server."""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>librarian API</title>
<link rel="stylesheet" href="{assets}/swagger-ui.css"></head>
<body><div id="swagger-ui" data-url="{openapi_url}"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="/static/swagger-init.js"></script></body></html>"""
    return HTMLResponse(page)
