"""Three more security policies written "blind", in house styles that differ from those of
tests/blind_policies.py and tests/blind_policies_two.py, for testing how documents are split
into one item per requirement.

Like the policies of those modules, these were written without reference to how the
segmenter works: each policy knows only what a careful human reader would say about it
(which paragraphs are requirements, how the document labels and cites them, which paragraphs
are not requirements, and which strings are running page furniture). `BlindPolicy.save`
builds the Word file (python-docx) or the PDF (fpdf2, core fonts) at test time.

House styles (`POLICIES`):

* ``municipal``: a US city's administrative policy on ICT security, in the outline of US
  federal and municipal codes. Sections "Sec. 4. Access control." (Heading 1); subsections
  "(a)", paragraphs "(1)", clauses "(i)", each typed in front of its text, the text wrapping
  back under the label, each level indented one step further. Cited as the code cites them:
  "4(b)(2)", "4(d)(2)(i)". Lead-ins ending in an em dash ("shall\u2014", "for\u2014") only
  introduce the paragraphs below them and are not requirements; some carry a run-in caption
  ("(b) Passwords. Passwords used ... shall\u2014"), and "(d)(2)" is a lead-in one level
  down. Section 4 runs to a subsection "(i)" that directly follows the clause "(h)(2)(ii)":
  a letter, not a roman numeral. A lettered "Definitions" section, a lettered
  "Applicability" section, a savings clause in 7(c) and a lettered "Penalties" section are
  labelled but are not requirements; so are an unlabelled savings sentence, a "Cross
  reference:" line and "(Res. No. ...)" history notes. Mostly "shall", with "may not", plain
  present tense and one imperative. Footer with the policy number and the page number.
* ``annex``: an ISO/IEC 27001:2013-style Annex A control set. Clauses "A.9 Access control"
  (Heading 1), objectives "A.9.2 User access management" (Heading 2), each with an
  "Objective:" paragraph (a note); every control is a title line "A.9.2.1 User registration
  and de-registration" (Heading 3; the organisation's own sub-controls, four levels deep,
  Heading 4) followed by one paragraph of control text. That paragraph is the requirement:
  its `Expected.label` and `cite` are the reference printed on the title line before it,
  its `Expected.text` is the paragraph alone (without the reference or the title). One
  three-level control (A.12.3.1) has no text of its own, only four-level sub-controls, so
  it is not a requirement; another (A.14.2.7) is excluded with a "Not applicable." paragraph
  (a note). "Guidance:" paragraphs (smaller type) are notes, one of them an imperative.
  Running header with the document title on the left and "INTERNAL" on the right; the
  footer is the bare page number.
* ``charter``: a European group's data protection and information security charter. A
  preamble ("Having regard to ...", "Whereas ..." recitals, some saying "must", "shall",
  "requires"), all notes; chapters "Chapter III \u2013 Security of processing" (Heading 1)
  and articles "Article 7 \u2013 Access management" (Heading 2), centred; paragraphs
  numbered "7.1\u00b0", "7.2\u00b0" typed in front of the text (not bold), justified, cited
  "Art. 7.1\u00b0" as the charter cites itself. An article with a single paragraph carries
  no number and is cited by the article ("Art. 9"); but the single paragraphs of the articles
  on subject matter, sanctions and entry into force are notes, and the numbered paragraphs
  of the articles on scope and definitions are notes too. A signature block at the end
  ("Done at ...", names and functions) holds notes. Footer "Charter CH-DPS-2026" and
  "Page N / M".

Headings and titles are neither requirements nor notes. Text uses only characters of
Windows-1252 (the PDF core fonts' encoding, as in the other modules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from tests.blind_policies import BlindPolicy, Expected, _docx_footer, saved

if TYPE_CHECKING:
    from docx.text.paragraph import Paragraph

__all__ = ["POLICIES", "BlindPolicy", "Expected"]


@dataclass(frozen=True)
class _Block:
    """One paragraph of a document, in reading order."""

    kind: str  # "title", "meta", "heading", "para", "item", "sign"
    text: str = ""
    label: str | None = None
    level: int = 1  # a heading's level; an item's indent depth (0 = flush)
    lead: str | None = None  # para: a run-in lead ("Guidance:"), bold or italic
    lead_italic: bool = False
    small: bool = False  # para: set in smaller type (guidance, history notes)
    indent: int = 0  # para: indent depth


@dataclass(frozen=True)
class _Layout:
    """How a house lays its documents out, and the document's blocks."""

    blocks: tuple[_Block, ...]
    header: tuple[str, str] | None  # left and right text of the running header
    footer: str  # may hold "{page}" and "{pages}"
    word_title: bool = True  # False: a bold 16 pt centred paragraph instead of the Title style
    centred_headings: bool = False
    justify: bool = False
    step_cm: float = 1.0  # Word: indent per depth
    step_mm: float = 9.0  # PDF: indent per depth


