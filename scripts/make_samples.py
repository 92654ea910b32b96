"""Writes the packaged sample queues (src/librarian/data/samples/) from the packaged
OpenCRE data (deterministic).

queue_sample.jsonl          good rows of both shapes, incl. explicit citations and a 50k-char text
queue_with_bad_rows.jsonl   the same mixed with every class of bad row, plus a BOM, CRLF and blanks
queue_with_bad_rows.expected.json   line -> expected outcome and reason, for the integration test

Run: python scripts/make_samples.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OPENCRE = ROOT / "src" / "librarian" / "data" / "opencre"
SAMPLES = ROOT / "src" / "librarian" / "data" / "samples"
SHA = "3f2a9c1d5e7b8a6f4c2d1e0b9a8f7e6d5c4b3a29"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def queue_row(n: int, text: str, headings: list[str], **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": 1000 + n,
        "content_hash": f"h{n:04d}",
        "chunk_id": f"chunk-q{n:03d}",
        "artifact_id": f"artifact-{n // 3:03d}",
        "pipeline_run_id": "filter-run-2026-11-29",
        "schema_version": "0.3.0",
        "source_type": "github",
        "source_repo": "OWASP/CheatSheetSeries",
        "source_commit_sha": SHA,
        "source_committed_at": "2026-11-28T10:15:00Z",
        "feed_url": None,
        "post_guid": None,
        "locator_kind": "repo_path",
        "locator_path": f"cheatsheets/Sheet_{n:03d}.md",
        "span_index": n % 4,
        "span_total": 4,
        "span_heading_path": json.dumps(headings),
        "text": text,
        "llm_label": "KNOWLEDGE" if n % 5 else "UNCERTAIN",
        "confidence": 0.9,
        "llm_reasoning": "describes a security control",
        "created_at": "2026-11-29T02:00:00Z",
        "consumed_at": None,
        "extra_column_from_upstream": "tolerated",
    }
    row.update(over)
    return row


def rss_row(n: int, text: str, **over: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "source_type": "rss",
        "source_repo": None,
        "source_commit_sha": None,
        "source_committed_at": None,
        "feed_url": "https://owasp.org/feed.xml",
        "post_guid": f"https://owasp.org/blog/2026/11/post-{n}",
        "locator_kind": "feed_item",
        "locator_path": None,
    }
    return queue_row(n, text, ["Security blog"], **{**fields, **over})


def knowledge_item(n: int, title: str, text: str, **over: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "schema_version": "0.2.0",
        "chunk_id": f"chunk-k{n:03d}",
        "artifact_id": f"artifact-k{n:03d}",
        "event_id": f"evt-{n:04d}",
        "pipeline_run_id": "filter-run-2026-11-29",
        "filtered_at": "2026-11-29T02:05:00Z",
        "status": "accepted",
        "source": {
            "type": "github",
            "repo": "OWASP/www-project-ai-security",
            "url": "https://github.com/OWASP/www-project-ai-security",
            "commit_sha": SHA[:12],
            "commit_message": "Update controls",
            "committed_at": "2026-11-27T18:00:00Z",
            "author_login": "maintainer",
        },
        "locator": {
            "kind": "repo_path",
            "id": f"ctl-{n}",
            "path": f"content/controls/{n:03d}.md",
            "url": None,
            "title": title,
        },
        "content": {"text": text, "title_hint": title, "keywords": [], "language": "en"},
        "filter": {
            "stages": [{"name": "noise", "passed": True}],
            "is_security_knowledge": True,
            "security_summary": f"Control: {title}",
            "confidence": 0.88,
        },
    }
    item.update(over)
    return item


def good_rows() -> list[dict[str, Any]]:
    links = [
        link
        for link in _jsonl(OPENCRE / "links.jsonl")
        if link["link_type"] == "LinkedTo" and len(link["text"]) > 60
    ]
    controls = _jsonl(OPENCRE / "unlinked_controls.jsonl")
    rng = random.Random(7)
    picked_links = rng.sample(links, 14)
    picked_controls = rng.sample([c for c in controls if len(c["text"]) < 4000], 10)
    longest = max(controls, key=lambda c: len(c["text"]))
    rows: list[dict[str, Any]] = []
    for n, link in enumerate(picked_links[:10]):
        rows.append(queue_row(n, link["text"], [link["standard_name"], link["section_name"]]))
    for n, link in enumerate(picked_links[10:], start=10):
        rows.append(rss_row(n, link["text"]))
    for n, ctl in enumerate(picked_controls):
        rows.append(knowledge_item(n, ctl["title"], ctl["text"]))
    rows.append(knowledge_item(90, longest["title"], longest["text"]))
    rows.append(
        queue_row(40, "Session tokens must be rotated after login, see CRE 002-630.", ["Sessions"])
    )
    rows.append(queue_row(41, "This requirement maps to CRE:999-999 in OpenCRE.", ["Mapping"]))
    rows.append(queue_row(42, "Covered by CRE 002-630 and CRE 760-764 together.", ["Mapping"]))
    rows.append(
        queue_row(
            43,
            "Call the help desk at 555-123-4567 before 2024-05-06 and install v1.616-305.",
            ["Support"],
        )
    )
    return rows


def main() -> None:
    SAMPLES.mkdir(parents=True, exist_ok=True)
    good = good_rows()
    with (SAMPLES / "queue_sample.jsonl").open("w", encoding="utf-8", newline="\n") as handle:
        for row in good:
            handle.write(json.dumps(row) + "\n")

    expected: dict[str, dict[str, str | None]] = {}
    lines: list[bytes] = []

    def add(raw: bytes | str, outcome: str, reason: str | None = None) -> None:
        lines.append(raw if isinstance(raw, bytes) else raw.encode("utf-8"))
        if outcome != "blank":
            expected[str(len(lines))] = {"outcome": outcome, "reason": reason}

    explicit = {
        "chunk-q040": ("linked", "LinkedTo"),
        "chunk-q041": ("review", "ADVERSARIAL_FLAG"),
        "chunk-q042": ("review", "ADVERSARIAL_FLAG"),
    }
    for row in good:
        outcome, reason = explicit.get(row["chunk_id"], ("decided", None))
        add(json.dumps(row), outcome, reason)
        if row["chunk_id"] == "chunk-q003":
            add("", "blank")
            add("   ", "blank")
    base = good[0]
    add('{"chunk_id": "broken", "text": ', "rejected", "INVALID_JSON")
    add(json.dumps(["not", "an", "object"]), "rejected", "NOT_AN_OBJECT")
    add(json.dumps({"hello": "world"}), "rejected", "UNKNOWN_SHAPE")
    add(
        json.dumps({k: v for k, v in queue_row(60, "x", []).items() if k != "artifact_id"}),
        "rejected",
        "MISSING_FIELD",
    )
    add(
        json.dumps(queue_row(61, "Rotate keys yearly.", [], span_index="first")),
        "rejected",
        "INVALID_FIELD",
    )
    add(json.dumps(queue_row(62, "", [])), "rejected", "EMPTY_TEXT")
    add(json.dumps(queue_row(63, " \t\n ", [])), "rejected", "EMPTY_TEXT")
    add(
        json.dumps(queue_row(64, "Validate input.", [], source_commit_sha=None)),
        "rejected",
        "MISSING_PROVENANCE",
    )
    add(json.dumps(rss_row(65, "Patch monthly.", post_guid=None)), "rejected", "MISSING_PROVENANCE")
    add(
        json.dumps(queue_row(66, "Use TLS.", [], span_heading_path="not json")),
        "rejected",
        "INVALID_FIELD",
    )
    add(
        json.dumps(queue_row(67, "Marketing newsletter.", [], llm_label="NOISE")),
        "skipped",
        "LABEL_NOT_OURS",
    )
    add(
        json.dumps(knowledge_item(68, "Deferred", "Later.", status="deferred")),
        "skipped",
        "STATUS_NOT_ACCEPTED",
    )
    add(
        json.dumps(knowledge_item(69, "No text", "x", content={"text": ""})),
        "rejected",
        "EMPTY_TEXT",
    )
    add(
        json.dumps(
            knowledge_item(
                70, "Bad sha", "Encrypt backups.", source={"type": "github", "repo": "OWASP/x"}
            )
        ),
        "rejected",
        "MISSING_PROVENANCE",
    )
    add(json.dumps(base), "skipped", "DUPLICATE_CHUNK")
    add(
        json.dumps({**base, "text": base["text"] + " (edited)"}),
        "rejected",
        "DUPLICATE_CHUNK_CONFLICT",
    )
    add(
        json.dumps(queue_row(71, "Caf\u00e9 policy", []), ensure_ascii=False)
        .encode()
        .replace(b"Caf\xc3\xa9", b"Caf\xe9"),
        "rejected",
        "INVALID_ENCODING",
    )
    # Poison rows (issue 13): each is refused where it enters, never failing the run.
    deep = "[" * 10_000 + "]" * 10_000
    add(deep, "rejected", "INVALID_JSON")
    add(
        json.dumps(queue_row(72, "Nested.", []))[:-1] + f', "extra": {deep}}}',
        "rejected",
        "INVALID_JSON",
    )
    add(
        json.dumps(queue_row(73, "Nested.", [], span_heading_path=deep)),
        "rejected",
        "INVALID_FIELD",
    )
    add(
        json.dumps(queue_row(74, "Huge.", []))[:-1] + ', "n": ' + "9" * 5000 + "}",
        "rejected",
        "INVALID_JSON",
    )
    add(json.dumps(queue_row(75, "Lone \ud800 surrogate.", [])), "rejected", "INVALID_ENCODING")
    add(
        json.dumps(queue_row(76, "Lone surrogate id.", [], chunk_id="\udc00")),
        "rejected",
        "INVALID_ENCODING",
    )
    add(json.dumps(queue_row(77, "A NUL \u0000 inside.", [])), "rejected", "INVALID_ENCODING")
    add(json.dumps(queue_row(78, "\u200b\u2060\ufeff", [])), "rejected", "EMPTY_TEXT")
    add("", "blank")
    # BOM on the first line, CRLF line ends throughout: both tolerated.
    body = b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n"
    (SAMPLES / "queue_with_bad_rows.jsonl").write_bytes(body)
    (SAMPLES / "queue_with_bad_rows.expected.json").write_text(
        json.dumps({"lines_total": len(lines), "by_line": expected}, indent=1) + "\n"
    )
    print(f"wrote {len(good)} good rows; {len(lines)} lines in the mixed file")


if __name__ == "__main__":
    main()
