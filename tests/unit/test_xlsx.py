"""Issue 57: a requirements register kept as an Excel workbook is read as the tables it
holds: a sheet of `id` and `text` columns as a CSV, a register by what its columns hold,
a sheet of owners or definitions left and said; refused as a Word file is when it hides
macros, a password or a DTD."""

from __future__ import annotations

import zipfile
from pathlib import Path

import openpyxl
import pytest

from librarian.pipeline.plain import plain_rows
from librarian.pipeline.shapes import plain_shape
from librarian.pipeline.shapes.rows import PlainInputError
from librarian.schemas.records import Section


def workbook(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


REGISTER: dict[str, list[list[object]]] = {
    "Policy": [
        ["ID", "Text", "Owner"],
        ["SEC-01", "Passwords must be at least 14 characters.", "IT"],
        ["SEC-02", "Backups shall be encrypted.", "Ops"],
    ],
    "Controls": [
        ["Control", "Requirement", "Owner"],
        ["CTL-1", "Firewalls must deny inbound traffic by default.", "Network"],
        [None, None, None],
        ["CTL-2", "Servers must be patched within 30 days.", "Operations"],
    ],
    "Owners": [["Team", "Lead"], ["Network", "Ana"], ["Operations", "Bo"]],
}


def test_each_sheet_is_read_as_the_table_it_is(tmp_path: Path) -> None:
    path = workbook(tmp_path / "register.xlsx", REGISTER)
    assert plain_shape(path) is not None
    rows = plain_rows(path, "Register")
    sections = [r for r in rows.records.values() if isinstance(r, Section)]
    assert [(s.locator.id, s.text) for s in sections] == [
        ("Register#SEC-01 (sheet 'Policy', row 2)", "Passwords must be at least 14 characters."),
        ("Register#SEC-02 (sheet 'Policy', row 3)", "Backups shall be encrypted."),
        (
            "Register#CTL-1 (sheet 'Controls', row 2)",
            "Firewalls must deny inbound traffic by default.",
        ),
        ("Register#CTL-2 (sheet 'Controls', row 4)", "Servers must be patched within 30 days."),
    ]
    said = rows.split.lines() if rows.split else []
    assert "sheet 'Controls': a row per requirement, ids from 'Control', text from " in "\n".join(
        said
    )
    assert any("sheet 'Owners' has no column of requirement" in line for line in said)
    assert [i.get("section_path") for i in rows.items.values()][2] == ["Controls"]


def test_a_sheet_without_ids_names_its_rows_by_the_sheet(tmp_path: Path) -> None:
    path = workbook(
        tmp_path / "checklist.xlsx",
        {"Remote work": [["Requirement"], ["Laptops must be encrypted."], ["VPN is required."]]},
    )
    ids = [r.locator.id for r in plain_rows(path, "C").records.values() if isinstance(r, Section)]
    assert ids == [
        "C#remote-work-2 (sheet 'Remote work', row 2)",
        "C#remote-work-3 (sheet 'Remote work', row 3)",
    ]


def test_a_workbook_with_macros_a_password_or_a_dtd_is_refused(tmp_path: Path) -> None:
    plain = workbook(tmp_path / "plain.xlsx", REGISTER)
    macros = tmp_path / "macros.xlsx"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(macros, "w") as out:
        for item in src.infolist():
            out.writestr(item, src.read(item.filename))
        out.writestr("xl/vbaProject.bin", b"\x00" * 16)
    with pytest.raises(PlainInputError, match=r"carries macros: save it as a plain \.xlsx"):
        plain_rows(macros)
    locked = tmp_path / "locked.xlsx"
    locked.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512)
    with pytest.raises(PlainInputError, match="password-protected"):
        plain_rows(locked)
    entities = tmp_path / "entities.xlsx"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(entities, "w") as out:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.endswith("sheet1.xml"):
                data = b'<!DOCTYPE x [<!ENTITY a "aaaa">]>' + data
            out.writestr(item, data)
    with pytest.raises(PlainInputError, match="declares a DTD"):
        plain_rows(entities)
