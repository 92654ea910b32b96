"""The suggest API on the workbench server: `POST /api/v1/suggest`, a text in, the same
envelope `librarian explain --json` prints out (ranked CREs with names and confidences,
and the decision: a LinkProposal, or a ReviewItem with its reason). Token-protected and
Host-checked as every page is (`web._guard`); a body over MAX_BODY_BYTES is refused
before it is read. OpenAPI at `/openapi.json`, read in a browser at `/docs` (Swagger UI 5
from the fastapi-offline package, served from this server: no CDN). A call's work runs on
threads of the API's own, SUGGESTS_AT_ONCE at a time with SUGGESTS_WAITING more waiting,
the rest answered 503 with Retry-After at once: a burst of calls never makes a reviewer's
page wait (`bounded.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from librarian.catalogue.hub import Hub
from librarian.pipeline import one_shot
from librarian.policy import Certified, DecisionPolicy
from librarian.review.bounded import Bounded, Full
from librarian.schemas.envelopes import Envelope, LinkProposal, dump_envelope
from librarian.schemas.records import History

if TYPE_CHECKING:
    from librarian.pipeline.pipeline import Pipeline

SUGGEST_PATH = "/api/v1/suggest"
MAX_BODY_BYTES = 64 * 1024
MAX_TEXT_CHARS = 20_000
# Suggest calls whose work runs at once (the models use every core themselves: more at once
# only makes each slower, and takes the CPU from the reviewers' pages), and how many more
# may wait for one; past both, 503 with Retry-After at once. The pages never wait on them:
# the work runs on threads of its own (`bounded.Bounded`).
SUGGESTS_AT_ONCE = 2
SUGGESTS_WAITING = 8
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
)


class SuggestRequest(BaseModel):
    """One section's text, and its title when it has one (the linker reads both)."""

    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, description="the section's text")
    title: str | None = Field(default=None, max_length=500, description="its title or heading")
    source: str | None = Field(
        default=None,
        max_length=1024,
        description="the standard: its source key (`librarian queue status` lists them) or "
        "the name a team gave a document with --source; the text is linked as a new section "
        "of it, with what its reviewers taught it and the policy its runs keep",
    )
    top_k: int | None = Field(
        default=None, ge=1, le=20, description="how many CREs to suggest (default 5)"
    )

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "text": "Passwords are stored with a slow, salted hash.",
                    "title": "Password storage",
                    "source": "plain:Acme Security Policy",
                    "top_k": 3,
                }
            ]
        },
    )


class SuggestResponse(BaseModel):
    """The envelope `librarian explain --json` prints: a LinkProposal (`status` linked,
    `links`) or a ReviewItem (`reason_code`, `suggested_links`), each link with its CRE
    id and confidence, and `retrieval.candidates` ranked; and `cres`, the same CREs first
    first with their names and places in the hub."""

    model_config = ConfigDict(extra="allow")

    status: str
    chunk_id: str


@dataclass(frozen=True)
class KnownSource:
    """What the store knows of a source a text is suggested for: what its reviewers
    decided, the policy its runs keep, and the cut the last of them chose (None: none
    since migration 0012)."""

    history: History
    policy: DecisionPolicy  # `store.policies.policy_of` the server's own
    cut: Certified | None
    key: str = ""  # the source's key (asked for by it, or by the name given with --source)


# By source key, over the server's own policy (None: no such source).
SourceContext = Callable[[str, DecisionPolicy], KnownSource | None]


def suggest_router(
    pipeline: Callable[[], Pipeline | None], source_context: SourceContext | None = None
) -> APIRouter:
    """The API's routes; `pipeline` gives the home's trained pipeline (built at the first
    call), or None when there are no trained models; `source_context` reads a source's
    history and stored policy from the workbench's store. A call's work (building the
    pipeline, reading the store, the models) runs on threads of its own, SUGGESTS_AT_ONCE
    at a time, SUGGESTS_WAITING more waiting; the rest are answered 503 at once."""
    router = APIRouter()
    slots = Bounded(SUGGESTS_AT_ONCE, SUGGESTS_WAITING)

    @router.post(
        SUGGEST_PATH,
        response_model=SuggestResponse,
        responses={
            401: {"description": "no access token (the workbench was started with one)"},
            411: {"description": "no Content-Length"},
            413: {"description": f"a body over {MAX_BODY_BYTES} bytes"},
            422: {"description": "not a JSON object with a non-empty `text`"},
            503: {
                "description": "no trained models on this server (`librarian train`), or "
                f"{SUGGESTS_AT_ONCE + SUGGESTS_WAITING} calls already running or waiting "
                "(Retry-After says when to try again)"
            },
        },
        summary="Suggest CREs for one text",
    )
    async def suggest(asked: SuggestRequest) -> dict[str, Any]:
        if not asked.text.strip():
            raise HTTPException(422, "text is blank")
        try:
            return await slots.run(lambda: suggested(asked, pipeline, source_context))
        except Full:
            said = "the suggest API is busy: try again in a second"
            raise HTTPException(503, said, headers={"Retry-After": "1"}) from None

    return router


def suggested(
    asked: SuggestRequest,
    pipeline: Callable[[], Pipeline | None],
    source_context: SourceContext | None,
) -> dict[str, Any]:
    """One call's answer, worked out on a thread (blocking: the models and the store)."""
    built = pipeline()
    if built is None:
        raise HTTPException(503, "no trained models on this server: run `librarian train`")
    if asked.top_k is not None:
        built = built.with_top_n(asked.top_k)
    if asked.source is None:
        envelope = one_shot.explain(built, asked.text, asked.title)
    else:
        known = source_context(asked.source, built.policy) if source_context is not None else None
        if known is None:
            raise HTTPException(
                404,
                f"no source {asked.source!r} in this store: name it by its key (`librarian "
                "queue status` lists them) or by the name given with --source",
            )
        key = known.key or asked.source
        cuts = {key: known.cut} if known.cut is not None else {}
        built = built.with_policy(known.policy, cuts)
        envelope = one_shot.suggest(built, asked.text, asked.title, key, known.history)
    return {**dump_envelope(envelope), "cres": named_cres(envelope, built.hub)}


def named_cres(envelope: Envelope, hub: Hub) -> list[dict[str, Any]]:
    """The CREs suggested (or linked), first first: id, name, place in the hub, confidence."""
    links = envelope.links if isinstance(envelope, LinkProposal) else envelope.suggested_links
    out = []
    for link in links or []:
        node = hub.by_id.get(link.cre_id)
        out.append(
            {
                "cre_id": link.cre_id,
                "name": node.name if node else None,
                "path": list(node.hierarchy_path) if node else [],
                "confidence": link.confidence,
            }
        )
    return out


def docs_page(openapi_url: str, assets: str) -> HTMLResponse:
    """Swagger UI over the OpenAPI document; its script and styles from this server."""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>librarian API</title>
<link rel="stylesheet" href="{assets}/swagger-ui.css"></head>
<body><div id="swagger-ui" data-url="{openapi_url}"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="/static/swagger-init.js"></script></body></html>"""
    return HTMLResponse(page)
