"""Input rows for tests: a queue row, a KnowledgeItem, and hostile values and lines
drawn by hypothesis."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SHA = "0123456789abcdef0123"


def row(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "chunk_id": "c1",
        "artifact_id": "a1",
        "source_type": "github",
        "source_repo": "OWASP/ASVS",
        "source_commit_sha": SHA,
        "source_committed_at": "2026-11-01T00:00:00Z",
        "locator_path": "docs/x.md",
        "span_index": 0,
        "span_total": 1,
        "span_heading_path": json.dumps(["Guide", "Sessions"]),
        "text": "Rotate the session token after login.",
        "llm_label": "KNOWLEDGE",
        "created_at": "2026-11-02T00:00:00Z",
    }
    base.update(over)
    return base


def item(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schema_version": "0.2.0",
        "chunk_id": "k1",
        "artifact_id": "ak1",
        "filtered_at": "2026-11-03T00:00:00Z",
        "status": "accepted",
        "source": {"type": "github", "repo": "OWASP/x", "commit_sha": SHA[:7]},
        "locator": {"kind": "repo_path", "path": "a.md", "title": "Title"},
        "content": {"text": "Encrypt data at rest."},
        "filter": {"security_summary": "crypto"},
    }
    base.update(over)
    return base


def queue_line(chunk: str, path: str, text: str) -> str:
    """One line of the knowledge queue's JSONL."""
    return json.dumps(
        {
            "chunk_id": chunk,
            "artifact_id": "a",
            "source_type": "github",
            "source_repo": "o/r",
            "source_commit_sha": "abcdef0",
            "source_committed_at": "2026-11-30T00:00:00Z",
            "locator_kind": "repo_path",
            "locator_path": path,
            "span_heading_path": "[]",
            "text": text,
            "llm_label": "KNOWLEDGE",
        }
    )


# Text as hostile input carries it: any code point, surrogates and controls included.
HOSTILE = st.text(
    alphabet=st.one_of(
        st.characters(codec=None),  # every code point, lone surrogates included
        st.sampled_from('\x00\u200b\u202e\u2066\ufeff\x1b\r\n\t[]{}"\\'),
    ),
    max_size=60,
)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    HOSTILE,
    st.integers(min_value=-(10**60), max_value=10**60),
)


VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(HOSTILE, inner, max_size=4)
    ),
    max_leaves=20,
)


FIELDS = sorted(set(row()) | {"extra_column"})


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@st.composite
def hostile_lines(draw: st.DrawFn) -> bytes:
    """One line: raw bytes, a JSON value, or a queue row / KnowledgeItem with one field
    replaced by something hostile (a value, deep nesting, a huge integer)."""
    kind = draw(st.sampled_from(["bytes", "value", "row", "row", "item", "deep", "huge"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200)).replace(b"\n", b" ")
    if kind == "value":
        return json.dumps(draw(VALUES)).encode("utf-8", "surrogatepass")
    if kind == "deep":
        field = draw(st.sampled_from(FIELDS))
        text = json.dumps(row())[:-1] + f', "{field}": {nested(draw(st.integers(30, 20_000)))}}}'
        return text.encode()
    if kind == "huge":
        digits = "9" * draw(st.integers(4000, 6000))
        return (json.dumps(row())[:-1] + f', "n": {digits}}}').encode()
    base = row() if kind == "row" else item()
    base[draw(st.sampled_from(sorted(base)))] = draw(VALUES)
    return json.dumps(base).encode("utf-8", "surrogatepass")
