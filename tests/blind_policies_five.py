"""Three more security policies written "blind", in house styles that differ from those of
tests/blind_policies.py, tests/blind_policies_two.py, tests/blind_policies_three.py and
tests/blind_policies_four.py, for testing how documents are split into one item per
requirement.

Like the policies of those modules, these were written without reference to how the
segmenter works: each policy knows only what a careful human reader would say about it
(which paragraphs are requirements, how the document labels and cites them, which paragraphs
are not requirements, and which strings are running page furniture). `BlindPolicy.save`
builds the Word file (python-docx) or the PDF (fpdf2, core fonts) at test time.

House styles (`POLICIES`):

* ``utility``: a water company's information security standard (Severn Vale Water,
  IS-STD-02) in the style of an ISO standard, numbered throughout by Word's automatic
  multi-level list (numbering.xml, one list whose levels print "1.", "1.1" and "a)"): no
  number is typed in any paragraph's text, Word prints it. Numbered clauses "4." are Word
  Heading 1 paragraphs on the list's first level; clauses "4.1" are body paragraphs on its
  second level, sub-clauses "a)" on its third (which restarts after every "4.1"). A reader
  sees the rendered numbers: `Expected.label` is "4.1" or "a)", `cite` "4.1" or "4.3 a)"
  (ISO's form, used by the standard itself: "Clause 4.3", "4.5 a)"). The PDF versions print
  the numbers as Word renders them (heading "4. Access control", clause label in a hanging
  indent). Unnumbered "Foreword" and "Related documents" headings (Heading 1 without
  numbering) hold notes, one of which defines "shall", "should" and "may"; "should"
  clauses are requirements (recommendations a compliance reader lists). The numbered
  clauses of "1. Scope" and "2. Terms and definitions" are notes (a definition says
  "must"), as are numbered lead-ins ending in a colon ("4.3 Passwords ... shall:") whose
  sub-clauses are the requirements, and "9.1" on sanctions. Unnumbered "NOTE" and
  "EXAMPLE" paragraphs (smaller type, indented to the clause text, the word "NOTE" or
  "EXAMPLE" run in) are notes. Header "Severn Vale Water plc" on the left and "IS-STD-02
  Issue 3.1" on the right; footer "INTERNAL \u00b7 Page N of M".
* ``agreement``: a German group works agreement (Konzernbetriebsvereinbarung) on
  information security between Brandt & Sohn Maschinenbau GmbH and its General Works
  Council, in English translation. Sections are headed in German statute style, two
  centred lines in one Word Heading 2 paragraph, "\u00a7 4" then a line break and "Access
  rights"; paragraphs "(1)", "(2)" are typed in front of their text (justified, wrapping
  back to the margin); numbered points "1.", "2." stand on their own indented lines, label
  in a hanging indent, and continue a sentence begun in the paragraph above them ("(1)
  Passwords must" / "1. consist of at least 12 characters,"). Cited as the agreement cites
  itself: "\u00a7 4(2)" for a paragraph and "\u00a7 5(1) no. 2" for a point (statutes
  outside the agreement are cited "section 87(1) no. 6 BetrVG"); a section with a single
  paragraph carries no "(1)" and is cited "\u00a7 11". A paragraph that only introduces
  points ("(1) Passwords must") is a note and each point a requirement; but the points of
  the definition in \u00a7 2(1) are notes. The parties' lines, the preamble (which says
  "must"), \u00a7 1 Scope, \u00a7 2 Definitions, \u00a7 3(1), \u00a7 12(2) (consequences),
  \u00a7 13 Disputes (which says "shall") and \u00a7 14 Entry into force, and the
  signature block are notes. Requirements bind the Company as well as employees ("The
  Company shall inform the Works Council ..."), and some paragraphs hold two sentences, the
  second referring to the first ("Sentence 1 does not apply ..."): the paragraph is the
  unit. Running header "Group Works Agreement IT-Sec" and "English translation"; footer
  "- N -", the German way.
* ``sop``: an NHS trust's Standard Operating Procedure (Ashcombe and District NHS
  Foundation Trust, SOP IG-07) for access to clinical systems. Typed, numbered Word
  headings ("6. Procedure", "6.2 Procedure B: Movers"). A "Duties" section of unlabelled
  paragraphs that open with the role in bold, the role being the subject of the sentence
  ("**Line managers** must request ..."): `Expected.text` is the whole sentence, role
  included, `label` and `cite` None; the duties of the Chief Executive and the SIRO only
  describe accountability and are notes. Three procedures, each a run of steps "Step 1",
  "Step 2" ... (bold label in a hanging indent) that restarts in every procedure: label
  "Step 3", cite "Procedure B, Step 3". Each procedure opens with a "Performed by:" line
  (a note). Shaded, boxed "Rationale:" and "Important:" paragraphs (bold run-in lead) after
  some steps are notes. Sections 7 and 8 number their paragraphs by hand ("7.1", a tab,
  the text, hanging indent); "7.3" (where training records can be viewed) and "8.3" (what
  the SIRO receives) are labelled notes. Introduction, purpose and scope say "must" and
  are notes, as are the definitions (one says "must"), the equality impact assessment and
  the references. Header "Ashcombe and District NHS Foundation Trust" on the left and "SOP
  IG-07" on the right; footer "Access to Clinical Information Systems SOP v4.0 \u00b7 Check
  the intranet for the current version \u00b7 Page N of M".

Titles and headings are neither requirements nor notes; `notes` holds the text of each note
paragraph as printed (without a typed or rendered label, with a run-in lead joined by a
space). Text uses only characters of Windows-1252 (the PDF core fonts' encoding, as in the
other modules).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from tests.blind_policies import BlindPolicy, Expected, _docx_footer, saved

if TYPE_CHECKING:
    from docx.document import Document as WordDocument
    from docx.text.paragraph import Paragraph
    from fpdf import FPDF

__all__ = ["POLICIES", "BlindPolicy", "Expected"]


@dataclass(frozen=True)
class _Block:
    """One paragraph of a document, in reading order."""

    kind: str  # "title", "meta", "heading", "para", "auto", "item", "inline", "box", "sign"
    text: str = ""
    label: str | None = None  # typed label; for "auto" and a numbered heading, as rendered
    level: int = 1  # a heading's level; an automatic list item's list level (1 or 2)
    lead: str | None = None  # para, box: a run-in lead ("NOTE", "Rationale:")
    plain_lead: bool = False  # para: the lead in the text's own type, not bold
    small: bool = False  # para: smaller type
    indent: float = 0.0  # para, item: left indent in cm (the PDF uses 10 mm per cm)
    width: float = 0.0  # item: width of the hanging label in cm
    bold_label: bool = False
    centre: bool = False  # para: centred


@dataclass(frozen=True)
class _Layout:
    """How a house lays its documents out, and the document's blocks."""

    blocks: tuple[_Block, ...]
    header: tuple[str, str]  # left and right text of the running header
    footer: str  # may hold "{page}" and "{pages}"
    word_title: bool = True  # False: a bold centred paragraph instead of the Title style
    centred_headings: bool = False
    justify: bool = False


