"""The reviewers' queue on a real SQLite file: export formats, safe cells, strict import."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.review.sheets import neutralise, read_sheet, to_csv, to_html, to_jsonl
from librarian.stages.ingest import section_from_text
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, write
from librarian.store.review import apply_sheet, review_items, reviewer_links
from librarian.store.tables import DecisionRow
from tests.stubs import small_hub, stub_linker

TEXTS = ["=HYPERLINK(\"http://evil\") rotate session token", "<script>x</script> sql queries",
         "cryptography", "-1 session management"]  # fmt: skip


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'review.db'}")
    upgrade(engine)
    batch = [
        section_from_text(t).model_copy(update={"chunk_id": f"c{i}", "line": i + 1})
        for i, t in enumerate(TEXTS)
    ]
    result = stub_linker(threshold=0.99).link(batch, "r1")  # everything to review
    with Session(engine) as session:
        sections = {s.chunk_id: s for s in batch}
        write(session, StoredBatch("r1", result.envelopes, sections, [], {}, "t"))
        session.commit()
    return engine


def items(engine: Engine, status: str = "open") -> list:  # type: ignore[type-arg]
    with Session(engine) as session:
        return review_items(session, status)


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_formula_cells_are_neutralised(cell: str) -> None:
    assert neutralise(cell) == "'" + cell
    assert neutralise("plain") == "plain"


def test_csv_export_never_starts_a_cell_with_a_formula(engine: Engine) -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(items(engine)))))
    assert len(rows) == 4
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert rows[0]["text"].startswith("'=HYPERLINK")
    assert rows[0]["suggestion_1_cre_id"] == "200-001"


def test_html_escapes_and_jsonl_round_trips(engine: Engine) -> None:
    page = to_html(items(engine))
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page
    assert page.count("<tr>") == 5  # header + 4
    lines = [json.loads(line) for line in to_jsonl(items(engine)).splitlines()]
    assert [line["chunk_id"] for line in lines] == ["c0", "c1", "c2", "c3"]


def sheet(tmp_path: Path, engine: Engine, decisions: dict[int, tuple[str, str]]) -> Path:
    rows = list(csv.DictReader(io.StringIO(to_csv(items(engine)))))
    for index, (action, cre) in decisions.items():
        rows[index]["decision"], rows[index]["cre_id"] = action, cre
    path = tmp_path / "sheet.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_import_records_decisions_and_feeds_training(tmp_path: Path, engine: Engine) -> None:
    path = sheet(tmp_path, engine, {0: ("accept", ""), 1: ("choose", "400-000"), 2: ("reject", "")})
    result = apply_sheet(engine, read_sheet(path), small_hub().ids, str(path))
    assert (result.accepted, result.chosen, result.rejected, result.left_open) == (1, 1, 1, 1)
    assert result.errors == []
    assert len(items(engine)) == 1 and len(items(engine, "decided")) == 3
    links = reviewer_links(engine)
    assert [(link.cre_id, link.framework_id) for link in links] == [
        ("200-001", "reviewers"), ("400-000", "reviewers")
    ]  # fmt: skip
    assert links[0].text == TEXTS[0]  # the neutralised cell came back as it was


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ({0: ("choose", "999-999")}, "row 1 .*unknown CRE id '999-999'"),
        ({1: ("maybe", "")}, "row 2 .*not accept|choose|reject"),
        ({0: ("accept", "400-000")}, "row 1 .*was not suggested"),
        ({2: ("choose", "")}, "row 3 .*choose needs a cre_id"),
    ],
)
def test_a_bad_row_refuses_the_whole_sheet(
    tmp_path: Path, engine: Engine, decisions: dict[int, tuple[str, str]], message: str
) -> None:
    good = {3: ("reject", "")}
    path = sheet(tmp_path, engine, {**good, **decisions})
    result = apply_sheet(engine, read_sheet(path), small_hub().ids, str(path))
    assert any(re.search(message, e) for e in result.errors), result.errors
    assert len(items(engine)) == 4  # nothing applied, not even the good row
    with Session(engine) as session:
        assert (
            session.execute(select(DecisionRow.status)).scalars().all() == ["review_required"] * 4
        )


def test_an_item_decided_already_is_not_open(tmp_path: Path, engine: Engine) -> None:
    path = sheet(tmp_path, engine, {0: ("reject", "")})
    assert apply_sheet(engine, read_sheet(path), small_hub().ids, "x").errors == []
    again = apply_sheet(engine, read_sheet(path), small_hub().ids, "x")
    assert again.errors and "not open" in again.errors[0]