@dataclass(frozen=True)
class _Policy(BlindPolicy):
    """A `BlindPolicy` that lays itself out with this module's writers."""

    layout: _Layout = field(default=_Layout((), None, ""), repr=False, compare=False, kw_only=True)

    def save(self, kind: str, folder: Path) -> Path:
        """Write the policy as ``docx``, ``pdf`` (with a bookmark outline) or ``bare.pdf``
        (no outline) into `folder`; return the path written."""
        pdf = partial(_write_pdf, self.name, self.layout)
        return saved(self.name, kind, folder, partial(_write_docx, self.layout), pdf)


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

    def heading(self, text: str, level: int = 1) -> None:
        self.blocks.append(_Block("heading", text, level=level))

    def note(
        self,
        text: str,
        lead: str | None = None,
        italic: bool = False,
        small: bool = False,
        indent: int = 0,
    ) -> None:
        """An unlabelled paragraph that is not a requirement, perhaps with a run-in lead
        ("Guidance:") set in bold, or in italics."""
        self.blocks.append(
            _Block("para", text, lead=lead, lead_italic=italic, small=small, indent=indent)
        )
        self.notes.append(f"{lead} {text}" if lead else text)

    def lead(self, label: str, text: str, depth: int = 0) -> None:
        """A labelled paragraph that is not a requirement (it introduces the paragraphs
        below it, defines a term, or states a penalty)."""
        self.blocks.append(_Block("item", text, label=label, level=depth))
        self.notes.append(text)

    def req(self, label: str, text: str, cite: str | None = None, depth: int = 0) -> None:
        """A requirement whose label is typed in front of it."""
        self.blocks.append(_Block("item", text, label=label, level=depth))
        self.requirements.append(Expected(label, cite or label, text))

    def plain_req(self, text: str, label: str | None, cite: str) -> None:
        """A requirement printed as an unlabelled paragraph; `label` is the label printed
        elsewhere (on the control's title line above it), if any."""
        self.blocks.append(_Block("para", text))
        self.requirements.append(Expected(label, cite, text))

    def sign(self, text: str) -> None:
        """A line of a signature block (not a requirement)."""
        self.blocks.append(_Block("sign", text))
        self.notes.append(text)

    def policy(self, name: str, furniture: tuple[str, ...], layout: _Layout) -> BlindPolicy:
        return _Policy(
            name=name,
            requirements=tuple(self.requirements),
            notes=tuple(self.notes),
            furniture=furniture,
            layout=layout,
        )


# --------------------------------------------------------------------------------------
# 1. municipal: City of Brookhaven, Administrative Policy 410-03
# --------------------------------------------------------------------------------------


