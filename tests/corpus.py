"""Policies in the house styles companies write them in (issue 48), each one document
model saved as Word, as PDF and as Markdown, with the items a reader must find in it.

A document is a list of parts; each text part says what it is to a reader: a requirement
with the id it must be read under (`expect`), a note to skip (`NOTE`), or the
continuation of the requirement before it (`MORE`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

NOTE = "note"
MORE = "more"
LEAD = "lead"  # leads into the list after it: read with each of its items


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Text:
    kind: str  # paragraph, numbered, bullet
    text: str
    expect: str  # the item's id, NOTE or MORE


@dataclass(frozen=True)
class Table:
    rows: tuple[tuple[str, ...], ...]
    expect: tuple[tuple[str, str], ...] = ()  # (id, text) of each item it holds
    plain: bool = False  # no column of requirements: read as text, with a warning


Part = Heading | Text | Table


def p(text: str, expect: str) -> Text:
    return Text("paragraph", text, expect)


def num(text: str, expect: str) -> Text:
    return Text("numbered", text, expect)


def bullet(text: str, expect: str) -> Text:
    return Text("bullet", text, expect)


@dataclass(frozen=True)
class Document:
    name: str
    title: str
    parts: tuple[Part, ...]
    formats: tuple[str, ...] = ("docx", "pdf", "bare.pdf", "md")

    def items(self) -> list[tuple[str, str]]:
        """(id, text) of every item a reader must find, in order."""
        out: list[tuple[str, str]] = []
        lead = ""
        for part in self.parts:
            if isinstance(part, Text) and part.expect == LEAD:
                lead = part.text + " "
                continue
            if not isinstance(part, Text) or part.kind == "paragraph":
                lead = ""
            if isinstance(part, Table):
                out.extend(part.expect)
            elif isinstance(part, Text) and part.expect == MORE:
                out[-1] = (out[-1][0], f"{out[-1][1]} {part.text}")
            elif isinstance(part, Text) and part.expect != NOTE:
                text = part.text
                if text.startswith(part.expect + " "):
                    text = text[len(part.expect) + 1 :]
                out.append((part.expect, lead + text))
        return out

    def notes(self) -> int:
        return sum(1 for part in self.parts if isinstance(part, Text) and part.expect == NOTE)

    def save(self, kind: str, folder: Path) -> Path:
        """`kind`: docx, md, pdf (with bookmarks, as Word saves one by default), or
        "bare.pdf" (no bookmarks: headings by their size and weight alone)."""
        path = folder / f"{self.name}.{kind}"
        if kind == "bare.pdf":
            _pdf(self, path, outline=False)
        else:
            {"docx": _docx, "pdf": _pdf, "md": _markdown}[kind](self, path)
        return path


def _docx(document: Document, out: Path) -> None:
    import docx

    word = docx.Document()
    word.add_heading(document.title, 0)
    for part in document.parts:
        if isinstance(part, Heading):
            word.add_heading(part.text, part.level)
        elif isinstance(part, Table):
            table = word.add_table(rows=len(part.rows), cols=len(part.rows[0]))
            for i, row in enumerate(part.rows):
                for j, cell in enumerate(row):
                    table.cell(i, j).text = cell
        else:
            style = {"numbered": "List Number", "bullet": "List Bullet"}.get(part.kind)
            word.add_paragraph(part.text, style=style)
    word.save(str(out))


def _pdf(document: Document, out: Path, outline: bool = True) -> None:
    from fpdf import FPDF

    pdf: Any = FPDF()
    pdf.set_auto_page_break(True, 20)
    pdf.add_page()
    pdf.set_font("helvetica", style="B", size=16)
    pdf.cell(0, 10, document.title, new_x="LMARGIN", new_y="NEXT")
    number = 0
    for part in document.parts:
        if isinstance(part, Heading):
            number = 0
            pdf.set_font("helvetica", style="B", size=13 if part.level == 1 else 11)
            if outline:
                pdf.start_section(part.text, level=part.level - 1)
            pdf.cell(0, 9, part.text, new_x="LMARGIN", new_y="NEXT")
            continue
        pdf.set_font("helvetica", size=10)
        if isinstance(part, Table):
            with pdf.table() as table:
                for cells in part.rows:
                    row = table.row()
                    for cell in cells:
                        row.cell(cell)
            pdf.ln(2)
            continue
        text = part.text
        if part.kind == "numbered":
            number += 1
            text = f"{number}. {text}"
        elif part.kind == "bullet":
            text = f"- {text}"
        pdf.multi_cell(0, 5, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    pdf.output(str(out))


def _markdown(document: Document, out: Path) -> None:
    lines = ["---", f"title: {document.title}", "---", ""]
    for part in document.parts:
        if isinstance(part, Heading):
            lines += ["#" * part.level + " " + part.text, ""]
        elif isinstance(part, Table):
            header, *rows = part.rows
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "---|" * len(header))
            lines += ["| " + " | ".join(row) + " |" for row in rows]
            lines.append("")
        else:
            marker = {"numbered": "1. ", "bullet": "- "}.get(part.kind, "")
            lines += [marker + part.text, ""]
    out.write_text("\n".join(lines), encoding="utf-8")


COMPANY = Document(
    "company",
    "Acme Information Security Policy",
    (
        Heading(1, "1 Purpose and scope"),
        p("This policy applies to all employees, contractors and systems of Acme.", NOTE),
        Heading(1, "2 Access control"),
        p("Access is granted on the principle of least privilege.", NOTE),
        p("POL-AC-01 User accounts must be approved by the asset owner before use.", "POL-AC-01"),
        p("POL-AC-02 Access rights must be reviewed every six months.", "POL-AC-02"),
        p("The review is recorded in the ticket system.", MORE),
        p("Note: service accounts are reviewed by the platform team.", NOTE),
        p("Shared accounts are prohibited for administrative access.", "access-control-1"),
        Heading(1, "3 Cryptography"),
        p("Background: weak ciphers were found in the 2024 audit.", NOTE),
        p("POL.CR.01 Only approved cryptographic algorithms may be used.", "POL.CR.01"),
        p("POL_CR_02 Keys must be rotated at least once a year.", "POL_CR_02"),
        Heading(1, "4 Logging and monitoring"),
        p("POL-LM-01 Security events must be logged centrally.", "POL-LM-01"),
        p("Logs must be kept for at least one year.", "logging-and-monitoring-1"),
    ),
)

ISO = Document(
    "iso",
    "Statement of Applicability",
    (
        Heading(1, "A.5 Organizational controls"),
        p("A.5.1 Policies for information security shall be defined and approved.", "A.5.1"),
        p("Guidance: the policy is reviewed at planned intervals.", NOTE),
        p("A.5.15 Rules to control physical and logical access shall be established.", "A.5.15"),
        Heading(1, "A.8 Technological controls"),
        p("A.8.5 Secure authentication technologies shall be implemented.", "A.8.5"),
        p("A.8.24 Rules for the effective use of cryptography shall be defined.", "A.8.24"),
        p("Example: TLS 1.2 or later for data in transit.", NOTE),
    ),
)

NIST = Document(
    "nist",
    "System Security Plan",
    (
        Heading(1, "Access Control"),
        p("AC-2 The organization must manage system accounts.", "AC-2"),
        p("AC-2(1) Account management must be supported by automated mechanisms.", "AC-2(1)"),
        p("Discussion: automated mechanisms include email or text messaging.", NOTE),
        p("AC-7 Consecutive invalid logon attempts must be limited.", "AC-7"),
        Heading(1, "Audit and Accountability"),
        p("AU-2 The system must log the events the organization selects.", "AU-2"),
        p("AU-9(4) Access to audit functions must be limited to privileged users.", "AU-9(4)"),
    ),
)

NUMBERED = Document(
    "numbered",
    "Secure Development Standard",
    (
        Heading(1, "Source code"),
        p("The following rules apply to every repository.", NOTE),
        num("Every change must be reviewed by a second developer.", "source-code-1"),
        num("Secrets must never be committed to a repository.", "source-code-2"),
        num("Dependencies must meet these rules:", LEAD),
        bullet("pinned to an exact version", "source-code-3"),
        bullet("scanned for known vulnerabilities", "source-code-4"),
        Heading(1, "Releases"),
        num("Release builds are signed with the release key.", "releases-1"),
        num("A release must pass the security test suite.", "releases-2"),
    ),
)

BULLETS = Document(
    "bullets",
    "Remote Working Rules",
    (
        Heading(1, "Devices"),
        bullet("Laptops must use full disk encryption.", "devices-1"),
        bullet("Screens must lock after five minutes of inactivity.", "devices-2"),
        bullet("Personal devices may only connect through the VPN.", "devices-3"),
        Heading(1, "Networks"),
        bullet("Public Wi-Fi is prohibited without the VPN.", "networks-1"),
        bullet("Home routers must not use default passwords.", "networks-2"),
        p("Tip: the service desk lends travel routers.", NOTE),
    ),
)

PLAIN = Document(
    "plain",
    "Acme Security Rules",
    (
        Heading(1, "Part 1"),
        p("Passwords must be at least twelve characters long.", "part-1-1"),
        p("Multi-factor authentication is required for remote access.", "part-1-2"),
        Heading(1, "Part 2"),
        p("Backups shall be tested every quarter.", "part-2-1"),
        # A control stated as fact, in a paragraph of its own: a requirement of its own
        # (issue 58: the wording classifier), no longer glued to the one before.
        p("A restore test covers at least one production system.", "part-2-2"),
        p("Note: the schedule is kept by the operations team.", NOTE),
        p("Production data may only be copied to approved locations.", "part-2-3"),
    ),
)

TABLES = Document(
    "tables",
    "Control Register",
    (
        Heading(1, "Controls"),
        Table(
            (
                ("Control", "Description", "Owner"),
                ("CTL-01", "Firewalls must deny inbound traffic by default.", "Network"),
                ("CTL-02", "Servers must be patched within 30 days.", "Operations"),
                ("CTL-03", "Admin sessions must time out after 15 minutes.", "Security"),
            ),
            (
                ("CTL-01", "Firewalls must deny inbound traffic by default."),
                ("CTL-02", "Servers must be patched within 30 days."),
                ("CTL-03", "Admin sessions must time out after 15 minutes."),
            ),
        ),
        Heading(1, "Vendor rules"),
        Table(
            (
                ("Requirement", "Owner"),
                ("Vendors must sign the security addendum.", "Legal"),
                ("Vendor access must be revoked at contract end.", "IT"),
            ),
            (
                ("vendor-rules-1", "Vendors must sign the security addendum."),
                ("vendor-rules-2", "Vendor access must be revoked at contract end."),
            ),
        ),
        p("VR-3 Vendors must report incidents within 24 hours.", "VR-3"),
    ),
)

ADVISORY = Document(
    "advisory",
    "Acceptable Use Guidelines",
    (
        Heading(1, "Workstations"),
        p("These guidelines apply to every office and home workstation.", NOTE),
        p("Staff should lock their screens when they leave their desks.", "workstations-1"),
        p("Laptops need to be encrypted before they leave the office.", "workstations-2"),
        p("Personal software is not to be installed without approval.", "workstations-3"),
        Heading(1, "Email"),
        p("Staff are expected to report suspicious messages to the service desk.", "email-1"),
        p("Attachments from unknown senders should not be opened.", "email-2"),
        p("Rationale: most incidents last year began with a phishing email.", NOTE),
    ),
)

CORPUS = (COMPANY, ISO, NIST, NUMBERED, BULLETS, PLAIN, TABLES, ADVISORY)
