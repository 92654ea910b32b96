"""Hostile and careless input at the boundary, one test (or more) each; every one failed
before its fix (docs/reliability.md has the table). The end-to-end halves (the queue table on
SQLite and PostgreSQL, a failed run keeping the previous outputs) are in
tests/integration/test_hardening.py.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.cli import app
from librarian.pipeline import one_shot
from librarian.pipeline.dedup import ChunkRegistry
from librarian.pipeline.explicit import find_references
from librarian.pipeline.ingest import parse_line, section_from_text
from librarian.pipeline.sources import read_batch
from librarian.review.decisions import import_decisions
from librarian.review.sheets import read_decisions, to_csv, to_html
from librarian.schemas.envelopes import dump_envelope
from librarian.schemas.records import RejectCode, Rejection, Section, Skip, SkipCode
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, write
from librarian.store.review import review_items
from librarian.store.tables import RejectedRow
from tests.rfc import assert_rfc_valid
from tests.rows import row
from tests.stubs import small_hub, stub_pipeline

runner = CliRunner()
DEEP = "[" * 10_000 + "]" * 10_000


def line(obj: dict[str, Any], extra: str = "") -> bytes:
    """A queue row as a JSON line, with `extra` spliced in as raw JSON members."""
    text = json.dumps(obj)
    return (text[:-1] + (", " + extra if extra else "") + "}").encode()


# 1. One row stops the run -----------------------------------------------------------

POISON = {
    "nested arrays at the top": DEEP.encode(),
    "nested arrays in an extra column": line(row(), f'"extra": {DEEP}'),
    "nested arrays in span_heading_path": line(row(span_heading_path=DEEP)),
    "nested objects in an extra column": line(row(), '"x": ' + '{"a": ' * 5000 + "1" + "}" * 5000),
    "a 5000-digit integer": line(row(), '"n": ' + "9" * 5000),
    "a lone surrogate in text": line(row(text="a \ud800 b")),
    "a lone surrogate in chunk_id": line(row(chunk_id="\ud800")),
    "a lone surrogate in a key": line(row(), '"\\udc00": 1'),
    # 2. PostgreSQL refuses a NUL: refused here, where the row enters.
    "a NUL in text": line(row(text="a\u0000b")),
}


@pytest.mark.parametrize("raw", POISON.values(), ids=list(POISON))
def test_a_poison_line_is_rejected_with_a_reason(raw: bytes) -> None:
    parsed = parse_line(3, raw)
    assert isinstance(parsed, Rejection), parsed
    assert parsed.line == 3 and parsed.message
    json.dumps(parsed.model_dump(mode="json")).encode("utf-8")  # and can be written out


def test_poison_lines_never_stop_the_rows_around_them(tmp_path: Path) -> None:
    good = [line(row(chunk_id=f"g{i}", locator_path=f"g{i}.md")) for i in range(6)]
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\n".join([good[0], *POISON.values(), *good[1:]]) + b"\n")
    batch = read_batch(path, 0, 1, 1000)
    parsed = [parse_line(n, raw) for n, raw in batch.lines]
    assert sum(isinstance(p, Section) for p in parsed) == 6
    assert sum(isinstance(p, Rejection) for p in parsed) == len(POISON)


# 5. A bare CRE id links in any context -----------------------------------------------


def decided(text: str) -> dict[str, Any]:
    """The envelope the linker writes for `text` (hub ids: small_hub's, 200-001 among them)."""
    result = one_shot.link(stub_pipeline(threshold=0.1), [section_from_text(text)], "r1")
    (envelope,) = result.envelopes
    return dump_envelope(envelope)


@pytest.mark.parametrize(
    "text",
    [
        "Invoice no. 200-001 was paid in full.",
        "The final score was 200-001 after extra time.",
        "See the release 200-001 notes for the change log.",
    ],
)
def test_a_bare_id_without_cre_context_is_no_citation(text: str) -> None:
    assert find_references(text, small_hub().ids) is None
    assert not decided(text)["retrieval"]["retriever"].startswith("explicit")


@pytest.mark.parametrize(
    "text",
    ["This control does not satisfy CRE 200-001.", "Not covered by CRE 200-001 at all."],
)
def test_a_negated_citation_goes_to_review(text: str) -> None:
    envelope = decided(text)
    assert envelope["status"] == "review_required" and envelope["reason_code"] == "ADVERSARIAL_FLAG"


@pytest.mark.parametrize("hidden", ["\u202e", "\u200b", "\u2066"])
def test_hidden_characters_in_a_citation_send_it_to_review(hidden: str) -> None:
    ref = find_references(f"See CRE 200{hidden}-001 for details.", small_hub().ids)
    assert ref is not None and ref.hidden == (f"U+{ord(hidden):04X}",)
    envelope = decided(f"Mapped to CRE 200{hidden}-001.")
    assert envelope["status"] == "review_required" and envelope["reason_code"] == "ADVERSARIAL_FLAG"


# 9. Timestamps without a timezone -----------------------------------------------------


def test_naive_timestamps_are_read_as_utc_and_envelopes_meet_the_rfc() -> None:
    parsed = parse_line(
        1,
        line(row(source_committed_at="2026-11-01T00:00:00", created_at="2026-11-02 10:00:00")),
    )
    assert isinstance(parsed, Section)
    assert parsed.source.committed_at.utcoffset() is not None
    result = one_shot.link(stub_pipeline(threshold=0.1), [parsed], "r1")
    assert_rfc_valid([dump_envelope(e) for e in result.envelopes])


def test_locators_of_queue_rows_carry_the_rfc_id() -> None:
    github = parse_line(1, line(row()))
    rss = parse_line(
        2,
        line(
            row(
                source_type="rss",
                chunk_id="r",
                feed_url="https://f.example/x",
                post_guid="guid-1",
                post_url="https://f.example/p",
            )
        ),
    )
    assert isinstance(github, Section) and github.locator.id == "docs/x.md"
    assert isinstance(rss, Section) and rss.locator.id == "guid-1"


# 12. Which of two chunks sharing a span and text is decided ---------------------------


@pytest.mark.parametrize("batch_size", [1, 2, 3, 50])
def test_the_first_of_two_chunks_with_one_span_and_text_wins_whatever_the_batch(
    tmp_path: Path, batch_size: int
) -> None:
    rows = [
        row(chunk_id="other", locator_path="o.md"),
        row(chunk_id="first"),
        row(chunk_id="second"),
    ]
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"".join(line(r) + b"\n" for r in rows))
    registry, admitted, offset, next_line = ChunkRegistry(), [], 0, 1
    while True:
        batch = read_batch(path, offset, next_line, batch_size)
        admitted += [registry.admit(parse_line(n, raw)) for n, raw in batch.lines]
        offset, next_line = batch.next_offset, batch.next_line
        if batch.eof:
            break
    decided = [p.chunk_id for p in admitted if isinstance(p, Section)]
    assert decided == ["other", "first"]
    dropped = [p for p in admitted if isinstance(p, Skip)]
    assert [(s.chunk_id, s.reason) for s in dropped] == [("second", SkipCode.DUPLICATE_CHUNK)]