@dataclass(frozen=True)
class _Policy(BlindPolicy):
    """A `BlindPolicy` that lays itself out with this module's writers."""

    layout: _Layout = field(
        default=_Layout((), ("", ""), ""), repr=False, compare=False, kw_only=True
    )

    def save(self, kind: str, folder: Path) -> Path:
        """Write the policy as ``docx``, ``pdf`` (with a bookmark outline) or ``bare.pdf``
        (no outline) into `folder`; return the path written."""
        pdf = partial(_write_pdf, self.name, self.layout)
        return saved(self.name, kind, folder, partial(_write_docx, self.layout), pdf)


def _joined(lead: str | None, text: str) -> str:
    """A paragraph's text as printed: its run-in lead, a space, its text."""
    return f"{lead} {text}" if lead else text


class _Writer:
    """Collects a document's blocks and, alongside, what a reader expects of them."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []
        self.requirements: list[Expected] = []
        self.notes: list[str] = []

    def title(self, text: str) -> None:
        self.blocks.append(_Block("title", text))

    def meta(self, text: str) -> None:
        self.blocks.append(_Block("meta", text))
        self.notes.append(text)

    def heading(self, text: str, level: int = 1, label: str | None = None) -> None:
        """A Word heading; `label` is the number Word's automatic list renders before it."""
        self.blocks.append(_Block("heading", text, label=label, level=level))

    def note(
        self,
        text: str,
        lead: str | None = None,
        plain_lead: bool = False,
        small: bool = False,
        indent: float = 0.0,
        centre: bool = False,
    ) -> None:
        """An unlabelled paragraph that is not a requirement, perhaps with a run-in lead."""
        self.blocks.append(
            _Block(
                "para",
                text,
                lead=lead,
                plain_lead=plain_lead,
                small=small,
                indent=indent,
                centre=centre,
            )
        )
        self.notes.append(_joined(lead, text))

    def plain_req(self, text: str, cite: str | None = None, lead: str | None = None) -> None:
        """A requirement printed as an unlabelled paragraph; a bold `lead` (a role) opens
        the sentence and is part of its text."""
        self.blocks.append(_Block("para", text, lead=lead))
        self.requirements.append(Expected(None, cite, _joined(lead, text)))

    def box(self, lead: str, text: str) -> None:
        """A shaded, boxed paragraph with a bold run-in lead (a note)."""
        self.blocks.append(_Block("box", text, lead=lead))
        self.notes.append(_joined(lead, text))

    def auto(self, label: str, text: str, level: int, cite: str | None) -> None:
        """A paragraph numbered by Word's automatic list; `label` is the number as rendered.
        A requirement cited `cite`, or (`cite` None) a note."""
        self.blocks.append(_Block("auto", text, label=label, level=level))
        self._add(label, text, cite)

    def item(
        self,
        label: str,
        text: str,
        cite: str | None,
        width: float,
        indent: float = 0.0,
        bold: bool = False,
    ) -> None:
        """A typed label in a hanging indent, a tab, the text; a requirement cited `cite`, or
        (`cite` None) a note."""
        self.blocks.append(
            _Block("item", text, label=label, indent=indent, width=width, bold_label=bold)
        )
        self._add(label, text, cite)

    def inline(self, label: str, text: str, cite: str | None) -> None:
        """A typed label, a space and the text wrapping back to the margin; a requirement
        cited `cite`, or (`cite` None) a note."""
        self.blocks.append(_Block("inline", text, label=label))
        self._add(label, text, cite)

    def sign(self, text: str) -> None:
        """A line of a signature block (a note)."""
        self.blocks.append(_Block("sign", text))
        self.notes.append(text)

    def _add(self, label: str, text: str, cite: str | None) -> None:
        if cite is None:
            self.notes.append(text)
        else:
            self.requirements.append(Expected(label, cite, text))

    def policy(self, name: str, furniture: tuple[str, ...], layout: _Layout) -> BlindPolicy:
        return _Policy(
            name=name,
            requirements=tuple(self.requirements),
            notes=tuple(self.notes),
            furniture=furniture,
            layout=layout,
        )


# --------------------------------------------------------------------------------------
# 1. utility: Severn Vale Water plc, Information Security Standard IS-STD-02
# --------------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class _Outline:
    """Numbers clauses as Word's automatic multi-level list renders them."""

    def __init__(self, out: _Writer) -> None:
        self.out = out
        self.numbers = [0, 0, 0]

    def section(self, title: str) -> None:
        self.numbers = [self.numbers[0] + 1, 0, 0]
        self.out.heading(title, 1, label=f"{self.numbers[0]}.")

    def _clause(self) -> str:
        self.numbers[1] += 1
        self.numbers[2] = 0
        return f"{self.numbers[0]}.{self.numbers[1]}"

    def req(self, text: str) -> None:
        label = self._clause()
        self.out.auto(label, text, 1, cite=label)

    def lead(self, text: str) -> None:
        """A numbered clause that is not a requirement."""
        self.out.auto(self._clause(), text, 1, cite=None)

    def sub(self, text: str) -> None:
        self.numbers[2] += 1
        label = _LETTERS[self.numbers[2] - 1] + ")"
        cite = f"{self.numbers[0]}.{self.numbers[1]} {label}"
        self.out.auto(label, text, 2, cite=cite)

    def note(self, lead: str, text: str) -> None:
        """An unnumbered "NOTE" or "EXAMPLE" paragraph, indented to the clause text."""
        self.out.note(text, lead=lead, plain_lead=True, small=True, indent=1.5)


