"""Word and PDF documents the tests build from a requirements CSV (id, text,
section_path): each section path's parts become headings (Word: Heading 1, 2; PDF: the
outline, or numbered headings), each requirement a paragraph "ID text"."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

TITLE = "Acme Security Policy"


def policy_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _headings(rows: list[dict[str, str]]) -> list[tuple[tuple[str, ...], list[dict[str, str]]]]:
    grouped: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        path = tuple(p.strip() for p in row["section_path"].split(">"))
        grouped.setdefault(path, []).append(row)
    return list(grouped.items())


def policy_docx(rows: list[dict[str, str]], out: Path) -> Path:
    import docx

    document = docx.Document()
    document.add_heading(TITLE, 0)
    document.sections[0].header.paragraphs[0].text = f"{TITLE} - internal"
    shown: tuple[str, ...] = ()
    for path, reqs in _headings(rows):
        for level, part in enumerate(path, start=1):
            if shown[:level] != path[:level]:
                document.add_heading(part, level)
        shown = path
        for row in reqs:
            document.add_paragraph(f"{row['id']} {row['text']}")
    document.save(str(out))
    return out


def policy_pdf(rows: list[dict[str, str]], out: Path, outline: bool = True) -> Path:
    from fpdf import FPDF

    class Policy(FPDF):
        def header(self) -> None:
            self.set_font("helvetica", size=8)
            self.cell(0, 6, f"{TITLE} - internal", new_x="LMARGIN", new_y="NEXT")

        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("helvetica", size=8)
            self.cell(0, 6, f"Page {self.page_no()}")

    pdf: Any = Policy()
    pdf.set_auto_page_break(True, 20)
    shown: tuple[str, ...] = ()
    numbers = [0, 0]
    for path, reqs in _headings(rows):
        for level, part in enumerate(path, start=1):
            if shown[:level] == path[:level]:
                continue
            if level == 1:
                pdf.add_page()  # one chapter a page: the running lines recur
            numbers[level - 1] += 1
            numbers[level:] = [0] * (len(numbers) - level)
            label = part if outline else ".".join(str(n) for n in numbers[:level]) + " " + part
            pdf.set_font("helvetica", style="B", size=13 if level == 1 else 11)
            if outline:
                pdf.start_section(part, level=level - 1)
            pdf.cell(0, 9, label, new_x="LMARGIN", new_y="NEXT")
        shown = path
        pdf.set_font("helvetica", size=10)
        for row in reqs:
            pdf.multi_cell(0, 5, f"{row['id']} {row['text']}", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
    pdf.output(str(out))
    return out