def _municipal() -> BlindPolicy:
    out = _Writer()
    out.title(
        "City of Brookhaven Administrative Policy: Information and Communications Technology "
        "(ICT) Security"
    )
    out.meta(
        "Policy No. 410-03 \u00b7 Responsible department: Information Technology \u00b7 "
        "Adopted by Resolution No. 2019-14 \u00b7 Amended by Resolution No. 2026-033, "
        "effective March 1, 2026"
    )

    section = 0

    def sec(title: str) -> None:
        nonlocal section
        section += 1
        out.heading(f"Sec. {section}. {title}")

    def r(label: str, text: str, depth: int = 0) -> None:
        """A requirement; its label's place in the outline follows from `label` and the
        labels of the lead-ins above it, kept in `path`."""
        del path[depth:]
        out.req(label, text, cite=str(section) + "".join(path) + label, depth=depth)

    def lead(label: str, text: str, depth: int = 0) -> None:
        del path[depth:]
        out.lead(label, text, depth=depth)
        path.append(label)

    path: list[str] = []

    sec("Purpose.")
    out.note(
        "The purpose of this policy is to protect the confidentiality, integrity, and "
        "availability of City information and information systems, and to establish the "
        "minimum security practices required of City departments, employees, and contractors."
    )

    sec("Definitions.")
    out.note("For purposes of this policy:")
    out.lead(
        "(a)",
        '"Authorized user" means an employee, elected official, volunteer, or contractor who '
        "has been granted access to a City information system.",
    )
    out.lead(
        "(b)",
        '"CIO" means the Chief Information Officer of the City or the Chief Information '
        "Officer's designee.",
    )
    out.lead(
        "(c)",
        '"Department head" means the director of a City department or the director\'s designee.',
    )
    out.lead(
        "(d)",
        '"Sensitive information" means information that is exempt from disclosure under the '
        "State Public Records Act, including personal information of residents and employees, "
        "law enforcement records, and payment card data.",
    )

    sec("Applicability.")
    out.lead(
        "(a)",
        "This policy applies to all City departments, offices, boards, and commissions, and to "
        "every person who uses a City information system.",
    )
    out.lead(
        "(b)",
        "Where a department is subject to a stricter federal or state standard, including the "
        "FBI Criminal Justice Information Services (CJIS) Security Policy or the Payment Card "
        "Industry Data Security Standard, the stricter standard controls.",
    )

    sec("Access control.")
    r(
        "(a)",
        "Access to City information systems shall be granted only to authorized users, and "
        "only to the extent necessary to perform their assigned duties.",
    )
    lead("(b)", "Passwords. Passwords used to access City information systems shall\u2014")
    r("(1)", "be not less than 14 characters in length;", 1)
    r("(2)", "not be shared with any other person, including IT Department staff; and", 1)
    r(
        "(3)",
        "be changed immediately when the authorized user has reason to believe that the "
        "password has been disclosed.",
        1,
    )
    lead("(c)", "Multi-factor authentication is required for\u2014")
    r("(1)", "all remote access to the City network;", 1)
    r("(2)", "all accounts with administrative privileges; and", 1)
    r("(3)", "any system that stores or processes sensitive information.", 1)
    lead("(d)", "Each department head shall\u2014")
    r("(1)", "designate an account coordinator for the department;", 1)
    lead("(2)", "notify the IT Department\u2014", 1)
    r(
        "(i)",
        "not later than the employee's last day of work, when an employee separates from "
        "City service; and",
        2,
    )
    r(
        "(ii)",
        "within five business days, when an employee transfers to another department or "
        "position; and",
        2,
    )
    r(
        "(3)",
        "review the access rights of department personnel at least annually and certify the "
        "results to the CIO.",
        1,
    )
    r("(e)", "Accounts that have not been used for 90 consecutive days shall be disabled.")
    r(
        "(f)",
        "Shared or generic accounts are prohibited, except for public kiosk and library catalog "
        "terminals approved by the CIO.",
    )
    r(
        "(g)",
        "Vendor remote access accounts are enabled only for the duration of an approved "
        "maintenance window and are disabled immediately afterward.",
    )
    lead(
        "(h)",
        "Privileged accounts. Authorized users with administrative privileges shall\u2014",
    )
    r("(1)", "use a separate account for administrative tasks; and", 1)
    lead("(2)", "not use an administrative account to\u2014", 1)
    r("(i)", "read email; or", 2)
    r("(ii)", "browse the Internet.", 2)
    r(
        "(i)",
        "The IT Department shall maintain a record of each access request, approval, and "
        "removal for not less than three years.",
    )
    out.note(
        "Employee separation procedures, Administrative Policy 220-01.", lead="Cross reference:"
    )
    out.note("(Res. No. 2019-14, \u00a7 4; Res. No. 2026-033, \u00a7 2)", small=True)

    sec("Data protection.")
    lead("(a)", "Sensitive information shall be encrypted\u2014")
    r("(1)", "when stored on a laptop, tablet, smartphone, or removable media; and", 1)
    r("(2)", "when transmitted over a network that is not owned or controlled by the City.", 1)
    r("(b)", "Backups of City information systems are performed daily and are encrypted at rest.")
    r(
        "(c)",
        "Payment card data shall not be stored on any City system after a transaction is "
        "authorized.",
    )
    r(
        "(d)",
        "Sensitive information may not be sent to a personal email account or stored in a "
        "personal cloud storage service.",
    )
    out.note(
        "Nothing in this section limits the obligation of the City to disclose public records "
        "under the State Public Records Act."
    )

    sec("Devices and software.")
    r(
        "(a)",
        "Only devices issued or approved by the IT Department may be connected to the City "
        "network.",
    )
    lead("(b)", "Authorized users shall not\u2014")
    r("(1)", "install software that has not been approved by the IT Department;", 1)
    r("(2)", "disable or circumvent antivirus, encryption, or other security software; or", 1)
    r("(3)", "connect personal storage devices to City computers.", 1)
    r(
        "(c)",
        "Security updates rated critical by the vendor are installed within 14 calendar days of "
        "their release.",
    )
    r("(d)", "Lock your workstation whenever you leave it unattended, even for a short time.")

    sec("Incident reporting.")
    r(
        "(a)",
        "An authorized user who knows or suspects that a City information system or sensitive "
        "information has been compromised shall report it to the IT Service Desk immediately, "
        "and not later than one hour after discovery.",
    )
    r(
        "(b)",
        "The CIO shall notify the City Manager and the City Attorney of any incident involving "
        "sensitive information within 24 hours.",
    )
    out.lead(
        "(c)",
        "Nothing in this section affects the duty of the City Attorney to notify affected "
        "persons under the State data breach notification statute.",
    )

    sec("Security awareness training.")
    r(
        "(a)",
        "Each authorized user shall complete security awareness training within 30 days of "
        "being granted access and annually thereafter.",
    )
    r("(b)", "The IT Department conducts simulated phishing exercises at least quarterly.")
    out.note("(Res. No. 2026-033, \u00a7 3)", small=True)

    sec("Penalties.")
    out.lead(
        "(a)",
        "An employee who violates this policy may be subject to disciplinary action, up to and "
        "including termination, in accordance with the City's personnel rules.",
    )
    out.lead(
        "(b)",
        "A contractor who violates this policy may have its access revoked and its contract "
        "terminated for cause.",
    )

    sec("Effective date.")
    out.note(
        "This policy takes effect March 1, 2026, and supersedes Administrative Policy 410-03 "
        "as adopted June 11, 2019."
    )

    furniture = ("City of Brookhaven \u2013 Admin. Policy 410-03",)
    layout = _Layout(
        tuple(out.blocks),
        header=None,
        footer=furniture[0] + " \u2013 Page {page}",
        word_title=False,
        step_cm=1.0,
        step_mm=9.0,
    )
    return out.policy("municipal", furniture, layout)