def _utility_front(out: _Writer, o: _Outline) -> None:
    out.title("Information Security Standard IS-STD-02: Technical and Operational Controls")
    out.meta(
        "Severn Vale Water plc \u00b7 Issue 3.1 \u00b7 Owner: Head of Cyber Security \u00b7 "
        "Approved by the Security and Resilience Committee on 4 March 2026 \u00b7 Next review: "
        "March 2027"
    )
    out.heading("Foreword", 1)
    out.note(
        "This standard replaces Issue 2.4 (June 2023). It implements the Company's Information "
        "Security Policy (IS-POL-01) and the cyber security obligations that apply to the "
        "Company as an operator of essential services under the Network and Information "
        "Systems Regulations 2018."
    )
    out.note(
        'In this standard, "shall" and "must" indicate a requirement, "should" indicates a '
        'recommendation and "may" indicates a permission. A recommendation is expected to be '
        "followed unless the system owner records a reason for not doing so."
    )
    o.section("Scope")
    o.lead(
        "This standard applies to all information systems of the Company, including the "
        "operational technology that monitors and controls water treatment works, pumping "
        "stations and the distribution network."
    )
    o.lead(
        "It applies to employees, contractors and suppliers who design, operate or maintain "
        "those systems."
    )
    o.section("Terms and definitions")
    o.lead(
        "operational technology (OT): hardware and software that monitors or controls physical "
        "equipment, including SCADA servers, PLCs, RTUs and operator workstations"
    )
    o.lead(
        "privileged account: an account that can change the configuration, the security "
        "settings or the access rights of a system"
    )
    o.lead(
        "strong authentication: authentication that must combine at least two different "
        "factors, such as something the user knows and something the user has"
    )
    o.section("Governance")
    o.req(
        "Each information system shall have a named system owner, recorded in the asset register."
    )
    o.req(
        "The system owner is accountable for the risk assessment of the system and shall "
        "review it at least annually and after any significant change."
    )
    o.req(
        "Security requirements should be defined before a new system is procured, and shall be "
        "included in the invitation to tender."
    )


def _utility_access(o: _Outline) -> None:
    o.section("Access control")
    o.req(
        "Access to information systems is granted on the basis of a documented business need "
        "and approved by the system owner."
    )
    o.req(
        "Every user shall have a unique account. Shared accounts are permitted only on OT "
        "operator workstations in control rooms, where physical access is restricted and every "
        "log-on is recorded in the shift log."
    )
    o.lead("Passwords for accounts that are not protected by strong authentication shall:")
    o.sub("be at least 14 characters long;")
    o.sub("be checked against a list of compromised passwords when they are set; and")
    o.sub("not be reused across different systems.")
    o.note(
        "NOTE",
        "Clause 4.3 does not require passwords to be changed at fixed intervals. Forced "
        "periodic changes tend to produce weaker passwords.",
    )
    o.req(
        "Strong authentication is required for remote access, for all privileged accounts and "
        "for access to cloud services that hold Company data."
    )
    o.lead("User access rights shall be reviewed:")
    o.sub(
        "every six months by the system owner, for systems that hold personal data or control "
        "OT equipment;"
    )
    o.sub("every twelve months, for all other systems; and")
    o.sub("whenever a user changes role.")
    o.req(
        "Leavers' accounts are disabled by the end of their last working day, and the accounts "
        "of contractors on the expiry date of their contract."
    )


def _utility_ot(o: _Outline) -> None:
    o.section("Operational technology")
    o.req(
        "OT networks shall be separated from the corporate network by firewalls and a "
        "demilitarised zone; no traffic shall pass directly between the two networks."
    )
    o.req(
        "Remote access by suppliers to OT systems must be enabled by the control room for each "
        "session and disabled when the session ends."
    )
    o.note(
        "EXAMPLE",
        "A supplier's engineer telephones the control room, which enables the engineer's "
        "remote access account for the agreed maintenance window and disables it afterwards.",
    )
    o.req(
        "Removable media must not be connected to OT systems unless they have first been "
        "scanned at a media scanning kiosk."
    )
    o.req(
        "Changes to PLC logic should be tested on the test rig before deployment and shall be "
        "approved through the OT change process."
    )
    o.req(
        "Security patches for OT systems are assessed within 30 days of their release and "
        "installed at the next planned maintenance window, unless the assessment shows that the "
        "risk of installing them outweighs the benefit."
    )


def _utility_operations(out: _Writer, o: _Outline) -> None:
    o.section("Cryptography")
    o.req(
        "Information classified CONFIDENTIAL shall be encrypted in transit over any network "
        "and at rest on laptops, mobile phones and removable media."
    )
    o.lead("Cryptographic keys shall be:")
    o.sub("generated by an approved key management service or hardware security module;")
    o.sub("rotated at least every two years; and")
    o.sub("revoked immediately if their compromise is suspected.")
    o.note("NOTE", "The approved algorithms and key lengths are listed in IS-GUI-06.")
    o.section("Logging and monitoring")
    o.req(
        "Security events from servers, network devices, OT historians and cloud services shall "
        "be forwarded to the security information and event management (SIEM) system."
    )
    o.req(
        "Logs are retained for at least 12 months, of which the most recent 3 months are "
        "immediately searchable."
    )
    o.req(
        "The Security Operations Centre will triage high-severity alerts within 30 minutes, 24 "
        "hours a day."
    )
    o.section("Incident management")
    o.req(
        "Employees and contractors must report suspected security incidents to the IT Service "
        "Desk immediately, by telephone if the incident affects an OT system."
    )
    o.req(
        "Incidents that affect the supply of water shall be reported to the Drinking Water "
        "Inspectorate in accordance with the Company's NIS incident reporting procedure."
    )
    o.req(
        "A post-incident review should be held within 10 working days of closing a major incident."
    )
    o.section("Compliance")
    o.lead(
        "Failure to comply with this standard may result in disciplinary action or, for "
        "contractors and suppliers, in the termination of their contract."
    )
    o.req(
        "Exceptions to this standard shall be approved by the Head of Cyber Security and "
        "recorded in the risk register; an exception is valid for no more than 12 months, and "
        "an exception to 4.5 a) for no more than 3 months."
    )
    out.heading("Related documents", 1)
    out.note("IS-POL-01 Information Security Policy")
    out.note("IS-GUI-06 Cryptographic Algorithms and Key Lengths")
    out.note("OPS-PRO-14 OT Change Management Procedure")


def _utility() -> BlindPolicy:
    out = _Writer()
    outline = _Outline(out)
    _utility_front(out, outline)
    _utility_access(outline)
    _utility_ot(outline)
    _utility_operations(out, outline)
    furniture = ("Severn Vale Water plc", "IS-STD-02 Issue 3.1", "INTERNAL")
    layout = _Layout(
        tuple(out.blocks),
        header=(furniture[0], furniture[1]),
        footer=furniture[2] + " \u00b7 Page {page} of {pages}",
    )
    return out.policy("utility", furniture, layout)


