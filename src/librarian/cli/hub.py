"""`librarian hub`: look a CRE up, by meaning and words (`search`) or by id (`show`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer

from librarian.cli.common import home_of, hub_finder, out, unicode_text
from librarian.cli.options import HomeOpt, HubsOpt, JsonOpt, LimitOpt
from librarian.errors import UsageError
from librarian.paths import DEFAULT_HUB

app = typer.Typer(no_args_is_help=True, help="The hub catalogue: find a CRE, show one.")


@app.command("search")
def hub_search(
    text: Annotated[
        str,
        typer.Argument(
            help="what the CRE is about, in words or an id; '-': a query a line on stdin"
        ),
    ],
    limit: LimitOpt = 10,
    as_json: JsonOpt = False,
    hub: HubsOpt = None,
    home: HomeOpt = None,
) -> None:
    """CREs by meaning and by words together ("DoS" finds "Denial Of Service protection"),
    with the embedder the trained models use (else the packaged MiniLM). TEXT '-' answers
    each line of stdin in turn, the models loaded once (--json: a JSON line each)."""
    from librarian.catalogue.teams import load_hubs

    queries = _queries(text)
    first, *rest = hub or [DEFAULT_HUB]
    finder = hub_finder(load_hubs(first, rest), home_of(home))
    for query in queries:
        hits = finder.search(query, limit)
        if as_json:
            _json_hits(hits, query if text == "-" else None)
        else:
            _shown_hits(hits, query if text == "-" else None)


def _queries(text: str) -> Iterator[str]:
    """TEXT as one query, or stdin's lines ('-'), blank lines skipped; checked first."""
    if text != "-":
        query = unicode_text(text, "TEXT").strip()
        if not query:
            raise UsageError("TEXT is empty: say what the CRE is about")
        return iter([query])
    return (q for line in sys.stdin if (q := unicode_text(line, "a line of stdin").strip()))


def _json_hits(hits: list[Any], query: str | None) -> None:
    rows = [
        {
            "cre_id": h.cre_id,
            "name": h.name,
            "path": h.path,
            "score": round(h.score, 4),
            "meaning": round(h.meaning, 4),
            "words": round(h.words, 4),
        }
        for h in hits
    ]
    if query is None:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
    else:
        sys.stdout.write(json.dumps({"query": query, "hits": rows}) + "\n")
    sys.stdout.flush()


def _shown_hits(hits: list[Any], query: str | None) -> None:
    if query is not None:
        out.print(f"== {query}", markup=False)
    if not hits:
        out.print("no CRE matches", markup=False)
        return
    # The order's score is no probability: its parts are, each on [0, 1].
    out.print(
        "CRE      meaning  words  name (path); meaning: the cosine of TEXT to the CRE's "
        "name and path, 0-1; words: the share of TEXT's words it holds, 0-1",
        markup=False,
    )
    for h in hits:
        line = f"{h.cre_id}  {h.meaning:7.2f}  {h.words:5.0%}  {h.name}  ({h.path})"
        out.print(line, markup=False)


@app.command("show")
def hub_show(
    cre_id: Annotated[str, typer.Argument(help="a CRE id, e.g. 616-305")],
    as_json: JsonOpt = False,
    hub: HubsOpt = None,
) -> None:
    """One CRE: its name, where it sits, its children and related CREs, by name."""
    from librarian.catalogue.hub import cre_url
    from librarian.catalogue.teams import load_hubs

    first, *rest = hub or [DEFAULT_HUB]
    catalogue = load_hubs(first, rest)
    node = catalogue.by_id.get(cre_id.strip())
    if node is None:
        raise UsageError(f"no CRE {cre_id!r} in the hub (find one: librarian hub search TEXT)")

    def named(ids: Any) -> list[dict[str, str]]:
        return [{"cre_id": i, "name": catalogue.by_id[i].name} for i in ids if i in catalogue.by_id]

    around = {
        "parent": named([node.parent_id] if node.parent_id else []),
        "children": named(n.cre_id for n in catalogue.nodes if n.parent_id == node.cre_id),
        "related": named(node.related_ids),
    }
    url = cre_url(node.cre_id)
    if as_json:
        shown: dict[str, Any] = {"cre_id": node.cre_id, "name": node.name}
        shown["path"] = list(node.hierarchy_path)
        shown |= {**around, "collection": catalogue.collection_of.get(node.cre_id), "url": url}
        sys.stdout.write(json.dumps(shown, indent=1) + "\n")
        return
    out.print(f"{node.cre_id}  {node.name}", markup=False)
    out.print("  path: " + " > ".join(node.hierarchy_path), markup=False)
    for part, items in around.items():
        for item in items:
            out.print(f"  {part}: {item['cre_id']}  {item['name']}", markup=False)
    out.print(f"  {url}", markup=False)