# --------------------------------------------------------------------------------------
# 2. annex: Kestrel Analytics Ltd, ISMS Annex A control set (ISMS-DOC-07)
# --------------------------------------------------------------------------------------


def _annex() -> BlindPolicy:
    out = _Writer()
    out.title("Kestrel Analytics Ltd \u2013 Information Security Management System")
    out.meta(
        "Document ISMS-DOC-07, Annex A: control set \u00b7 Version 3.0 \u00b7 Owner: Head of "
        "Information Security \u00b7 Approved by the ISMS Steering Committee on 9 February 2026"
    )
    out.note(
        "This annex lists the information security controls that Kestrel Analytics has "
        "selected in its Statement of Applicability. Each control carries the reference of the "
        "corresponding Annex A control of ISO/IEC 27001:2013; references with a fourth level, "
        "for example A.9.2.3.1, are Kestrel's own additions. The control text states what is "
        "required; guidance is informative only."
    )

    def objective(text: str) -> None:
        out.note(text, lead="Objective:", italic=True)

    def control(ref: str, title: str, text: str) -> None:
        out.heading(f"{ref} {title}", ref.count("."))
        out.plain_req(text, label=ref, cite=ref)

    def guidance(text: str) -> None:
        out.note(text, lead="Guidance:", small=True)

    out.heading("A.5 Information security policies", 1)
    out.heading("A.5.1 Management direction for information security", 2)
    objective(
        "To provide management direction and support for information security in accordance "
        "with business requirements and relevant laws and regulations."
    )
    control(
        "A.5.1.1",
        "Policies for information security",
        "A set of policies for information security shall be defined, approved by the Board, "
        "published and communicated to all employees and relevant external parties.",
    )
    control(
        "A.5.1.2",
        "Review of the policies for information security",
        "The information security policies are reviewed by the Head of Information Security at "
        "least once a year and whenever a significant change occurs.",
    )
    guidance(
        "Record the review in the policy's change log even when nothing is changed, so that "
        "the review can be shown to the certification auditor."
    )

    out.heading("A.6 Organization of information security", 1)
    out.heading("A.6.1 Internal organization", 2)
    control(
        "A.6.1.2",
        "Segregation of duties",
        "Conflicting duties and areas of responsibility shall be segregated; in particular, no "
        "one may approve their own access request or deploy their own code to production "
        "without review.",
    )
    out.heading("A.6.2 Mobile devices and teleworking", 2)
    control(
        "A.6.2.1",
        "Mobile device policy",
        "Mobile devices that access Kestrel e-mail or data are enrolled in mobile device "
        "management, which enforces a passcode, encryption and remote wipe.",
    )
    control(
        "A.6.2.2",
        "Teleworking",
        "Staff working remotely must connect through the Kestrel VPN or the zero-trust access "
        "client, and must not work on client data in public places where the screen can be "
        "overlooked.",
    )
    guidance(
        "A privacy screen filter is available from the IT service desk for staff who travel "
        "frequently."
    )

    out.heading("A.7 Human resource security", 1)
    out.heading("A.7.1 Prior to employment", 2)
    control(
        "A.7.1.1",
        "Screening",
        "Background verification checks on all candidates for employment shall be carried out "
        "before their start date, in proportion to the classification of the information they "
        "will access.",
    )
    out.heading("A.7.2 During employment", 2)
    control(
        "A.7.2.2",
        "Information security awareness, education and training",
        "All employees and contractors complete security awareness training during induction "
        "and annually thereafter; developers also complete secure coding training every year.",
    )
    out.heading("A.7.3 Termination and change of employment", 2)
    control(
        "A.7.3.1",
        "Termination or change of employment responsibilities",
        "Confidentiality obligations that remain valid after termination shall be explained to "
        "the employee or contractor at the exit interview and confirmed in writing.",
    )

    out.heading("A.8 Asset management", 1)
    out.heading("A.8.1 Responsibility for assets", 2)
    control(
        "A.8.1.1",
        "Inventory of assets",
        "An inventory of information assets and of the systems that hold them is maintained "
        "in the configuration management database, and each asset has a named owner.",
    )
    out.heading("A.8.3 Media handling", 2)
    control(
        "A.8.3.1",
        "Management of removable media",
        "Removable media shall be blocked on all company laptops by default; exceptions are "
        "approved by the Head of Information Security and limited to encrypted devices issued "
        "by IT.",
    )
    control(
        "A.8.3.2",
        "Disposal of media",
        "Dispose of media that have held client data only through the approved disposal "
        "contractor, and keep the certificate of destruction for six years.",
    )
    guidance(
        "The disposal contractor collects media from the London and Leeds offices on the first "
        "Monday of each month."
    )

    out.heading("A.9 Access control", 1)
    out.heading("A.9.2 User access management", 2)
    objective(
        "To ensure authorized user access and to prevent unauthorized access to systems and "
        "services."
    )
    control(
        "A.9.2.1",
        "User registration and de-registration",
        "Each user is given a unique user ID, and the accounts of leavers are disabled within "
        "four hours of the end of their employment.",
    )
    control(
        "A.9.2.3",
        "Management of privileged access rights",
        "The allocation and use of privileged access rights shall be restricted and controlled.",
    )
    control(
        "A.9.2.3.1",
        "Privileged account inventory",
        "The IT Operations Manager shall keep a list of all privileged accounts and confirm "
        "each month that every account on it is still needed.",
    )
    control(
        "A.9.2.3.2",
        "Break-glass accounts",
        "Emergency administrator accounts are kept in the password vault; their use raises an "
        "alert to the security team, and their passwords are changed after every use.",
    )
    control(
        "A.9.2.5",
        "Review of user access rights",
        "Asset owners shall review users' access rights at least every six months, and every "
        "three months for systems that hold client data.",
    )
    out.heading("A.9.4 System and application access control", 2)
    control(
        "A.9.4.2",
        "Secure log-on procedures",
        "Access to systems and applications is through single sign-on with multi-factor "
        "authentication; a system that cannot use single sign-on shall enforce multi-factor "
        "authentication itself.",
    )
    control(
        "A.9.4.3",
        "Password management system",
        "Password management systems shall be interactive and shall ensure quality passwords.",
    )
    control(
        "A.9.4.3.1",
        "Minimum password length",
        "Passwords are at least 14 characters long, and passwords that appear in known breach "
        "corpuses are rejected when they are set.",
    )
    guidance(
        "Passwords are not changed on a fixed schedule. Forced periodic changes lead users to "
        "choose weaker passwords."
    )
    control(
        "A.9.4.3.2",
        "Password managers",
        "Staff must store work passwords only in the company password manager.",
    )

    out.heading("A.10 Cryptography", 1)
    out.heading("A.10.1 Cryptographic controls", 2)
    control(
        "A.10.1.1",
        "Policy on the use of cryptographic controls",
        "Client data is encrypted at rest with AES-256 and in transit with TLS 1.2 or later.",
    )
    control(
        "A.10.1.2",
        "Key management",
        "Cryptographic keys shall be generated and stored in the cloud provider's key "
        "management service and rotated at least annually; keys must never be stored in source "
        "code repositories.",
    )

    out.heading("A.11 Physical and environmental security", 1)
    out.heading("A.11.2 Equipment", 2)
    control(
        "A.11.2.9",
        "Clear desk and clear screen policy",
        "Lock your screen when you leave your desk, and put away papers containing client data "
        "at the end of the day.",
    )

    out.heading("A.12 Operations security", 1)
    out.heading("A.12.3 Backup", 2)
    objective("To protect against loss of data.")
    out.heading("A.12.3.1 Information backup", 3)
    control(
        "A.12.3.1.1",
        "Backup frequency",
        "Production databases are backed up every four hours and file stores every day.",
    )
    control(
        "A.12.3.1.2",
        "Backup protection",
        "Backups are encrypted at rest, and at least one copy is kept in a separate cloud "
        "account to which production administrators have no write access.",
    )
    control(
        "A.12.3.1.3",
        "Restore testing",
        "The IT Operations team shall test the restoration of each production database at "
        "least once a quarter and record the result.",
    )
    out.heading("A.12.4 Logging and monitoring", 2)
    control(
        "A.12.4.1",
        "Event logging",
        "Security events from all production systems and from the identity provider shall be "
        "sent to the central log platform and kept for at least 13 months.",
    )
    guidance(
        "The log platform's retention is set to 400 days, which also covers the annual audit "
        "period."
    )
    out.heading("A.12.6 Technical vulnerability management", 2)
    control(
        "A.12.6.1",
        "Management of technical vulnerabilities",
        "Vulnerabilities rated critical shall be remediated within 7 days, and those rated high "
        "within 30 days, of their publication.",
    )

    out.heading("A.14 System acquisition, development and maintenance", 1)
    out.heading("A.14.2 Security in development and support processes", 2)
    control(
        "A.14.2.2",
        "System change control procedures",
        "Changes to production systems are made through the change management process, and "
        "every code change is reviewed and approved by a second developer before it is merged.",
    )
    out.heading("A.14.2.7 Outsourced development", 3)
    out.note(
        "Not applicable. Kestrel does not outsource software development; the exclusion is "
        "justified in the Statement of Applicability (ISMS-DOC-06)."
    )

    out.heading("A.16 Information security incident management", 1)
    out.heading("A.16.1 Management of information security incidents and improvements", 2)
    control(
        "A.16.1.2",
        "Reporting information security events",
        "Employees must report suspected security events to the security team through the "
        "#security-incidents channel or the security hotline immediately, and in any case "
        "within one hour.",
    )
    control(
        "A.16.1.5",
        "Response to information security incidents",
        "Incidents shall be handled in accordance with the documented incident response plan, "
        "and a post-incident review is held for every incident rated high or critical.",
    )

    out.heading("A.18 Compliance", 1)
    out.heading("A.18.1 Compliance with legal and contractual requirements", 2)
    control(
        "A.18.1.4",
        "Privacy and protection of personally identifiable information",
        "Personal data shall be processed only for the purposes recorded in the record of "
        "processing activities, and a data protection impact assessment is completed before "
        "any new processing of client personal data begins.",
    )

    furniture = ("ISMS-DOC-07 Annex A Control Set", "INTERNAL")
    layout = _Layout(
        tuple(out.blocks),
        header=(furniture[0], furniture[1]),
        footer="{page}",
    )
    return out.policy("annex", furniture, layout)