# --------------------------------------------------------------------------------------
# 2. agreement: Brandt & Sohn Maschinenbau GmbH, group works agreement (translation)
# --------------------------------------------------------------------------------------


class _Sections:
    """Sections "\u00a7 4", paragraphs "(1)" and points "1.", cited "\u00a7 4(2) no. 1"."""

    def __init__(self, out: _Writer) -> None:
        self.out = out
        self.section = 0
        self.paragraph = 0
        self.point = 0

    def heading(self, title: str) -> None:
        self.section += 1
        self.paragraph = 0
        self.out.heading(f"\u00a7 {self.section}\n{title}", 2)

    def para(self, text: str, req: bool = True) -> None:
        self.paragraph += 1
        self.point = 0
        label = f"({self.paragraph})"
        self.out.inline(label, text, f"\u00a7 {self.section}{label}" if req else None)

    def point_(self, text: str, req: bool = True) -> None:
        self.point += 1
        cite = f"\u00a7 {self.section}({self.paragraph}) no. {self.point}"
        self.out.item(f"{self.point}.", text, cite if req else None, width=0.7, indent=0.6)

    def single(self, text: str, req: bool = True) -> None:
        """The one paragraph of a section, without a number."""
        if req:
            self.out.plain_req(text, cite=f"\u00a7 {self.section}")
        else:
            self.out.note(text)


def _agreement_front(out: _Writer, s: _Sections) -> None:
    out.title("Group Works Agreement on Information Security and the Use of IT Systems")
    out.meta(
        "GWA No. 2026/01 \u00b7 English translation; in case of doubt, the German version prevails"
    )
    out.note(
        "between Brandt & Sohn Maschinenbau GmbH, Hamburg, represented by the Management Board "
        '(hereinafter the "Company"),',
        centre=True,
    )
    out.note("and", centre=True)
    out.note(
        "the General Works Council of Brandt & Sohn Maschinenbau GmbH (hereinafter the "
        '"Works Council").',
        centre=True,
    )
    out.heading("Preamble", 2)
    out.note(
        "The Company depends on the availability and integrity of its IT systems, from "
        "engineering and production control to finance. Customers and authorities expect the "
        "Company to protect the information entrusted to it, and employees must be able to "
        "rely on their personal data being processed lawfully and transparently. With this "
        "Agreement, the parties lay down binding rules on information security that also "
        "protect the personal rights of employees."
    )
    s.heading("Scope")
    s.para(
        "This Agreement applies to all employees of the Company within the meaning of section "
        "5(1) of the Works Constitution Act (BetrVG), including trainees and employees working "
        "remotely.",
        req=False,
    )
    s.para(
        "It applies to all IT systems that the Company provides or that are used to process "
        "Company data.",
        req=False,
    )
    s.para(
        "Executive staff within the meaning of section 5(3) BetrVG are not covered by this "
        "Agreement.",
        req=False,
    )
    s.heading("Definitions")
    s.para("IT systems within the meaning of this Agreement are in particular:", req=False)
    s.point_("servers, desktop computers, laptops and thin clients,", req=False)
    s.point_("smartphones and tablets provided by the Company, and", req=False)
    s.point_(
        "machine control systems, insofar as they are connected to the corporate network.",
        req=False,
    )
    s.para(
        "Privileged accounts are user accounts with administrative rights over IT systems, "
        "networks or applications.",
        req=False,
    )
    s.para("A password is secure if it meets the requirements of \u00a7 5(1).", req=False)


def _agreement_access(s: _Sections) -> None:
    s.heading("Principles")
    s.para(
        "Information security serves to protect the confidentiality, integrity and "
        "availability of the information processed by the Company.",
        req=False,
    )
    s.para(
        "Technical and organisational measures under this Agreement shall be proportionate and "
        "shall interfere with the personal rights of employees no more than is necessary to "
        "achieve their purpose."
    )
    s.para(
        "The Company shall inform the Works Council in good time and comprehensively before it "
        "introduces or materially changes an IT system; the Works Council's right of "
        "co-determination under section 87(1) no. 6 BetrVG remains unaffected."
    )
    s.heading("Access rights")
    s.para(
        "Access rights are granted only to the extent that the employee's tasks require them "
        "(need-to-know principle)."
    )
    s.para("When access rights are granted, the following applies:", req=False)
    s.point_(
        "Every employee receives a personal user account; group and shared accounts are not "
        "permitted."
    )
    s.point_(
        "Access rights shall be requested by the supervisor and approved by the owner of the "
        "IT system."
    )
    s.point_(
        "Privileged accounts may be used only for administrative tasks and only by employees "
        "of the IT department or by service providers commissioned by it."
    )
    s.para(
        "Supervisors shall review the access rights of their employees once a year. Rights "
        "that are no longer required shall be withdrawn without delay."
    )
    s.para(
        "When an employee leaves the Company, the employee's user account shall be locked at "
        "the end of the last working day and deleted after three months at the latest."
    )


def _agreement_passwords(s: _Sections) -> None:
    s.heading("Passwords and authentication")
    s.para("Passwords must", req=False)
    s.point_("consist of at least 12 characters,")
    s.point_(
        "not be disclosed to other persons, including supervisors and employees of the IT "
        "department, and"
    )
    s.point_(
        "be changed without delay if there is any suspicion that they have become known to others."
    )
    s.para(
        "Access from outside the corporate network and access with privileged accounts "
        "require two-factor authentication."
    )
    s.para(
        "A user account is locked automatically after ten consecutive failed log-in attempts. "
        "Sentence 1 does not apply to machine operator terminals in production, which lock the "
        "screen instead."
    )