# 13. Invisible-only text; inputs that are not UTF-8 files ------------------------------


@pytest.mark.parametrize("text", ["\u200b\u200b\u200b", "\u2060 \ufeff", "\u202e\u202c\n"])
def test_text_of_only_invisible_characters_is_empty(text: str) -> None:
    parsed = parse_line(1, line(row(text=text)))
    assert isinstance(parsed, Rejection) and parsed.reason == RejectCode.EMPTY_TEXT


def run_cli(*args: str, env: dict[str, str] | None = None) -> Any:
    result = runner.invoke(app, list(args), env=env)
    assert "Traceback" not in result.output
    return result


def test_a_utf16_file_is_refused_naming_its_encoding(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(row()) + "\n", encoding="utf-16")
    result = run_cli("run", str(path))
    assert result.exit_code == 2 and "UTF-16" in result.output


def test_a_directory_or_device_is_refused_for_what_it_is(tmp_path: Path) -> None:
    result = run_cli("run", str(tmp_path))
    assert result.exit_code == 2 and "is a directory" in result.output
    result = run_cli("run", "/dev/zero")
    assert result.exit_code == 2 and "not a regular file" in result.output
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run_cli("run", str(fifo))
    assert result.exit_code == 2 and "not a regular file" in result.output


# 6, 10. Usage errors are one line and exit 2, before anything starts ------------------


