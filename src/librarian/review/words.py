"""What the workbench's pages say about a suggestion, in a reviewer's words: the words a
section and a CRE share, the negations behind a flag, why the order is the linker's, an
update's word-level diff, and the hub search by words."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from librarian.catalogue.hub import Hub
from librarian.pipeline.negation import negating_words
from librarian.retrieval.hub_search import HubSearch
from librarian.retrieval.why import EXEMPLAR_SAID
from librarian.store.review import (
    OpenItem,
    Suggestion,
)

_WORDS = re.compile(r"[^\W\d_]{3,}")
_COMMON = frozenset(
    {
        "the",
        "and",
        "for",
        "are",
        "with",
        "that",
        "this",
        "from",
        "must",
        "should",
        "shall",
        "not",
        "all",
        "any",
        "can",
        "its",
        "use",
        "used",
        "into",
        "their",
        "been",
        "have",
        "has",
        "was",
        "were",
        "will",
        "such",
        "other",
        "than",
        "only",
        "each",
        "when",
        "where",
        "which",
    }
)


EXEMPLAR = re.compile(rf"{EXEMPLAR_SAID} [0-9.]+: (\S+ .+ \((?:prose|title)\))$")


def flag_words(item: OpenItem) -> list[str]:
    """For a negation flag, the negations that raised it (the section's, or the first
    CRE's), and what each governs."""
    if "NEGATION_MISMATCH" not in item.flags or not item.suggestions:
        return []
    name = item.suggestions[0].name
    return negating_words(item.text, name) or negating_words(name, item.text)


def shared_words(text: str, suggestion: Suggestion, hub: Hub) -> list[str]:
    """The words the section and the CRE (its name and path) both use, as a reviewer
    reads them: lower case, common words left out, in the CRE's order."""
    node = hub.by_id.get(suggestion.cre_id)
    cre_text = " ".join([suggestion.name, *(node.hierarchy_path if node else ())])
    section = {w.lower() for w in _WORDS.findall(text)} - _COMMON
    seen: dict[str, None] = {}
    for word in _WORDS.findall(cre_text):
        if word.lower() in section:
            seen.setdefault(word.lower(), None)
    return list(seen)


def order_note(suggestions: tuple[Suggestion, ...]) -> str | None:
    """Why #1 is first when a later suggestion shows a higher confidence: the order is the
    linker's (the CRE it would link), the confidence each CRE's own."""
    if len(suggestions) < 2:
        return None
    best = max(range(len(suggestions)), key=lambda i: suggestions[i].confidence)
    if suggestions[best].confidence <= suggestions[0].confidence:
        return None
    return (
        "The suggestions are in the linker's order, the CRE it would link first: by "
        "retrieval score and, with the standard linked as a whole, this section's choice "
        "among its standard's (a CRE another section fits better is left to that one). Each "
        f"confidence is that CRE's own: #{best + 1} has the higher one "
        f"({suggestions[best].confidence:.3f} against {suggestions[0].confidence:.3f}). "
        f"`a` accepts #1; {best + 1} takes #{best + 1}."
    )


def name_of(hub: Hub) -> Callable[[str], str]:
    def name(cre_id: str) -> str:
        node = hub.by_id.get(cre_id)
        return node.name if node else ""

    return name


def safe_link(link: str) -> bool:
    return link.startswith(("https://", "http://"))


def search_hub(hub: Hub, query: str, limit: int = 20) -> list[dict[str, str]]:
    """Hub nodes whose id, name or path hold every word of `query` (no model loaded)."""
    hits = HubSearch(hub, None, None).search(query, limit)
    return [{"cre_id": h.cre_id, "name": h.name, "path": h.path} for h in hits]


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Word-level diff of an update: (kind, words), kind eq | del | ins."""
    old, new = before.split(), after.split()
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op in ("replace", "delete"):
            out.append(("del", " ".join(old[i1:i2])))
        if op in ("replace", "insert"):
            out.append(("ins", " ".join(new[j1:j2])))
        if op == "equal":
            out.append(("eq", " ".join(old[i1:i2])))
    return out