def _agreement_use(s: _Sections) -> None:
    s.heading("Use of e-mail and the internet")
    s.para(
        "E-mail and internet access are provided for business purposes. Occasional private use "
        "of the internet is permitted, provided that it does not interfere with work and does "
        "not cause costs for the Company."
    )
    s.para(
        "Employees shall not open attachments or links in e-mails from unknown senders and "
        'shall forward suspicious e-mails to the IT security team with the "Report phishing" '
        "button."
    )
    s.para(
        "The Company blocks websites in categories that present a security risk; the list of "
        "blocked categories is agreed with the Works Council."
    )
    s.heading("Mobile devices and mobile work")
    s.para("Company data may be stored only on devices provided or approved by the Company.")
    s.para("When working outside the Company's premises, employees shall", req=False)
    s.point_("connect to the corporate network only through the Company VPN,")
    s.point_("position screens so that unauthorised persons cannot see them, and")
    s.point_("never leave devices unattended in vehicles or public places.")
    s.para(
        "The loss or theft of a mobile device shall be reported to the IT service desk "
        "immediately so that the device can be wiped remotely."
    )
    s.heading("Data backup and encryption")
    s.para(
        "Data on servers is backed up daily. Employees shall store business data on network "
        "drives or in the Company's document management system, not only on the local hard "
        "disk."
    )
    s.para("Laptops and removable media are encrypted.")
    s.heading("Logging and evaluation")
    s.para(
        "Log data generated by IT systems shall be used exclusively for the purposes of "
        "information security, data protection control, troubleshooting and the assurance of "
        "proper system operation."
    )
    s.para(
        "An evaluation of log data relating to individual employees is permissible only",
        req=False,
    )
    s.point_(
        "in the case of a documented suspicion of a criminal offence or of a serious breach of "
        "contractual duties,"
    )
    s.point_("with the prior consent of the Works Council, and")
    s.point_("in the presence of a member of the Works Council designated by it.")
    s.para(
        "Log data shall be deleted after 90 days at the latest, unless it is required as "
        "evidence in a specific case under paragraph 2."
    )


def _agreement_final(out: _Writer, s: _Sections) -> None:
    s.heading("Security incidents")
    s.para(
        "Employees shall report suspected security incidents, in particular malware "
        "infections, phishing attempts and the loss of devices, to the IT service desk "
        "immediately."
    )
    s.para(
        "The Chief Information Security Officer informs the Works Council within one week of "
        "any significant security incident that affects the personal data of employees."
    )
    s.heading("Training")
    s.single(
        "The Company trains all employees in information security when they join and at least "
        "every two years thereafter; the training takes place during working time."
    )
    s.heading("Exceptions and violations")
    s.para(
        "Exceptions to this Agreement require the written approval of the Chief Information "
        "Security Officer and shall be limited to a maximum of twelve months."
    )
    s.para("Violations of this Agreement may result in measures under labour law.", req=False)
    s.heading("Disputes")
    s.single(
        "In the event of disagreement on the interpretation or application of this Agreement, "
        "the parties shall first attempt to reach an amicable settlement. If they do not reach "
        "one, the conciliation committee decides (section 76 BetrVG).",
        req=False,
    )
    s.heading("Entry into force and termination")
    s.para(
        "This Agreement enters into force on the day after its signature. It replaces the "
        "Works Agreement on the Use of E-mail and the Internet of 1 July 2015.",
        req=False,
    )
    s.para(
        "Either party may terminate this Agreement with three months' notice to the end of a "
        "calendar year. Until a new agreement is concluded, its provisions continue to apply.",
        req=False,
    )
    out.sign("Hamburg, 20 January 2026")
    out.sign("For the Company: Dr. Katrin Brandt, Chair of the Management Board")
    out.sign("For the General Works Council: Michael Kowalski, Chair")


def _agreement() -> BlindPolicy:
    out = _Writer()
    sections = _Sections(out)
    _agreement_front(out, sections)
    _agreement_access(sections)
    _agreement_passwords(sections)
    _agreement_use(sections)
    _agreement_final(out, sections)
    furniture = ("Group Works Agreement IT-Sec", "English translation")
    layout = _Layout(
        tuple(out.blocks),
        header=furniture,
        footer="- {page} -",
        word_title=False,
        centred_headings=True,
        justify=True,
    )
    return out.policy("agreement", furniture, layout)


# --------------------------------------------------------------------------------------
# 3. sop: Ashcombe and District NHS Foundation Trust, SOP IG-07
# --------------------------------------------------------------------------------------


class _Steps:
    """The steps of one procedure, "Step 1", "Step 2" ..., cited "Procedure A, Step 1"."""

    def __init__(self, out: _Writer, heading: str, performed_by: str) -> None:
        self.out = out
        self.procedure = heading.split(":")[0]  # "6.1 Procedure A" -> "Procedure A"
        self.procedure = self.procedure.split(" ", 1)[1]
        self.number = 0
        out.heading(heading, 2)
        out.note(performed_by, lead="Performed by:")

    def step(self, text: str) -> None:
        self.number += 1
        label = f"Step {self.number}"
        self.out.item(label, text, f"{self.procedure}, {label}", width=1.8, bold=True)


def _sop_front(out: _Writer) -> None:
    out.title(
        "Standard Operating Procedure IG-07: Access to Clinical Information Systems for "
        "Starters, Movers and Leavers"
    )
    out.meta(
        "Ashcombe and District NHS Foundation Trust \u00b7 Version 4.0 \u00b7 Author: "
        "Information Governance Manager \u00b7 Approved by the Information Governance Steering "
        "Group on 22 January 2026 \u00b7 Review date: January 2028"
    )
    out.heading("1. Introduction", 1)
    out.note(
        "The Trust's clinical information systems hold the health records of more than 400,000 "
        "patients. Staff must have the access they need to treat patients safely from their "
        "first day, and that access must end when they no longer need it."
    )
    out.heading("2. Purpose", 1)
    out.note(
        "This SOP describes the steps that must be followed when a member of staff joins the "
        "Trust, changes role or leaves, so that access to the electronic patient record (EPR), "
        "the Spine and other clinical systems is granted, changed and removed correctly."
    )
    out.heading("3. Scope", 1)
    out.note(
        "This SOP applies to all staff of the Trust, including bank, agency and locum staff, "
        "students on placement and contractors, and to every clinical system listed in the "
        "Information Asset Register."
    )
    out.note(
        "It does not cover access for the staff of GP practices, which is managed by the "
        "Integrated Care Board."
    )
    out.heading("4. Duties", 1)
    out.note("The Chief Executive has overall responsibility for information governance.")
    out.note(
        "The Senior Information Risk Owner (SIRO) is accountable for information risk and "
        "receives the quarterly audit summary described in section 8."
    )
    out.plain_req(
        "must request access for their staff, confirm that the access requested matches the "
        "role, and tell the Workforce team about leavers and movers without delay.",
        lead="Line managers",
    )
    out.plain_req(
        "verifies the identity of staff who need a smartcard and assigns their access "
        "profiles in the Care Identity Service.",
        lead="The Registration Authority (RA) team",
    )
    out.plain_req(
        "creates, changes and disables accounts only on the basis of an approved request or a "
        "leaver notification.",
        lead="The IT Service Desk",
    )
    out.plain_req(
        "must keep their smartcard and passcode to themselves and remove the smartcard from "
        "the reader whenever they leave a workstation.",
        lead="All staff",
    )