# --------------------------------------------------------------------------------------
# 3. charter: Meridian Hotels Group SE, data protection and security charter
# --------------------------------------------------------------------------------------


def _charter() -> BlindPolicy:
    out = _Writer()
    out.title("Data Protection and Information Security Charter of the Meridian Hotels Group")
    out.meta(
        "Meridian Hotels Group SE \u00b7 Ref. CH-DPS-2026 \u00b7 Adopted by the Executive "
        "Board on 3 February 2026"
    )

    out.note("THE EXECUTIVE BOARD OF MERIDIAN HOTELS GROUP SE,")
    out.note(
        "Having regard to Regulation (EU) 2016/679 of the European Parliament and of the "
        "Council (General Data Protection Regulation), and in particular Articles 5, 25 and 32 "
        "thereof,"
    )
    out.note(
        "Having regard to Directive (EU) 2022/2555 on measures for a high common level of "
        "cybersecurity across the Union,"
    )
    out.note(
        "Whereas the Group processes the personal data of several million guests each year, "
        "including identity document numbers and payment card data, and guests must be able to "
        "trust that their data is protected;"
    )
    out.note(
        "Whereas Article 32 of the General Data Protection Regulation requires controllers and "
        "processors to implement appropriate technical and organisational measures to ensure a "
        "level of security appropriate to the risk;"
    )
    out.note(
        "Whereas the hotels of the Group operate in eleven Member States and one set of rules "
        "shall apply to all of them;"
    )
    out.note("Whereas this Charter replaces the Group IT Security Guidelines of 2019,")
    out.note("HAS ADOPTED THIS CHARTER:")

    def article(number: int, title: str, paragraphs: list[str]) -> None:
        """An article whose paragraphs are requirements."""
        out.heading(f"Article {number} \u2013 {title}", 2)
        if len(paragraphs) == 1:
            out.plain_req(paragraphs[0], label=None, cite=f"Art. {number}")
        else:
            for index, text in enumerate(paragraphs, start=1):
                label = f"{number}.{index}\u00b0"
                out.req(label, text, cite=f"Art. {label}")

    def notes(number: int, title: str, paragraphs: list[str]) -> None:
        """An article whose paragraphs are not requirements."""
        out.heading(f"Article {number} \u2013 {title}", 2)
        if len(paragraphs) == 1:
            out.note(paragraphs[0])
        else:
            for index, text in enumerate(paragraphs, start=1):
                out.lead(f"{number}.{index}\u00b0", text)

    out.heading("Chapter I \u2013 General provisions", 1)
    notes(
        1,
        "Subject matter",
        [
            "This Charter lays down the rules that the Group, its hotels and its staff apply to "
            "protect personal data and the information systems of the Group."
        ],
    )
    notes(
        2,
        "Scope",
        [
            "This Charter applies to Meridian Hotels Group SE and to every company that it "
            "controls, including hotels operated under a management contract.",
            "It applies to all staff, including temporary and seasonal staff, and to "
            "processors acting on behalf of the Group.",
        ],
    )
    notes(
        3,
        "Definitions",
        [
            '"Personal data" has the meaning given in Article 4(1) of the General Data '
            "Protection Regulation.",
            '"Hotel system" means the property management, point-of-sale, key card and Wi-Fi '
            "systems of a hotel.",
            '"Data Protection Officer" means the Group Data Protection Officer appointed under '
            "Art. 9.",
        ],
    )

    out.heading("Chapter II \u2013 Principles", 1)
    article(
        4,
        "Lawfulness and data minimisation",
        [
            "Personal data shall be processed only for the purposes recorded in the Group's "
            "register of processing activities.",
            "Hotels collect only the guest data needed for the stay, for legal registration "
            "obligations and, where the guest has consented, for marketing.",
            "Copies of identity documents must not be kept after the registration obligations "
            "of the country concerned have been fulfilled.",
        ],
    )
    article(
        5,
        "Retention",
        [
            "Guest data is deleted or anonymised no later than three years after the guest's "
            "last stay, unless a longer period is required by law."
        ],
    )
    article(
        6,
        "Data protection by design",
        [
            "Any new application, or any significant change to an application, that processes "
            "personal data shall be assessed by the Data Protection Officer before it goes live."
        ],
    )

    out.heading("Chapter III \u2013 Security of processing", 1)
    article(
        7,
        "Access management",
        [
            "Access to hotel systems and to Group applications is granted according to the role "
            "of the member of staff and approved by the general manager of the hotel or the "
            "head of department.",
            "Every member of staff uses a personal account; the sharing of accounts, including "
            "front-desk accounts, is forbidden.",
            "Access rights shall be withdrawn on the last working day of a member of staff and, "
            "for seasonal staff, at the end of each season.",
            "Multi-factor authentication is required for remote access and for all "
            "administrator accounts.",
        ],
    )
    article(
        8,
        "Passwords and sessions",
        [
            "Passwords shall have at least 12 characters and shall not be written on paper or "
            "on the terminal.",
            "Reception terminals lock after five minutes of inactivity.",
        ],
    )
    article(
        9,
        "Data Protection Officer",
        [
            "The Group appoints a Data Protection Officer, who reports directly to the Executive "
            "Board and is consulted on every question relating to the protection of personal "
            "data."
        ],
    )
    article(
        10,
        "Payment card data",
        [
            "Payment card data shall be processed only by the certified payment terminals and "
            "the payment service provider; card numbers must never be written down or entered "
            "in the property management system.",
            "Hotels keep payment terminals where guests cannot reach them without staff "
            "supervision, and check them for tampering every week.",
        ],
    )
    article(
        11,
        "Encryption and backups",
        [
            "Personal data is encrypted when it is transmitted over public networks and when it "
            "is stored on laptops or removable media.",
            "Backups of hotel systems are made daily, encrypted and kept in a Group data centre "
            "outside the hotel.",
            "The Group IT department shall test the restoration of each hotel system at least "
            "once a year.",
        ],
    )
    article(
        12,
        "Guest Wi-Fi",
        [
            "The guest Wi-Fi network is separated from the networks of the hotel systems and of "
            "the payment terminals."
        ],
    )
    article(
        13,
        "Processors",
        [
            "Before a processor is engaged, the Data Protection Officer verifies that it offers "
            "sufficient guarantees, and a data processing agreement in accordance with Article "
            "28 of the General Data Protection Regulation is signed.",
            "Processors established outside the European Economic Area may be engaged only "
            "where the transfer is covered by an adequacy decision or by standard contractual "
            "clauses.",
        ],
    )

    out.heading("Chapter IV \u2013 Breaches and rights of data subjects", 1)
    article(
        14,
        "Personal data breaches",
        [
            "Staff shall report any suspected personal data breach to the Data Protection "
            "Officer immediately, and in any case within 24 hours.",
            "The Data Protection Officer notifies the competent supervisory authority of a "
            "breach reported under Art. 14.1\u00b0 within 72 hours of becoming aware of it, "
            "unless the breach is unlikely to result in a risk to the rights and freedoms of "
            "natural persons.",
            "Where a breach is likely to result in a high risk to their rights and freedoms, "
            "the guests concerned shall be informed without undue delay.",
        ],
    )
    article(
        15,
        "Requests from data subjects",
        [
            "Requests from guests to access, rectify or erase their data shall be forwarded to "
            "the Data Protection Officer within two working days and answered within one month."
        ],
    )

    out.heading("Chapter V \u2013 Final provisions", 1)
    notes(
        16,
        "Sanctions",
        [
            "Any breach of this Charter by a member of staff may give rise to disciplinary "
            "measures in accordance with the applicable labour law and internal rules."
        ],
    )
    article(
        17,
        "Review",
        [
            "The Data Protection Officer and the Chief Information Security Officer shall "
            "review this Charter every two years and propose any amendments to the Executive "
            "Board."
        ],
    )
    notes(
        18,
        "Entry into force",
        [
            "This Charter enters into force on 1 March 2026. It replaces the Group IT Security "
            "Guidelines of 12 September 2019."
        ],
    )

    out.sign("Done at Luxembourg, on 3 February 2026.")
    out.sign("For the Executive Board:")
    out.sign("\u00c9lodie Marchand, Chief Executive Officer")
    out.sign("Jonas Weber, Chief Financial Officer")

    furniture = ("Charter CH-DPS-2026",)
    layout = _Layout(
        tuple(out.blocks),
        header=None,
        footer=furniture[0] + "    Page {page} / {pages}",
        word_title=False,
        centred_headings=True,
        justify=True,
    )
    return out.policy("charter", furniture, layout)


