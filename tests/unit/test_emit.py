from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from librarian.pipeline import one_shot
from librarian.pipeline.accounting import MAX_SUMMARY_SOURCES, AccountingError, check_accounting
from librarian.pipeline.ingest import section_from_text
from librarian.pipeline.sinks import MAX_SUMMARY_ROWS, OUTPUT_FILES, FileSink, read_jsonl
from librarian.schemas.envelopes import Envelope
from librarian.schemas.records import Finished, RawBatch, RejectCode, Rejection, RunSummary
from tests.stubs import stub_pipeline


def envelopes() -> list[Envelope]:
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}"})
        for i, t in enumerate(["see CRE 200-001", "rotate session token"])
    ]
    return one_shot.link(stub_pipeline(), sections, "r", datetime(2026, 1, 1, tzinfo=UTC)).envelopes


def summary(**counts: int) -> RunSummary:
    return RunSummary(run_id="r", input="i", out_dir="o", started_at="t", **counts)


def test_outputs_appear_only_on_commit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    writer = FileSink(out)
    writer.write_batch(
        envelopes(), [Rejection(line=3, reason=RejectCode.INVALID_JSON, message="m")]
    )
    assert not out.exists()  # everything so far is in the staging directory
    writer.commit(summary(read=3, lines_total=3, linked=1, review=1, rejected=1))
    assert read_jsonl(out / "proposals.jsonl")[0]["chunk_id"] == "c0"
    assert read_jsonl(out / "reviews.jsonl")[0]["chunk_id"] == "c1"
    assert read_jsonl(out / "rejected.jsonl")[0]["reason"] == "INVALID_JSON"
    assert (out / "summary.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left behind


def test_a_crash_leaves_no_whole_looking_output(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), FileSink(tmp_path / "out") as writer:
        writer.write_batch(envelopes())
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def previous_run(out: Path) -> None:
    out.mkdir()
    (out / "summary.json").write_text('{"run": "before"}')
    (out / "proposals.jsonl").write_text("old\n")


def test_a_failed_run_leaves_the_previous_outputs_as_they_were(tmp_path: Path) -> None:
    out = tmp_path / "out"
    previous_run(out)
    with pytest.raises(RuntimeError), FileSink(out) as writer:
        writer.write_batch(envelopes())
        raise RuntimeError("the run failed half-way")
    assert (out / "summary.json").read_text() == '{"run": "before"}'
    assert (out / "proposals.jsonl").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_complete_run_replaces_the_previous_one_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    previous_run(out)
    (out / "proposals.jsonl.part").write_text("left by an older version's failed run")
    writer = FileSink(out)
    writer.write_batch(envelopes())
    writer.commit(summary())
    assert "proposals.jsonl.part" not in {p.name for p in out.iterdir()}
    assert read_jsonl(out / "proposals.jsonl")[0]["chunk_id"] == "c0"


def test_links_planted_in_the_output_are_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    for name in (*OUTPUT_FILES, "summary.json"):
        (out / f"{name}.part").symlink_to(victim)
        (out / name).symlink_to(victim)
    writer = FileSink(out)
    writer.write_batch(envelopes())
    writer.commit(summary())
    assert victim.read_text() == "keep me"
    assert not (out / "proposals.jsonl").is_symlink()
    # --out itself a link to somewhere else: the link is replaced, its target untouched.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "summary.json").write_text("theirs")
    link = tmp_path / "link"
    link.symlink_to(elsewhere, target_is_directory=True)
    writer = FileSink(link)
    writer.commit(summary())
    assert (elsewhere / "summary.json").read_text() == "theirs"
    assert not link.is_symlink() and (link / "summary.json").is_file()


def test_failed_batch_write_rolls_back_so_a_retry_does_not_double(tmp_path: Path) -> None:
    out = tmp_path / "out"
    writer = FileSink(out)
    writer.write_batch(envelopes())

    class Exploding(Rejection):
        def model_dump(self, **kwargs):  # type: ignore[no-untyped-def]
            raise OSError("disk full")

    batch = envelopes()
    bad = Exploding(line=9, reason=RejectCode.INVALID_JSON, message="m")
    with pytest.raises(OSError):
        writer.write_batch(batch, [bad])
    writer.write_batch(batch)  # the retry
    writer.commit(summary())
    assert len(read_jsonl(out / "proposals.jsonl")) == 2
    assert len(read_jsonl(out / "reviews.jsonl")) == 2


def test_accounting_must_hold() -> None:
    check_accounting(
        summary(read=4, lines_total=5, blank_lines=1, linked=1, review=1, rejected=1, skipped=1)
    )
    with pytest.raises(AccountingError, match="read 4 lines but accounted for 3"):
        check_accounting(summary(read=4, lines_total=4, linked=1, review=1, rejected=1))
    with pytest.raises(AccountingError, match="blank"):
        check_accounting(summary(read=1, lines_total=3, blank_lines=1, linked=1))


def test_summary_md_says_what_happened_to_each_row(tmp_path: Path) -> None:
    """Issue 22, item 10: the guide promised summary.md; no run wrote it."""
    out = tmp_path / "out"
    writer = FileSink(out)
    batch = envelopes()
    writer.write_batch(
        batch, [Rejection(line=3, reason=RejectCode.INVALID_JSON, message="line 3: bad | row")]
    )
    writer.commit(summary(read=3, lines_total=3, linked=1, review=1, rejected=1))
    text = (out / "summary.md").read_text()
    assert text.startswith("# librarian run r ")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "outcome" not in line]
    rows = rows[-3:]
    assert "| linked | LinkedTo | 200-001 " in rows[0]
    assert "| review | BELOW_THRESHOLD" in rows[1] or "| review |" in rows[1]
    assert rows[2].startswith("| line 3 | rejected | INVALID_JSON: line 3: bad \\| row |")