@pytest.fixture
def queue_file(tmp_path: Path) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_bytes(line(row()) + b"\n")
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--batch-size", "0"], "--batch-size"),
        (["--batch-size", "99999999999999999999"], "--batch-size"),
        (["--top-k", "0"], "--top-k"),
        (["--top-n", "-1"], "--top-n"),
        (["--commit", "--db", "sqlite://"], "in-memory"),
        (["--commit", "--db", "sqlite:///:memory:"], "in-memory"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    queue_file: Path, args: list[str], message: str
) -> None:
    result = run_cli("run", str(queue_file), *args)
    assert result.exit_code == 2 and message in result.output
    assert len(result.output.strip().splitlines()) <= 2  # the error, and a hint


def test_a_bad_database_scheme_never_prints_the_password(queue_file: Path) -> None:
    url = "mysql://admin:hunter2-secret@db.example/x"
    for args, env in [(["--db", url], None), ([], {"LIBRARIAN_DB": url})]:
        result = run_cli("run", str(queue_file), "--commit", *args, env=env)
        assert result.exit_code == 2 and "only sqlite" in result.output
        assert "hunter2" not in result.output and "***" in result.output


def test_out_under_a_file_is_refused_before_the_run(queue_file: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = run_cli("run", str(queue_file), "--out", str(blocker / "out"))
    assert result.exit_code == 2 and "is a file" in result.output


def test_a_cron_that_is_not_one_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("serve", "--cron", "every night")
    assert result.exit_code == 2 and "cron" in result.output.lower()
    assert len(result.output.strip().splitlines()) <= 2


def test_text_that_is_not_utf8_is_a_usage_error() -> None:
    result = run_cli("route", "caf\udce9 au lait")  # argv bytes b"caf\xe9" as Python keeps them
    assert result.exit_code == 2 and "not UTF-8" in result.output


def test_a_bad_row_for_the_queue_table_is_one_line(tmp_path: Path) -> None:
    """Issue 21, item 9: one bad line refused the whole file; now the good rows load, the
    bad one is rejected with its reason, and exit 3 says "partly"."""
    path = tmp_path / "q.jsonl"
    path.write_bytes(line(row()) + b"\n" + DEEP.encode() + b"\n")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    result = run_cli("queue", "load", str(path), "--db", db)
    assert result.exit_code == 3 and "line 2: invalid JSON: nested too deeply" in result.output
    assert "queued 1 rows" in result.output
    engine = make_engine(db)
    with Session(engine) as session:
        kept = session.execute(select(RejectedRow.line, RejectedRow.reason)).all()
    engine.dispose()
    assert kept == [(2, "INVALID_JSON")]


def test_queue_load_converts_knowledge_items_and_status_counts_every_row(
    tmp_path: Path,
) -> None:
    """Issue 21, item 8: 11 of the sample's 29 lines (KnowledgeItems) were stored hollow,
    and `queue status` said 0 waiting."""
    from librarian.paths import packaged_data
    from librarian.store.queue import claim

    db = f"sqlite:///{tmp_path / 'q.db'}"
    result = run_cli(
        "queue", "load", str(packaged_data("samples", "queue_sample.jsonl")), "--db", db
    )
    assert result.exit_code == 0 and "queued 29 rows" in result.output, result.output
    engine = make_engine(db)
    claimed = claim(engine, 100)
    claimed.session.close()
    sections = [parse_line(n, data) for n, data in claimed.lines]
    assert len(sections) == 29 and all(isinstance(s, Section) for s in sections), sections
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO knowledge_queue (chunk_id) VALUES ('hollow')")
    engine.dispose()
    status = run_cli("queue", "status", "--db", db)
    assert "30 rows: 29 rows waiting" in status.output and "1 no label" in status.output


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("span_index", "abc", "span_index holds str"),
        ("chunk_id", "c" * 600, "at most 512"),
        ("text", "a\u0000b", "NUL"),
        ("source_committed_at", "not a date", "not a timestamp"),
    ],
)
def test_queue_load_refuses_what_a_column_cannot_hold_on_either_database(
    tmp_path: Path, column: str, value: Any, said: str
) -> None:
    """Issue 21, item 18: PostgreSQL ended in a 300-line traceback where SQLite kept it."""
    path = tmp_path / "q.jsonl"
    path.write_bytes(line(row()) + b"\n" + line(row(**{column: value})) + b"\n")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    result = run_cli("queue", "load", str(path), "--db", db)
    assert result.exit_code == 3 and said in result.output and "Traceback" not in result.output