# --------------------------------------------------------------------------------------
# Word
# --------------------------------------------------------------------------------------


def _docx_header(paragraph: Paragraph, left: str, right: str) -> None:
    """Left text, then the right text at the header's right-hand tab stop."""
    paragraph.add_run(left)
    if right:
        paragraph.add_run("\t\t" + right).bold = True


def _write_docx(layout: _Layout, out: Path) -> None:
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Cm, Pt

    document = docx.Document()
    section = document.sections[0]
    if layout.header:
        _docx_header(section.header.paragraphs[0], *layout.header)
    footer = section.footer.paragraphs[0]
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    _docx_footer(footer, layout.footer)

    for block in layout.blocks:
        if block.kind == "title":
            if layout.word_title:
                document.add_heading(block.text, 0)
            else:
                paragraph = document.add_paragraph()
                paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
                run = paragraph.add_run(block.text)
                run.bold = True
                run.font.size = Pt(16)
                paragraph.paragraph_format.space_after = Pt(6)
        elif block.kind == "meta":
            paragraph = document.add_paragraph()
            if not layout.word_title:
                paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
            run = paragraph.add_run(block.text)
            run.italic = True
            run.font.size = Pt(9)
        elif block.kind == "heading":
            heading = document.add_heading(block.text, block.level)
            if layout.centred_headings:
                heading.alignment = WD_ALIGN_PARAGRAPH.CENTER
        elif block.kind == "para":
            paragraph = document.add_paragraph()
            if layout.justify:
                paragraph.alignment = WD_ALIGN_PARAGRAPH.JUSTIFY
            if block.indent:
                paragraph.paragraph_format.left_indent = Cm(block.indent * layout.step_cm)
            size = Pt(9) if block.small else None
            if block.lead:
                lead = paragraph.add_run(block.lead)
                lead.bold = not block.lead_italic
                lead.italic = block.lead_italic
                lead.font.size = size
                paragraph.add_run(" " + block.text).font.size = size
            else:
                paragraph.add_run(block.text).font.size = size
        elif block.kind == "sign":
            paragraph = document.add_paragraph(block.text)
            paragraph.paragraph_format.space_before = Pt(12)
        else:  # item: the label typed in front of the text, the text wrapping back under it
            paragraph = document.add_paragraph()
            if layout.justify:
                paragraph.alignment = WD_ALIGN_PARAGRAPH.JUSTIFY
            if block.level:
                paragraph.paragraph_format.left_indent = Cm(block.level * layout.step_cm)
            paragraph.add_run((block.label or "") + " " + block.text)
    document.save(str(out))


