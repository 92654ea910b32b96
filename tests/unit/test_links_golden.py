"""Link data and golden sets: grouping, bare ids, validation that names the row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from librarian.schemas.evaluation import GoldenInput, GoldenRow
from librarian.training.golden import (
    GoldenError,
    dump_golden,
    load_golden,
    queue_row_of,
    rows_from_links,
    sections_of,
)
from librarian.training.links import (
    LinksError,
    curated_sections,
    is_bare_id,
    linked_sections,
    load_links,
)


def write_links(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def link(fw: str, sid: str, text: str, cre: str, kind: str = "LinkedTo") -> dict[str, str]:
    return {"framework_id": fw, "section_id": sid, "text": text, "cre_id": cre, "link_type": kind}


@pytest.mark.parametrize(
    ("text", "bare"),
    [
        ("WSTG-SESS-02", True),
        ("C1", True),
        ("5.1.1.2", True),
        ("SC-23(1)", True),
        ("WSTG-BUSL-$$", True),
        ("AU-12 Audit Record Generation", False),
        ("IA-11 RE-AUTHENTICATION", False),
        ("Fine-pruning", False),
    ],
)
def test_bare_ids(text: str, bare: bool) -> None:
    assert is_bare_id(text) is bare


def test_curated_sections_group_cres_and_drop_what_cannot_teach(tmp_path: Path) -> None:
    path = write_links(
        tmp_path / "links.jsonl",
        [
            link("a", "1", "Session Cheat Sheet", "100-001"),
            link("a", "1", "Session Cheat Sheet", "100-002"),
            link("a", "2", "WSTG-SESS-02", "100-001"),  # bare id
            link("b", "9", "Injection", "100-003", kind="AutomaticallyLinkedTo"),
            link("b", "8", "Logging", "999-999"),  # CRE the hub lacks
        ],
    )
    sections = curated_sections(load_links(path), known_cres={"100-001", "100-002", "100-003"})
    assert len(sections) == 1
    assert sections[0].cre_ids == {"100-001", "100-002"}


def test_malformed_link_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "links.jsonl"
    path.write_text(json.dumps(link("a", "1", "x", "100-001")) + '\n{"text": 1}\n')
    with pytest.raises(LinksError, match="line 2"):
        load_links(path)
    with pytest.raises(LinksError, match="does not exist"):
        load_links(tmp_path / "nope.jsonl")


def golden_file(tmp_path: Path, rows: object) -> Path:
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(rows))
    return path


def row(rid: str = "r1", **expected: object) -> dict[str, object]:
    return {
        "id": rid,
        "slice": "positive",
        "input": {"text": "Rotate session token after login"},
        "expected": expected or {"decision": "linked", "cre_ids": ["200-001"]},
    }


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ({"id": "x"}, "JSON list"),
        ([row(), row()], "appears twice"),
        ([row(decision="linked")], "needs cre_ids"),
        ([{**row(), "slice": "nonsense"}], "row 0.slice"),
        ([row(decision="review", extra=1)], "row 0.expected.extra"),
        ([row(decision="linked", cre_ids=["12-34"])], "row 0.expected.cre_ids.0"),
    ],
)
def test_bad_golden_rows_are_named(tmp_path: Path, rows: object, message: str) -> None:
    with pytest.raises(GoldenError, match=message.replace(".", r"\.")):
        load_golden(golden_file(tmp_path, rows))


def test_golden_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text("[{")
    with pytest.raises(GoldenError, match="not JSON"):
        load_golden(path)


def test_golden_rows_become_sections_through_run_validation() -> None:
    rows = [
        GoldenRow.model_validate(row()),
        GoldenRow(
            id="e1",
            slice="explicit",
            input=GoldenInput(text="Tokens rotate.", explicit_cre_ref="200-001", title_hint="S"),
            expected={"decision": "linked", "cre_ids": ["200-001"]},
        ),
    ]
    sections = sections_of(rows)
    assert [s.chunk_id for s in sections] == ["golden:r1", "golden:e1"]
    assert sections[1].text.endswith("See CRE 200-001.")
    assert sections[1].title_hint == "S"
    assert queue_row_of(rows[0])["llm_label"] == "KNOWLEDGE"


def test_dev_rows_from_links_have_unique_stable_ids(tmp_path: Path) -> None:
    path = write_links(
        tmp_path / "links.jsonl",
        [link("iso", "5.10", "Acceptable use", "100-001"), link("iso", "5.10", "Other", "100-002")],
    )
    rows = rows_from_links(curated_sections(load_links(path)))
    assert [r.id for r in rows] == ["gold:iso:5.10:title", "gold:iso:5.10:title#2"]
    again = golden_file(tmp_path, json.loads(dump_golden(rows)))
    assert load_golden(again) == rows


def test_dev_rows_are_upstream_golden_rows(tmp_path: Path) -> None:
    import jsonschema

    from librarian.paths import packaged

    path = write_links(
        tmp_path / "links.jsonl", [link("wstg", "INPV-01", "Reflected XSS", "100-001")]
    )
    prose = {("wstg", "INPV-01"): "Reflected cross-site scripting occurs when ..."}
    rows = rows_from_links(linked_sections(load_links(path), prose))
    assert [r.id for r in rows] == ["gold:wstg:INPV-01:title", "gold:wstg:INPV-01:prose"]
    schema = json.loads(packaged("schemas", "rfc", "golden-dataset.schema.json").read_text())
    for row in json.loads(dump_golden(rows)):
        jsonschema.validate(row, schema)
        assert row["input"]["source_standard"] == "WSTG"


def test_eval_reads_an_upstream_golden_file_as_it_is(tmp_path: Path) -> None:
    upstream = [
        {
            "id": "gold:asvs:V3.2.1:explicit",
            "schema_version": "0.1.0",
            "slice": "explicit",
            "input": {
                "text": "Verify ... (CRE 002-630)",
                "explicit_cre_ref": "002-630",
                "source_standard": "ASVS",
            },
            "expected": {"decision": "linked", "cre_ids": ["002-630"]},
            "provenance": {
                "standard_version": "4.0.3",
                "section_path": "V3.2.1",
                "ground_truth_source": "existing OpenCRE DB mapping",
            },
            "notes": "explicit citation",
        }
    ]
    (row,) = load_golden(golden_file(tmp_path, upstream))
    assert row.provenance is not None and row.provenance.section_path == "V3.2.1"