def _sop_definitions(out: _Writer) -> None:
    out.heading("5. Definitions", 1)
    out.note(
        "a card issued by the Registration Authority that, with a passcode, gives access to "
        "national NHS systems such as the Spine.",
        lead="Smartcard:",
    )
    out.note(
        "the roles and activities assigned to a smartcard holder for a position; a profile "
        "must match the holder's job.",
        lead="Access profile:",
    )
    out.note(
        "a member of staff who changes role, department or working pattern in a way that "
        "changes the systems or data they need.",
        lead="Mover:",
    )
    out.heading("6. Procedure", 1)
    out.note(
        "Each procedure below is set out as numbered steps. The Rationale boxes explain why a "
        "step is needed; they add nothing to the steps."
    )


def _sop_starters(out: _Writer) -> None:
    a = _Steps(out, "6.1 Procedure A: New starters", "line manager, RA team, IT Service Desk.")
    a.step(
        "The line manager submits an electronic access request (form ITF-01) at least 10 "
        "working days before the start date, naming each system and the access profile needed."
    )
    a.step(
        "The information asset owner of each system requested approves or rejects the request "
        "within 3 working days."
    )
    out.box(
        "Rationale:",
        "Approval by the information asset owner means that someone who understands the "
        "system's data confirms that the access is justified.",
    )
    a.step(
        "On the first day of employment, the RA Agent verifies the starter's identity in "
        "person against original documents, to the e-GIF Level 3 standard, before any "
        "smartcard is issued."
    )
    out.box(
        "Rationale:",
        "Identity checks made from photocopies or scanned documents do not meet the national "
        "standard and have been used in attempts to impersonate clinicians.",
    )
    a.step(
        "If the starter already holds an NHS smartcard, the RA Agent assigns the new access "
        "profile to the existing card and the procedure continues at Step 6; a second "
        "smartcard must not be issued."
    )
    a.step(
        "The RA Agent issues a new smartcard, and the starter sets a passcode of at least 6 "
        "characters at the RA desk. The passcode is never written down or told to anyone."
    )
    a.step(
        "The IT Service Desk creates the network and EPR accounts, following the account "
        "naming standard, within 2 working days of the approval."
    )
    a.step(
        "Give the starter the IT acceptable use leaflet, and record on ITF-01 that the starter "
        "has signed the acceptable use declaration before the first log-on."
    )
    out.box(
        "Important:",
        "Sharing a smartcard or its passcode is a disciplinary offence and may be reported to "
        "the professional regulator of the member of staff.",
    )


def _sop_movers_leavers(out: _Writer) -> None:
    b = _Steps(
        out, "6.2 Procedure B: Movers", "current and new line manager, RA team, IT Service Desk."
    )
    b.step('The new line manager submits form ITF-01 marked "Change of role" before the move.')
    b.step(
        "The current line manager lists on the form the access that the member of staff will "
        "no longer need in the new role."
    )
    b.step(
        "The RA Agent removes the old position from the smartcard and assigns the new access "
        "profile on the day of the move."
    )
    out.box(
        "Rationale:",
        "Staff who keep the access of every previous role build up rights that nobody has "
        "approved; this was the most common finding of the 2024 access audit.",
    )
    b.step(
        "The IT Service Desk removes group memberships and shared mailbox access that relate "
        "only to the old role within 5 working days of the move."
    )
    c = _Steps(
        out,
        "6.3 Procedure C: Leavers",
        "Workforce team, line manager, RA team, IT Service Desk.",
    )
    c.step(
        "The Workforce team enters the leaving date in the Electronic Staff Record (ESR) as "
        "soon as the resignation or the end of the contract is confirmed."
    )
    c.step("The line manager completes the leaver checklist (form ITF-03) by the last working day.")
    c.step(
        "Disable all of the leaver's accounts by 17:00 on the last working day. In the case "
        "of a dismissal, the IT Service Desk disables the accounts immediately, on the "
        "instruction of the Workforce team."
    )
    c.step(
        "The RA Agent removes the Trust position from the leaver's smartcard within 24 hours "
        "of the leaving date; the card itself is not cancelled, because it remains valid with "
        "other NHS employers."
    )
    c.step(
        "The line manager collects the leaver's Trust equipment, ID badge and tokens on or "
        "before the last working day and returns them to the IT Service Desk."
    )
    c.step(
        "Accounts of leavers are deleted 90 days after they were disabled, once the line "
        "manager has confirmed that no data needs to be kept."
    )
    out.box(
        "Rationale:",
        "The 90-day delay lets the line manager recover e-mail and files that are needed for "
        "patient care or for legal reasons.",
    )


def _sop_back(out: _Writer) -> None:
    def numbered(label: str, text: str, req: bool = True) -> None:
        out.item(label, text, label if req else None, width=1.2)

    out.heading("7. Training", 1)
    numbered(
        "7.1",
        'Line managers must complete the e-learning module "Managing access to clinical '
        'systems" before they submit their first access request.',
    )
    numbered(
        "7.2",
        "RA Agents shall be trained and registered by the RA Manager before they verify "
        "identities or issue smartcards.",
    )
    numbered(
        "7.3",
        "Training records can be viewed in the Trust's learning management system.",
        req=False,
    )
    out.heading("8. Monitoring compliance with this SOP", 1)
    numbered(
        "8.1",
        "The Information Governance team audits a random sample of 30 starters, movers and "
        "leavers every quarter against the steps of this SOP.",
    )
    numbered(
        "8.2",
        "The results of each audit are reported to the Information Governance Steering Group, "
        "and any account found active more than 24 hours after a leaving date is reported as "
        "an incident on Datix.",
    )
    numbered(
        "8.3",
        "The SIRO receives a summary of the audit results in the quarterly information risk "
        "report.",
        req=False,
    )
    out.heading("9. Equality impact assessment", 1)
    out.note(
        "This SOP has been assessed for its impact on people with protected characteristics "
        "under the Equality Act 2010. No adverse impact was identified."
    )
    out.heading("10. References", 1)
    out.note("Registration Authority Policy, NHS England")
    out.note("Information Governance Policy IG-01, Ashcombe and District NHS Foundation Trust")
    out.note("Data Security and Protection Toolkit, standard 4 (Managing data access)")