def test_a_deeply_nested_hub_is_refused(queue_file: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hubs.jsonl"
    hub.write_text(DEEP + "\n")
    result = run_cli("run", str(queue_file), "--hub", str(hub))
    assert result.exit_code == 2 and "hubs.jsonl:1:" in result.output


# 4, 14, 15. Review sheets --------------------------------------------------------------


@pytest.fixture
def review_db(tmp_path: Path) -> Any:
    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    upgrade(engine)
    long = "Rotate the session token after login. " + "x" * 200_000  # over csv's 128 KiB
    texts = [long, " =1+1", "\n=HYPERLINK(1)", "\uff1dSUM(A1)", "<script>alert(1)</script>"]
    batch = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}", "line": i + 1})
        for i, t in enumerate(texts)
    ]
    result = one_shot.link(stub_pipeline(threshold=0.99), batch, "r1")  # everything to review
    with Session(engine) as session:
        write(session, StoredBatch.linked("r1", result, batch, "t"))
        session.commit()
    return engine


def sheet_rows(text: str) -> list[dict[str, str]]:
    limit = csv.field_size_limit(1 << 24)
    try:
        return list(csv.DictReader(io.StringIO(text)))
    finally:
        csv.field_size_limit(limit)


def open_items(engine: Any) -> list[Any]:
    with Session(engine) as session:
        return review_items(session, "open")


def test_a_sheet_with_text_over_128_kib_round_trips(tmp_path: Path, review_db: Any) -> None:
    rows = sheet_rows(to_csv(open_items(review_db)))
    first = next(r for r in rows if r["chunk_id"] == "c0")
    first["decision"] = "reject"
    path = tmp_path / "sheet.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    read = read_decisions(path, "rita")
    result = import_decisions(review_db, read.incoming, small_hub().ids, str(path))
    assert read.errors == result.errors == [] and result.rejected == 1


def test_no_csv_cell_reads_as_a_formula(review_db: Any) -> None:
    rows = sheet_rows(to_csv(open_items(review_db)))
    for record in rows:
        for cell in record.values():
            assert not re.match(r"[\s\uff1d\uff0b\uff0d\uff20]*[=+\-@]", cell or ""), cell
            assert not (cell or "").lstrip().startswith(("\uff1d", "=")), cell


def test_the_html_export_allows_no_inline_script_but_its_own(review_db: Any) -> None:
    page = to_html(open_items(review_db))
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    policy = csp.group(1)
    assert "unsafe-inline" not in policy and "'sha256-" in policy
    assert "default-src 'none'" in policy
    assert "<script>alert(1)</script>" not in page
    # Issue 48, item 5: each suggested CRE links to its page on opencre.org.
    assert 'href="https://www.opencre.org/cre/' in page


# 11. Trained-model integrity -------------------------------------------------------------


def test_query_passwords_are_redacted_and_a_second_at_sign_is_refused() -> None:
    """Issue 21, item 2: `?password=` was printed as it is; `u:hun@ter2@host` printed
    `u:***@ter2@host` and was read as host `ter2@host`."""
    from librarian.store.db import DatabaseUrlError, make_engine, redacted

    shown = redacted("postgresql://u:secret@h/db?password=p2&sslmode=require&SSLPassword=k")
    assert "secret" not in shown and "p2" not in shown and "=k" not in shown
    assert "sslmode=require" in shown and "password=***" in shown
    ambiguous = "postgresql://u:hun@ter2@host/db"
    assert "hun" not in redacted(ambiguous) and "ter2" not in redacted(ambiguous)
    with pytest.raises(DatabaseUrlError, match="percent-encode") as refused:
        make_engine(ambiguous)
    assert "ter2" not in str(refused.value)
    assert redacted("postgresql://u:hun%40ter2@host/db") == "postgresql://u:***@host/db"


