"""The workbench's addresses, by name: pages, forms and the QA pages link with `url`."""

from __future__ import annotations

from urllib.parse import quote

PATHS = {
    "queue": "/",
    "item": "/item/{}",
    "decide": "/item/{}",
    "undo": "/undo",
    "bulk": "/bulk",
    "signin": "/signin",
    "signout": "/signout",
    "search": "/api/search",
    "qa": "/qa",
    "rule": "/qa/{}",
    "static": "/static/{}",
}


def url(name: str, *parts: str) -> str:
    return PATHS[name].format(*(quote(p, safe="") for p in parts))