def _sop() -> BlindPolicy:
    out = _Writer()
    _sop_front(out)
    _sop_definitions(out)
    _sop_starters(out)
    _sop_movers_leavers(out)
    _sop_back(out)
    furniture = (
        "Ashcombe and District NHS Foundation Trust",
        "SOP IG-07",
        "Access to Clinical Information Systems SOP v4.0",
        "Check the intranet for the current version",
    )
    layout = _Layout(
        tuple(out.blocks),
        header=(furniture[0], furniture[1]),
        footer=f"{furniture[2]} \u00b7 {furniture[3]} \u00b7 Page {{page}} of {{pages}}",
    )
    return out.policy("sop", furniture, layout)


# --------------------------------------------------------------------------------------
# Word
# --------------------------------------------------------------------------------------

_NUM_ID = 90  # the automatic multi-level list of the utility standard
_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
_LEVELS = (  # ilvl, format, text, left and hanging indent in twips
    (0, "decimal", "%1.", 567, 567),
    (1, "decimal", "%1.%2", 851, 851),
    (2, "lowerLetter", "%3)", 1418, 567),
)


def _add_numbering(document: WordDocument) -> None:
    """Add the multi-level list "1." / "1.1" / "a)" to the document's numbering part."""
    from docx.oxml import parse_xml

    levels = "".join(
        f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/>'
        f'<w:lvlText w:val="{text}"/><w:lvlJc w:val="left"/>'
        f'<w:pPr><w:ind w:left="{left}" w:hanging="{hanging}"/></w:pPr></w:lvl>'
        for ilvl, fmt, text, left, hanging in _LEVELS
    )
    abstract = parse_xml(
        f'<w:abstractNum {_W} w:abstractNumId="{_NUM_ID}">'
        f'<w:multiLevelType w:val="multilevel"/>{levels}</w:abstractNum>'
    )
    num = parse_xml(f'<w:num {_W} w:numId="{_NUM_ID}"><w:abstractNumId w:val="{_NUM_ID}"/></w:num>')
    numbering = document.part.numbering_part.element
    first_num = numbering.find("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}num")
    if first_num is None:
        numbering.append(abstract)
    else:
        first_num.addprevious(abstract)  # every abstractNum precedes every num
    numbering.append(num)


def _number(paragraph: Paragraph, ilvl: int) -> None:
    """Put a paragraph on level `ilvl` of the automatic list."""
    numbering = paragraph._p.get_or_add_pPr().get_or_add_numPr()
    numbering.get_or_add_ilvl().val = ilvl
    numbering.get_or_add_numId().val = _NUM_ID


def _shade(paragraph: Paragraph) -> None:
    """A pale blue background and a box border, as Word stores them."""
    from docx.oxml import parse_xml

    sides = "".join(
        f'<w:{side} w:val="single" w:sz="8" w:space="4" w:color="005EB8"/>'
        for side in ("top", "left", "bottom", "right")
    )
    properties = paragraph._p.get_or_add_pPr()
    properties.append(parse_xml(f"<w:pBdr {_W}>{sides}</w:pBdr>"))
    properties.append(parse_xml(f'<w:shd {_W} w:val="clear" w:color="auto" w:fill="E8F1FA"/>'))