def test_summary_md_is_the_same_size_for_any_input(tmp_path: Path) -> None:
    """Issue 49, item 8: 3,000 rows of one-row sources made a 3,047-line summary.md. The
    first rows and the largest sources are listed, then how many more there are."""
    rows = 3 * MAX_SUMMARY_ROWS
    writer = FileSink(tmp_path / "out")
    writer.write_batch([], [Rejection(line=n, reason=RejectCode.INVALID_JSON, message="m")
                            for n in range(1, rows + 1)])  # fmt: skip
    status = {"items": 1, "decisions": 0, "threshold": 1.0, "says": "no decisions yet"}
    sources = {f"github:o/r{n:05d}": status for n in range(rows)}
    sources["github:o/big"] = {**status, "items": 40}
    done = summary(read=rows, lines_total=rows, rejected=rows)
    writer.commit(done.model_copy(update={"sources": sources}))
    text = (tmp_path / "out" / "summary.md").read_text()
    assert len(text.splitlines()) < MAX_SUMMARY_ROWS + MAX_SUMMARY_SOURCES + 60
    assert f"… and {rows - MAX_SUMMARY_ROWS} more rows" in text
    more = rows + 1 - MAX_SUMMARY_SOURCES
    assert f"… and {more} more sources, each in summary.json's `sources`." in text
    table = text[text.index("| source | items") :]
    assert table.splitlines()[2].startswith("| github:o/big | 40 |")  # the largest first
    assert len(read_jsonl(tmp_path / "out" / "rejected.jsonl")) == rows  # every row kept


def test_summary_md_names_the_rows_cut_to_fit_the_model(tmp_path: Path) -> None:
    long = "rotate session token " + "and more words " * 100  # the stub cuts past 1,000 chars
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}"})
        for i, t in enumerate(["rotate session token", long])
    ]
    result = one_shot.link(stub_pipeline(threshold=0.99), sections, "r")
    assert result.truncated == 1 and result.cut_chunks == ["c1"]
    writer = FileSink(tmp_path / "out")
    writer.write(Finished(RawBatch([], 0, 0, 0, True), sections, result))
    writer.commit(summary(read=2, lines_total=2, review=2))
    text = (tmp_path / "out" / "summary.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| about:explain | review")]
    assert len(rows) == 2 and "cut to fit the model" in rows[1] and "cut" not in rows[0]


def test_a_row_linked_by_a_cited_id_names_its_cre_in_summary_md() -> None:
    from librarian.pipeline.sinks import envelope_row

    pipeline = stub_pipeline()
    (envelope,) = one_shot.link(pipeline, [section_from_text("see CRE 200-001")], "r").envelopes
    assert not envelope.retrieval.candidates  # nothing else names it
    names = {node.cre_id: node.name for node in pipeline.hub.nodes}
    assert "| 200-001 Rotate session token after login |" in envelope_row(envelope, False, names)
    assert "| 200-001 |" in envelope_row(envelope)


def test_a_written_envelope_line_holds_what_dump_envelope_holds(tmp_path: Path) -> None:
    """The file sink writes each envelope with pydantic's own encoder (`envelope_line`, a
    third of the time of a dict through `json.dumps`): the same JSON, read back, as the
    dict the store keeps and the workbench serves, across texts in any script."""
    import json

    from librarian.schemas.envelopes import dump_envelope, envelope_line

    texts = [
        "Passwörter müssen gesalzen sein — immer.",
        "密码必须加盐 \u2028 存储",
        'a "quoted" \\ text',
    ]
    sections = [
        section_from_text(t, title=f"T{i} ✓").model_copy(update={"chunk_id": f"u{i}"})
        for i, t in enumerate(texts)
    ]
    linked = one_shot.link(
        stub_pipeline(), sections, "r", datetime(2026, 1, 1, tzinfo=UTC)
    ).envelopes
    for envelope in [*envelopes(), *linked]:
        line = envelope_line(envelope)
        assert line.endswith("\n") and "\n" not in line[:-1]
        assert json.loads(line) == dump_envelope(envelope)