# --------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------

_LINE = 5.2  # mm, body text at 10.5 pt


def _write_pdf(name: str, layout: _Layout, out: Path, outline: bool) -> None:
    from fpdf import FPDF

    class Document(FPDF):
        def header(self) -> None:
            if layout.header:
                left, right = layout.header
                self.set_font("helvetica", "", 8)
                self.set_text_color(90, 90, 90)
                self.cell(self.epw / 2, 5, left)
                if right:
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
    pdf.core_fonts_encoding = "windows-1252"  # dashes, middle dots, accents
    pdf.set_margins(22, 18, 22)
    pdf.set_auto_page_break(True, 22)
    pdf.set_title(name)
    pdf.add_page()
    body = "J" if layout.justify else "L"

    for block in layout.blocks:
        if block.kind == "title":
            pdf.set_font("helvetica", "B", 17 if layout.word_title else 15)
            pdf.multi_cell(0, 8, block.text, align="L" if layout.word_title else "C")
            pdf.ln(2)
        elif block.kind == "meta":
            pdf.set_font("helvetica", "I", 9)
            pdf.multi_cell(0, 4.5, block.text, align="L" if layout.word_title else "C")
            pdf.ln(3)
        elif block.kind == "heading":
            if pdf.get_y() > pdf.h - 50:
                pdf.add_page()
            pdf.ln(3 if block.level <= 2 else 1.5)
            if outline:
                pdf.start_section(block.text, level=block.level - 1)
            size = {1: 13.0, 2: 11.5}.get(block.level, 10.5)
            pdf.set_font("helvetica", "BI" if block.level >= 4 else "B", size)
            align = "C" if layout.centred_headings else "L"
            pdf.multi_cell(0, 7 if block.level <= 2 else 6, block.text, align=align)
            pdf.ln(1.5 if block.level <= 2 else 0.5)
        elif block.kind == "para":
            x = pdf.l_margin + block.indent * layout.step_mm
            size = 9.0 if block.small else 10.5
            line = 4.6 if block.small else _LINE
            if block.lead:
                margin = pdf.l_margin
                pdf.set_left_margin(x)
                pdf.set_x(x)
                pdf.set_font("helvetica", "I" if block.lead_italic else "B", size)
                pdf.write(line, block.lead)
                pdf.set_font("helvetica", size=size)
                pdf.write(line, " " + block.text)
                pdf.ln(line)
                pdf.set_left_margin(margin)
            else:
                pdf.set_font("helvetica", size=size)
                pdf.set_x(x)
                pdf.multi_cell(0, line, block.text, align=body)
            pdf.ln(2)
        elif block.kind == "sign":
            pdf.ln(4)
            pdf.set_font("helvetica", size=10.5)
            pdf.multi_cell(0, _LINE, block.text)
        else:  # item: the label typed in front of the text, the text wrapping back under it
            pdf.set_font("helvetica", size=10.5)
            pdf.set_x(pdf.l_margin + block.level * layout.step_mm)
            pdf.multi_cell(0, _LINE, (block.label or "") + " " + block.text, align=body)
            pdf.ln(2)
    pdf.output(str(out))


POLICIES: tuple[BlindPolicy, ...] = (_municipal(), _annex(), _charter())