def _docx_title(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Pt

    if layout.word_title:
        document.add_heading(block.text, 0)
        return
    paragraph = document.add_paragraph()
    paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    run = paragraph.add_run(block.text)
    run.bold = True
    run.font.size = Pt(15)


def _docx_meta(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Pt

    paragraph = document.add_paragraph()
    if not layout.word_title:
        paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    run = paragraph.add_run(block.text)
    run.italic = True
    run.font.size = Pt(9)


def _docx_heading(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    heading = document.add_heading(block.text, block.level)  # "\n" becomes a line break
    if layout.centred_headings:
        heading.alignment = WD_ALIGN_PARAGRAPH.CENTER
    if block.label:  # numbered by the automatic list, not typed
        _number(heading, 0)


def _docx_para(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Cm, Pt

    paragraph = document.add_paragraph()
    if block.centre:
        paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    elif layout.justify:
        paragraph.alignment = WD_ALIGN_PARAGRAPH.JUSTIFY
    if block.indent:
        paragraph.paragraph_format.left_indent = Cm(block.indent)
    size = Pt(9) if block.small else None
    if block.lead:
        lead = paragraph.add_run(block.lead)
        lead.bold = not block.plain_lead
        lead.font.size = size
        paragraph.add_run(" " + block.text).font.size = size
    else:
        paragraph.add_run(block.text).font.size = size


def _docx_auto(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.shared import Pt

    paragraph = document.add_paragraph(block.text)  # the number is Word's, not the text's
    paragraph.paragraph_format.space_after = Pt(6)
    _number(paragraph, block.level)


def _docx_item(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.shared import Cm

    paragraph = document.add_paragraph()
    fmt = paragraph.paragraph_format
    fmt.left_indent = Cm(block.indent + block.width)
    fmt.first_line_indent = Cm(-block.width)
    fmt.tab_stops.add_tab_stop(Cm(block.indent + block.width))
    paragraph.add_run(block.label or "").bold = block.bold_label
    paragraph.add_run("\t" + block.text)


def _docx_inline(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    paragraph = document.add_paragraph(f"{block.label} {block.text}")
    if layout.justify:
        paragraph.alignment = WD_ALIGN_PARAGRAPH.JUSTIFY


def _docx_box(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.shared import Cm, Pt

    paragraph = document.add_paragraph()
    _shade(paragraph)
    fmt = paragraph.paragraph_format
    fmt.left_indent = Cm(2.0)
    fmt.right_indent = Cm(0.3)
    fmt.space_before = Pt(4)
    fmt.space_after = Pt(10)
    paragraph.add_run(block.lead or "").bold = True
    paragraph.add_run(" " + block.text)


def _docx_sign(document: WordDocument, block: _Block, layout: _Layout) -> None:
    from docx.shared import Pt

    paragraph = document.add_paragraph(block.text)
    paragraph.paragraph_format.space_before = Pt(14)


_DOCX: dict[str, Callable[[WordDocument, _Block, _Layout], None]] = {
    "title": _docx_title,
    "meta": _docx_meta,
    "heading": _docx_heading,
    "para": _docx_para,
    "auto": _docx_auto,
    "item": _docx_item,
    "inline": _docx_inline,
    "box": _docx_box,
    "sign": _docx_sign,
}


def _write_docx(layout: _Layout, out: Path) -> None:
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    document = docx.Document()
    section = document.sections[0]
    left, right = layout.header
    header = section.header.paragraphs[0]
    header.add_run(left)
    header.add_run("\t\t" + right).bold = True  # at the header's right-hand tab stop
    footer = section.footer.paragraphs[0]
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    _docx_footer(footer, layout.footer)
    if any(block.kind == "auto" for block in layout.blocks):
        _add_numbering(document)
    for block in layout.blocks:
        _DOCX[block.kind](document, block, layout)
    document.save(str(out))


# --------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------

_LINE = 5.2  # mm, body text at 10.5 pt
_CLAUSE_MM = 15.0  # width of the "4.1" column of the automatic list
_LETTER_MM = 10.0  # width of the "a)" column, indented by _CLAUSE_MM


def _pdf_title(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    pdf.set_font("helvetica", "B", 17 if layout.word_title else 14)
    pdf.multi_cell(
        0, 8 if layout.word_title else 7, block.text, align="L" if layout.word_title else "C"
    )
    pdf.ln(2)


def _pdf_meta(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    pdf.set_font("helvetica", "I", 9)
    pdf.multi_cell(0, 4.5, block.text, align="L" if layout.word_title else "C")
    pdf.ln(3)


def _pdf_heading(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    if pdf.get_y() > pdf.h - 50:
        pdf.add_page()
    pdf.ln(3)
    text = f"{block.label} {block.text}" if block.label else block.text
    if outline:
        pdf.start_section(text.replace("\n", " "), level=block.level - 1)
    pdf.set_font("helvetica", "B", 13 if block.level == 1 else 11.5)
    pdf.multi_cell(0, 6.5, text, align="C" if layout.centred_headings else "L")
    pdf.ln(1.5)


def _pdf_para(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    size = 9.0 if block.small else 10.5
    line = 4.6 if block.small else _LINE
    x = pdf.l_margin + block.indent * 10
    if block.lead:
        margin = pdf.l_margin
        pdf.set_left_margin(x)
        pdf.set_x(x)
        pdf.set_font("helvetica", "" if block.plain_lead else "B", size)
        pdf.write(line, block.lead)
        pdf.set_font("helvetica", size=size)
        pdf.write(line, " " + block.text)
        pdf.ln(line)
        pdf.set_left_margin(margin)
    else:
        pdf.set_font("helvetica", size=size)
        pdf.set_x(x)
        align = "C" if block.centre else "J" if layout.justify else "L"
        pdf.multi_cell(0, line, block.text, align=align)
    pdf.ln(2)


def _pdf_hanging(pdf: FPDF, x: float, width: float, label: str, text: str, bold: bool) -> None:
    """`label` in a column `width` mm wide at `x`, the text in a block to its right."""
    pdf.set_x(x)
    pdf.set_font("helvetica", "B" if bold else "", 10.5)
    pdf.cell(width, _LINE, label)
    pdf.set_font("helvetica", size=10.5)
    pdf.multi_cell(0, _LINE, text, align="L")
    pdf.ln(2)


def _pdf_auto(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    if block.level == 1:
        _pdf_hanging(pdf, pdf.l_margin, _CLAUSE_MM, block.label or "", block.text, False)
    else:
        x = pdf.l_margin + _CLAUSE_MM
        _pdf_hanging(pdf, x, _LETTER_MM, block.label or "", block.text, False)


def _pdf_item(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    x = pdf.l_margin + block.indent * 10
    _pdf_hanging(pdf, x, block.width * 10, block.label or "", block.text, block.bold_label)


def _pdf_inline(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    pdf.set_font("helvetica", size=10.5)
    align = "J" if layout.justify else "L"
    pdf.multi_cell(0, _LINE, f"{block.label} {block.text}", align=align)
    pdf.ln(2)


def _pdf_box(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    pdf.ln(1)
    pdf.set_x(pdf.l_margin + 20)
    pdf.set_font("helvetica", size=10)
    pdf.set_fill_color(232, 241, 250)
    pdf.set_draw_color(0, 94, 184)
    pdf.multi_cell(
        0,
        5.0,
        f"**{block.lead}** {block.text}",
        border=1,
        fill=True,
        markdown=True,
        align="L",
        padding=2,
    )
    pdf.set_draw_color(0, 0, 0)
    pdf.ln(4)


def _pdf_sign(pdf: FPDF, block: _Block, layout: _Layout, outline: bool) -> None:
    pdf.ln(5)
    pdf.set_font("helvetica", size=10.5)
    pdf.multi_cell(0, _LINE, block.text, align="L")


_PDF: dict[str, Callable[[FPDF, _Block, _Layout, bool], None]] = {
    "title": _pdf_title,
    "meta": _pdf_meta,
    "heading": _pdf_heading,
    "para": _pdf_para,
    "auto": _pdf_auto,
    "item": _pdf_item,
    "inline": _pdf_inline,
    "box": _pdf_box,
    "sign": _pdf_sign,
}


def _write_pdf(name: str, layout: _Layout, out: Path, outline: bool) -> None:
    from fpdf import FPDF

    class Document(FPDF):
        def header(self) -> None:
            left, right = layout.header
            self.set_font("helvetica", "", 8)
            self.set_text_color(90, 90, 90)
            self.cell(self.epw / 2, 5, left)
            self.set_font("helvetica", "B", 8)
            self.cell(0, 5, right, align="R")
            self.set_text_color(0, 0, 0)
            self.ln(10)

        def footer(self) -> None:
            self.set_y(-14)
            self.set_font("helvetica", size=8)
            self.set_text_color(90, 90, 90)
            text = layout.footer.replace("{page}", str(self.page_no())).replace("{pages}", "{nb}")
            self.cell(0, 5, text, align="C")
            self.set_text_color(0, 0, 0)

    pdf = Document(format="A4")
    pdf.core_fonts_encoding = "windows-1252"  # section signs, dashes, middle dots
    pdf.set_margins(22, 18, 22)
    pdf.set_auto_page_break(True, 22)
    pdf.set_title(name)
    pdf.add_page()
    for block in layout.blocks:
        _PDF[block.kind](pdf, block, layout, outline)
    pdf.output(str(out))


POLICIES: tuple[BlindPolicy, ...] = (_utility(), _agreement(), _sop())