def test_a_database_reference_carries_no_secret_and_resolves_where_the_url_is_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 21, item 1: the URL was a flow parameter, so Prefect stored its password.
    Issue 49, item 6: and no module keeps it: the caller holds it (`known_urls`)."""
    from librarian.store import db
    from librarian.store.db import DatabaseUrlError, known_urls, reference, resolve

    monkeypatch.delenv("LIBRARIAN_DB", raising=False)
    url = "postgresql+psycopg://u:s3cret@h/db?sslpassword=k2"
    ref = reference(url)
    assert "s3cret" not in ref and "k2" not in ref
    held = known_urls(url)
    assert resolve(ref, held) == url  # the caller holds it
    assert not any("s3cret" in repr(v) for v in vars(db).values())  # no module state does
    plain = "sqlite:////tmp/x.db"
    assert reference(plain) == plain and resolve(plain) == plain
    with pytest.raises(DatabaseUrlError, match="LIBRARIAN_DB"):  # a worker, a served run
        resolve(ref)
    monkeypatch.setenv("LIBRARIAN_DB", url)
    assert resolve(ref) == url
    monkeypatch.setenv("LIBRARIAN_DB", "postgresql+psycopg://u:other@h2/db")
    with pytest.raises(DatabaseUrlError):  # a different database's password is never used
        resolve(ref)


def test_binding_beyond_loopback_is_warned_of() -> None:
    """Issue 21, item 1: `server start --host 0.0.0.0` exposed the Prefect UI silently."""
    from librarian.flows.server import exposure

    assert exposure("127.0.0.1") is None and exposure("::1") is None
    warned = exposure("0.0.0.0")
    assert warned is not None and "no authentication" in warned


# Issue 21, items 7, 11 and 13: nothing lost on the way in -------------------------------


def plain_outcomes(path: Path, source: str | None = None) -> dict[int, Any]:
    from librarian.pipeline.sources import PlainFile

    outcomes: dict[int, Any] = {}
    for batch in PlainFile(path, source).batches(100):
        for number, _ in batch.lines:
            record = batch.records[number]
            if isinstance(record, Rejection) and record.reason == RejectCode.MALFORMED_ROW:
                outcomes[number] = record.message
            else:
                outcomes[number] = record
    return outcomes


def test_a_csv_row_with_an_unquoted_comma_is_rejected_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "reqs.csv"
    path.write_text(
        "ID,Text,Title\n"  # capitalised headers are the columns id and text
        "R1,Passwords must be stored with a salted, slow hash.,Storage\n"
        "R2,Use TLS.\n"
        "0,Rotate keys yearly.,Keys\n"
    )
    outcomes = plain_outcomes(path)
    assert "4 cells, the header 3" in outcomes[2] and "3" in outcomes[2]
    assert "2 cells, the header 3" in outcomes[3]
    zero = outcomes[4]
    assert isinstance(zero, Section) and zero.locator.id is not None
    assert zero.locator.id.endswith("#0")  # id 0 is an id, not a missing one


def test_an_unterminated_quote_is_an_error_naming_its_line(tmp_path: Path) -> None:
    from librarian.pipeline.plain import PlainInputError, plain_rows

    path = tmp_path / "reqs.csv"
    path.write_text('id,text\nR1,"Use TLS.\nR2,Rotate keys.\nR3,Log access.\n')
    with pytest.raises(PlainInputError, match="line 2: a double quote opened here is never closed"):
        plain_rows(path)


@pytest.mark.parametrize(("separator", "name"), [(";", "semicolons"), ("\t", "tabs")])
def test_a_table_separated_otherwise_gets_a_hint(tmp_path: Path, separator: str, name: str) -> None:
    from librarian.pipeline.plain import PlainInputError, plain_rows

    path = tmp_path / "reqs.csv"
    path.write_text(f"id{separator}text\nR1{separator}Use TLS.\n")
    with pytest.raises(PlainInputError, match=f"separated by {name}"):
        plain_rows(path)


def test_two_files_of_one_name_are_two_documents(tmp_path: Path) -> None:
    rows = "id,text\nR1,Use TLS for every connection.\n"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "reqs.csv").write_text(rows)
    first, second = (plain_outcomes(tmp_path / f / "reqs.csv")[2] for f in ("a", "b"))
    assert isinstance(first, Section) and isinstance(second, Section)
    assert first.chunk_id != second.chunk_id and first.artifact_id != second.artifact_id
    # ...and two sources for linking as a whole (every plain file was the source `url:`)
    assert first.source_key == "plain:a/reqs.csv" and second.source_key == "plain:b/reqs.csv"


MARKDOWN = """---
title: Our policy
owner: security
---
## Notes!

