from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from librarian.contracts.envelopes import Envelope
from librarian.contracts.records import RejectCode, Rejection, RunSummary
from librarian.stages.accounting import AccountingError, check_accounting
from librarian.stages.emit import OUTPUT_FILES, OutputWriter, read_jsonl
from librarian.stages.ingest import section_from_text
from tests.stubs import stub_linker


def envelopes() -> list[Envelope]:
    sections = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}"})
        for i, t in enumerate(["see CRE 200-001", "rotate session token"])
    ]
    return stub_linker().link(sections, "r", datetime(2026, 1, 1, tzinfo=UTC)).envelopes


def summary(**counts: int) -> RunSummary:
    return RunSummary(run_id="r", input="i", out_dir="o", started_at="t", **counts)


def test_outputs_appear_only_on_commit(tmp_path: Path) -> None:
    writer = OutputWriter(tmp_path)
    writer.write_batch(
        envelopes(), [Rejection(line=3, reason=RejectCode.INVALID_JSON, message="m")]
    )
    assert not any((tmp_path / name).exists() for name in (*OUTPUT_FILES, "summary.json"))
    writer.commit(summary(read=3, lines_total=3, linked=1, review=1, rejected=1))
    assert read_jsonl(tmp_path / "proposals.jsonl")[0]["chunk_id"] == "c0"
    assert read_jsonl(tmp_path / "reviews.jsonl")[0]["chunk_id"] == "c1"
    assert read_jsonl(tmp_path / "rejected.jsonl")[0]["reason"] == "INVALID_JSON"
    assert (tmp_path / "summary.json").is_file()
    assert not list(tmp_path.glob("*.part"))


def test_a_crash_leaves_no_whole_looking_output(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), OutputWriter(tmp_path) as writer:
        writer.write_batch(envelopes())
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_stale_outputs_of_the_same_run_id_are_removed(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "proposals.jsonl").write_text("old\n")
    OutputWriter(tmp_path).abort()
    assert not (tmp_path / "summary.json").exists()
    assert not (tmp_path / "proposals.jsonl").exists()


def test_failed_batch_write_rolls_back_so_a_retry_does_not_double(tmp_path: Path) -> None:
    writer = OutputWriter(tmp_path)
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
    assert len(read_jsonl(tmp_path / "proposals.jsonl")) == 2
    assert len(read_jsonl(tmp_path / "reviews.jsonl")) == 2


def test_accounting_must_hold() -> None:
    check_accounting(
        summary(read=4, lines_total=5, blank_lines=1, linked=1, review=1, rejected=1, skipped=1)
    )
    with pytest.raises(AccountingError, match="read 4 lines but accounted for 3"):
        check_accounting(summary(read=4, lines_total=4, linked=1, review=1, rejected=1))
    with pytest.raises(AccountingError, match="blank"):
        check_accounting(summary(read=1, lines_total=3, blank_lines=1, linked=1))
