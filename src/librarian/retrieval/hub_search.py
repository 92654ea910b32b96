"""Finding a CRE by meaning and by words together: what a reviewer types in the
workbench's search, and `librarian hub search`.

Words alone missed "brute force" (the hub says "credential stuffing" and "automated
threats") and "DoS" ("Denial Of Service protection"); meaning alone can rank a CRE whose
name holds every word below a vaguer one. A hit's score is its best cosine (the query
against the CRE's name, its path, its name with its children's) plus a bonus for the
query's words found in the id, name or path; an exact id comes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from librarian.catalogue.hub import Hub, path_text
from librarian.models.load import load_embedder
from librarian.models.seams import Embedder
from librarian.retrieval.index import HubIndex, build_index

# How much the words found add to a hit's cosine (all of them found: the whole bonus).
WORD_BONUS = 0.25
_WORD = re.compile(r"\w+")
# Abbreviations a reviewer types and the hub spells out: searched as both.
SPELLED_OUT = {
    "dos": "denial of service",
    "ddos": "distributed denial of service",
    "xss": "cross site scripting",
    "csrf": "cross site request forgery",
    "ssrf": "server side request forgery",
    "sqli": "sql injection",
    "mfa": "multi factor authentication",
    "2fa": "multi factor authentication",
    "rbac": "role based access control",
    "iam": "identity and access management",
    "pii": "personal data",
    "tls": "transport layer security",
    "jwt": "json web token",
    "sso": "single sign on",
    "rce": "remote code execution",
    "xxe": "xml external entity",
    "idor": "insecure direct object reference",
}


def _spelled_in(word: str, haystack: str) -> bool:
    return word in SPELLED_OUT and SPELLED_OUT[word] in haystack


@dataclass(frozen=True)
class HubHit:
    cre_id: str
    name: str
    path: str
    score: float  # cosine plus the word bonus; higher is better
    meaning: float  # the cosine part alone
    words: float  # the share of the query's words found


@dataclass(frozen=True)
class HubSearch:
    """Construction only: the hub, an embedder and the hub's vectors from that embedder."""

    hub: Hub
    embedder: Embedder | None
    index: HubIndex | None

    def search(self, query: str, limit: int = 20) -> list[HubHit]:
        words = [w.lower() for w in _WORD.findall(query)]
        if not words:
            return []
        spelled = " ".join(SPELLED_OUT[w] for w in words if w in SPELLED_OUT)
        meaning = self._meaning(f"{query} {spelled}".strip())
        hits = []
        for i, node in enumerate(self.hub.nodes):
            haystack = f"{node.cre_id} {node.name} {path_text(node)}".lower()
            found = sum(w in haystack or _spelled_in(w, haystack) for w in words) / len(words)
            exact = 1.0 if query.strip() == node.cre_id else 0.0
            cosine = float(meaning[i]) if meaning is not None else 0.0
            score = cosine + WORD_BONUS * found + exact
            if meaning is None and found < 1.0 and not exact:
                continue  # words alone (no model): every word must be there
            hits.append(HubHit(node.cre_id, node.name, path_text(node), score, cosine, found))
        hits.sort(key=lambda h: (-h.score, h.name))
        return hits[:limit]

    def _meaning(self, query: str) -> np.ndarray | None:
        if self.embedder is None or self.index is None:
            return None
        vector = self.embedder.encode([query])[0]
        stacked = np.stack(
            [
                self.index.name_vectors @ vector,
                self.index.path_vectors @ vector,
                self.index.children_vectors @ vector,
            ]
        )
        return np.asarray(stacked.max(axis=0))


def open_hub_search(hub: Hub, embedder_dir: Path | None, cache_dir: Path | None) -> HubSearch:
    """Search of `hub` with the embedder in `embedder_dir` (None = the packaged MiniLM); the
    hub's vectors come from `cache_dir` after the first use. Construction only."""
    embedder = load_embedder(embedder_dir)
    return HubSearch(hub, embedder, build_index(hub, embedder, cache_dir))