First note.

## Notes?

Second note.

## 密码

密码必须加盐哈希。

## Example

One.

## Example

Two.

Setext heading
--------------

~~~
## not a heading inside a tilde fence
~~~

````
```
## nor inside a nested fence
```
````
"""


def test_markdown_is_read_as_commonmark_with_unique_unicode_slugs(tmp_path: Path) -> None:
    from librarian.pipeline.shapes.markdown import markdown_blocks

    blocks = list(markdown_blocks(MARKDOWN))
    ids = [b.id for b in blocks]
    assert len(ids) == len(set(ids)) == 6
    assert ids[:2] == ["notes-1", "notes-1-1"] and ids[2] == "密码-1"
    assert ids[3:5] == ["example-1", "example-1-1"]
    assert [b.section_path for b in blocks][:2] == [("Notes!",), ("Notes?",)]  # no H1: siblings
    assert blocks[5].section_path == ("Setext heading",)
    assert "not a heading inside a tilde fence" in str(blocks[5].text)
    assert "nor inside a nested fence" in str(blocks[5].text)
    assert not any("owner: security" in str(b.text) for b in blocks)  # front matter is no text
    path = tmp_path / "policy.md"
    path.write_text(MARKDOWN)
    assert all(isinstance(o, Section) for o in plain_outcomes(path).values())


@pytest.mark.parametrize("name", ["notes.txt", "policy.odt", "queue"])
def test_a_file_of_no_known_shape_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text('{"id": "R1", "text": "Use TLS."}\n')
    result = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert ".csv" in result.output and ".md" in result.output and ".jsonl" in result.output


@pytest.mark.parametrize(
    ("head", "what"),
    [(b"%PDF-1.7\n", "is a PDF document"), (b"PK\x03\x04\x14\x00", "is a zip package")],
)
@pytest.mark.parametrize("name", ["report.jsonl", "report.csv", "report.md"])
def test_a_file_whose_name_misleads_is_refused_by_what_it_is(
    tmp_path: Path, head: bytes, what: str, name: str
) -> None:
    """Issue 47, item 13: a PDF named .jsonl was read as 102 rejected queue lines, exit 0."""
    path = tmp_path / name
    path.write_bytes(head + b"\x00" * 100)
    for extra in ([], ["--source", "Acme"]):
        said = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), *extra])
        assert said.exit_code == 2, said.output
        assert what in " ".join(said.output.split()) and "name it" in said.output
    assert not (tmp_path / "out").exists()


# Issue 21, items 14 and 15: never stuck ---------------------------------------------------


def test_dead_letters_can_be_retried(tmp_path: Path) -> None:
    from librarian.store.queue import MAX_ATTEMPTS, dead_letters, enqueue, pending, record_failure

    db = f"sqlite:///{tmp_path / 'q.db'}"
    engine = make_engine(db)
    upgrade(engine)
    enqueue(engine, [(1, row(chunk_id="a")), (2, row(chunk_id="b"))])
    for queue_id in (1, 2):
        with Session(engine) as session, session.begin():
            for _ in range(MAX_ATTEMPTS):
                record_failure(session, queue_id, "the database refused it")
    assert pending(engine) == 0 and len(dead_letters(engine)) == 2
    assert run_cli("queue", "retry", "--db", db).exit_code == 2  # an id, or --all
    assert run_cli("queue", "retry", "7", "--db", db).exit_code == 2  # not a dead letter
    one = run_cli("queue", "retry", "1", "--db", db)
    assert one.exit_code == 0 and "1 dead letters back" in one.output
    assert pending(engine) == 1
    assert "2 dead letters back" not in run_cli("queue", "retry", "--all", "--db", db).output
    assert pending(engine) == 2 and dead_letters(engine) == []
    engine.dispose()


def test_read_commands_open_a_read_only_database_without_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from librarian.store import db as store_db

    path = tmp_path / "q.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    engine.dispose()
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"  # SQLite refuses every write
    status = run_cli("queue", "status", "--db", read_only)
    assert status.exit_code == 0 and "0 rows waiting" in status.output, status.output
    exported = run_cli("review", "export", "--db", read_only, "--out", str(tmp_path / "x.csv"))
    assert exported.exit_code == 0, exported.output
    with make_engine(f"sqlite:///{path}").begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0004'")
    older = run_cli("queue", "status", "--db", read_only)
    assert older.exit_code == 2 and "queue migrate" in older.output
    with monkeypatch.context() as patched:  # a file this user cannot write: opened read-only
        patched.setattr(
            "librarian.store.db.os.access", lambda where, _: Path(where) != path.resolve()
        )
        assert store_db.read_only(f"sqlite:///{path}").endswith("?mode=ro&uri=true")
    with monkeypatch.context() as patched:  # nor its folder (issue 47, item 16): immutable
        patched.setattr("librarian.store.db.os.access", lambda *_: False)
        assert store_db.read_only(f"sqlite:///{path}").endswith("?immutable=1&uri=true")


@pytest.mark.parametrize("field", ["chunk_id", "artifact_id", "pipeline_run_id"])
def test_an_id_longer_than_the_store_holds_is_rejected_on_entry(field: str) -> None:
    """Issue 21, item 18: PostgreSQL refused it with a traceback; SQLite kept it."""
    outcome = parse_line(1, line(row(**{field: "x" * 600})))
    assert isinstance(outcome, Rejection) and outcome.reason == RejectCode.INVALID_FIELD
    assert field in outcome.message


def test_a_document_name_past_the_store_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "reqs.csv"
    path.write_text("id,text\nR1,Use TLS.\n")
    result = run_cli("run", str(path), "--source", "s" * 585, "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "--source is 585 characters" in result.output


# Issue 21, item 19: one line and exit 2, not a traceback ----------------------------------


def test_paths_that_cannot_be_written_are_one_line(tmp_path: Path, queue_file: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    engine = make_engine(db)
    upgrade(engine)
    engine.dispose()
    cases = [
        (["explain", "x", "--uncalibrated", "--cache-dir", str(afile)], "--cache-dir"),
        (["review", "export", "--db", db, "--out", str(tmp_path)], "is a directory"),
        (["review", "export", "--db", db, "--out", str(afile / "x.csv")], "is a file"),
        (["schema", "export", str(afile)], "not a directory"),
        (["quantize", "--out", str(afile)], "not a directory"),
        (
            ["run", str(queue_file), "--uncalibrated", "--out", "/proc/librarian-out"],
            "cannot write",
        ),
        (["queue", "status", "--db", "postgresql://u@[::1/db"], "not a database URL"),
    ]
    for args, said in cases:
        result = run_cli(*args)
        assert result.exit_code == 2 and said in result.output, (args, result.output)
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_explain_with_stdin_closed_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from librarian.cli.inspect_text import _texts
    from librarian.errors import UsageError

    monkeypatch.setattr(sys, "stdin", None)  # `explain - <&-`: Python has no stdin at all
    with pytest.raises(UsageError, match="stdin is closed"):
        _texts("-")


def test_a_locked_database_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIBRARIAN_SQLITE_TIMEOUT_S", "0.2")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    engine = make_engine(db)
    upgrade(engine)
    queue = tmp_path / "q.jsonl"
    queue.write_bytes(line(row()) + b"\n")
    with engine.connect() as holder:
        holder.exec_driver_sql("BEGIN IMMEDIATE")
        loaded = run_cli("queue", "load", str(queue), "--db", db)
        holder.exec_driver_sql("ROLLBACK")
    engine.dispose()
    assert loaded.exit_code == 1 and "locked by another writer" in loaded.output, loaded.output
    assert "Traceback" not in loaded.output


def test_a_hand_off_never_leaves_its_process_with_its_secrets_or_models() -> None:
    """Issue 49, item 6: the command hands the flow its models and the URLs it holds; Prefect
    pickles the flow's context with each task it sends to a Dask worker. Nothing of the
    hand-off goes with it (a model holds open files, a URL its password)."""
    import pickle

    from librarian.job import HandOff
    from tests.stubs import stub_pipeline

    url = "postgresql+psycopg://u:s3cret@h/db"
    handed = HandOff(pipeline=stub_pipeline(), urls={"postgresql+psycopg://u:***@h/db": url})
    sent = pickle.dumps(handed)
    arrived = pickle.loads(sent)
    assert b"s3cret" not in sent and arrived.urls == {} and arrived.pipeline is None
