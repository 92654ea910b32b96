"""Three more security policies written "blind", in house styles that differ from those of
tests/blind_policies.py, for testing how documents are split into one item per requirement.

Like tests/blind_policies.py, these were written without reference to how the segmenter
works: each policy knows only what a careful human reader would say about it (which
paragraphs are requirements, how the document labels and cites them, which paragraphs are
not requirements, and which strings are running page furniture). `BlindPolicy.save` builds
the Word file (python-docx) or the PDF (fpdf2, core fonts) at test time.

House styles (`POLICIES`):

* ``university``: an IT acceptable-use and security policy. Word Heading 1 headings with a
  typed number ("3. Passwords and Authentication"); clauses typed by hand "3.1", a tab and
  the text; sub-items "a.", "b." on their own paragraphs under an introducing clause (each
  sub-item a requirement cited "3.3(a)", the introducing clause not). The sub-items of 3.3
  are typed, those of 6.2 use Word's automatic lettering (the letter is not in the paragraph
  text, Word prints it). Mixed wording (must, should, are expected to, will, is not permitted, plain
  imperatives). Numbered clauses that are not requirements (1.1 purpose, 9.1 sanctions),
  "Definitions" with bold terms, "Responsibility:" lines and a closing "Related policies:"
  paragraph.
* ``hospital``: an NHS trust's information security procedure. A revision-history table
  before the first section (it mentions "HS-3.2" but is not a requirement); sections
  "Standard 3 - Authentication and Smartcards" (Heading 1); requirements "HS-3.2" (bold
  label, tab, hanging indent), some followed by an indented "Implementation guidance:" or
  "Exception:" paragraph aligned with the requirement text (both notes); once the guidance
  heading stands alone on its line with the guidance in the next paragraph. PDF header with
  the document number and "CONFIDENTIAL", footer "Page N of M".
* ``supplier``: a manufacturer's security requirements for suppliers. No Word heading
  styles: headings are bold capitals in body text; requirements "[SUP-01]" at the start of
  the paragraph (cited "SUP-01", without brackets, as the document itself does); a
  self-assessment checklist of unlabelled requirements, each behind a "\u2610" box (a drawn
  square in the PDF); a closing "Acknowledgement" with signature lines (notes). Footer
  "SR-IS-03 Issue 5 - Uncontrolled when printed - Page N of M".

Tables are neither requirements nor notes: `notes` lists paragraphs only.
"""

from __future__ import annotations

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
    """One paragraph (or table) of a document, in reading order."""

    kind: str  # "title", "meta", "heading", "para", "item", "auto", "box", "table", "sign"
    text: str = ""
    label: str | None = None
    level: int = 1  # a heading's level; an item's indent depth (0 = flush)
    lead: str | None = None  # para: a run-in lead ("Exception:"), set bold or italic
    lead_italic: bool = False
    indent: bool = False  # para: indented to line up with the text of the items above
    list_id: int = 0  # auto: which Word list the item belongs to (each restarts at "a.")
    rows: tuple[tuple[str, ...], ...] = ()  # table: the first row is the heading row


@dataclass(frozen=True)
class _Layout:
    """How a house lays its documents out, and the document's blocks."""

    blocks: tuple[_Block, ...]
    header: tuple[str, str] | None  # left and right text of the running header
    footer: str  # may hold "{page}" and "{pages}"
    word_headings: bool = True  # False: bold capitals in body text
    word_title: bool = True  # False: a bold 16 pt paragraph instead of the Title style
    bold_label: bool = False
    label_cm: float = 1.3  # Word: width of the hanging indent
    label_mm: float = 12.0  # PDF: width of the label column
    step_cm: float = 1.3  # Word: extra indent per depth
    step_mm: float = 12.0  # PDF: extra indent per depth
    col_mm: tuple[float, ...] = ()  # PDF: table column widths


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
        self, text: str, lead: str | None = None, italic: bool = False, indent: bool = False
    ) -> None:
        """An unlabelled paragraph that is not a requirement, perhaps with a run-in lead
        ("Responsibility:") set in bold, or in italics."""
        self.blocks.append(_Block("para", text, lead=lead, lead_italic=italic, indent=indent))
        self.notes.append(f"{lead} {text}" if lead else text)

    def lead(self, label: str, text: str, depth: int = 0) -> None:
        """A labelled paragraph that is not a requirement (it introduces sub-items, or
        states a purpose)."""
        self.blocks.append(_Block("item", text, label=label, level=depth))
        self.notes.append(text)

    def req(self, label: str, text: str, cite: str | None = None, depth: int = 0) -> None:
        """A requirement whose label is typed in front of it."""
        self.blocks.append(_Block("item", text, label=label, level=depth))
        self.requirements.append(Expected(label, cite or label, text))

    def auto(self, label: str, text: str, cite: str, list_id: int) -> None:
        """A requirement in a Word automatically lettered list: Word prints `label`, the
        paragraph's text does not hold it."""
        self.blocks.append(_Block("auto", text, label=label, level=1, list_id=list_id))
        self.requirements.append(Expected(label, cite, text))

    def box(self, text: str) -> None:
        """A checklist line: a tick box, then an unlabelled requirement."""
        self.blocks.append(_Block("box", text))
        self.requirements.append(Expected(None, None, text))

    def table(self, rows: tuple[tuple[str, ...], ...]) -> None:
        self.blocks.append(_Block("table", rows=rows))

    def sign(self, text: str) -> None:
        """A signature line of a form (not a requirement)."""
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
# 1. university: Westmoor University, IT acceptable use and security policy (IT-POL-007)
# --------------------------------------------------------------------------------------


def _university() -> BlindPolicy:
    out = _Writer()
    out.title(
        "Westmoor University Information Technology Acceptable Use and Information Security "
        "Policy for Students, Staff and Visitors"
    )
    out.meta(
        "Policy number: IT-POL-007 | Version 2.3 | Approved by the University Executive Board "
        "on 14 January 2026 | Next review: January 2028"
    )

    out.heading("1. Purpose and Scope")
    out.lead(
        "1.1",
        "This policy sets out what the University expects of everyone who uses its IT "
        "facilities, and what users can expect from IT Services. It applies to all students, "
        "staff, honorary staff, contractors and visitors, wherever the facilities are used "
        "from.",
    )

    out.heading("2. Definitions")
    out.note(
        "any computer, network, software, cloud service, telephone or printer owned, leased "
        "or provided by the University, including University accounts.",
        lead="IT facilities:",
    )
    out.note(
        "information about an identifiable living person, as defined in the UK General Data "
        "Protection Regulation.",
        lead="Personal data:",
    )

    out.heading("3. Passwords and Authentication")
    out.req(
        "3.1",
        "Users must keep their University username and password confidential and must not "
        "allow anyone else to use their account.",
    )
    out.req(
        "3.2",
        "Multi-factor authentication must be set up on all staff accounts, and on student "
        "accounts before they are used from outside the University network.",
    )
    out.lead("3.3", "Passwords for University accounts must:")
    out.req("a.", "be at least 12 characters long;", cite="3.3(a)", depth=1)
    out.req(
        "b.",
        "not be the same as a password used for any non-University service; and",
        cite="3.3(b)",
        depth=1,
    )
    out.req(
        "c.",
        "be changed immediately if you suspect that someone else knows it.",
        cite="3.3(c)",
        depth=1,
    )
    out.req(
        "3.4",
        "IT Services will never ask for your password by email, by text message or over the "
        "telephone.",
    )
    out.note("IT Services (Identity and Access Management team).", lead="Responsibility:")

    out.heading("4. Acceptable Use of IT Facilities")
    out.req(
        "4.1",
        "University IT facilities are provided for study, teaching, research and University "
        "business. Reasonable personal use is permitted provided it does not interfere with "
        "work or study, or with other users.",
    )
    out.req(
        "4.2",
        "Users must not use University IT facilities to create, store or send material that is "
        "unlawful, defamatory, discriminatory or that promotes terrorism.",
    )
    out.req(
        "4.3",
        "Do not connect network switches, wireless access points or routers to the University "
        "network without the written agreement of IT Services.",
    )
    out.req(
        "4.4",
        "Staff and students are expected to lock their screen whenever they leave a computer "
        "unattended, even for a short time.",
    )
    out.req(
        "4.5",
        "Software on University-managed computers is installed by IT Services or from the "
        "Software Centre; users should not install software from other sources.",
    )

    out.heading("5. Email and Messaging")
    out.req(
        "5.1",
        "Staff must use their University email account, not a personal account, for all "
        "University business.",
    )
    out.req(
        "5.2",
        "Automatic forwarding of University email to an external email service is not permitted.",
    )
    out.req(
        "5.3",
        "Emails containing personal data should be sent only to people who need the "
        "information, and attachments holding special category data should be shared through "
        "a OneDrive link restricted to the named recipients.",
    )
    out.req(
        "5.4",
        "If you receive a suspicious email, report it with the Report Phishing button and do "
        "not click on its links or open its attachments.",
    )

    out.heading("6. Data Protection and Storage")
    out.req(
        "6.1",
        "Confidential information and personal data must be stored on University-approved "
        "storage (OneDrive, SharePoint or a School network drive), not on the local disk of a "
        "computer.",
    )
    out.lead(
        "6.2",
        "Researchers who collect special category data, for example health or ethnicity data, "
        "must:",
    )
    out.auto(
        "a.",
        "register the dataset with the Research Data Service before collection begins;",
        cite="6.2(a)",
        list_id=1,
    )
    out.auto(
        "b.",
        "keep the data only in the Secure Research Environment; and",
        cite="6.2(b)",
        list_id=1,
    )
    out.auto(
        "c.",
        "delete or anonymise the data at the end of the retention period approved by the "
        "Research Ethics Committee.",
        cite="6.2(c)",
        list_id=1,
    )
    out.req(
        "6.3",
        "USB memory sticks and other removable media must not be used to hold confidential "
        "information unless they are encrypted.",
    )
    out.note(
        "Information Asset Owners for their datasets; the Data Protection Officer for advice.",
        lead="Responsibility:",
    )

    out.heading("7. Devices and Remote Working")
    out.req(
        "7.1",
        "University laptops will be encrypted and enrolled in device management by IT "
        "Services before they are issued.",
    )
    out.req(
        "7.2",
        "Personally owned devices used to access University email must have a screen lock and "
        "an operating system that still receives security updates.",
    )
    out.req("7.3", "Use the University VPN to reach internal systems from off campus.")
    out.req(
        "7.4",
        "Do not use public computers, such as those in libraries or internet caf\u00e9s, to "
        "access systems that hold personal data.",
    )

    out.heading("8. Reporting Incidents")
    out.req(
        "8.1",
        "Report lost or stolen devices, suspected account compromise and any other security "
        "incident to the IT Service Desk as soon as possible, and in any case within 24 hours.",
    )
    out.req(
        "8.2",
        "Heads of School will make sure that incidents involving personal data are also "
        "reported to the Data Protection Officer.",
    )

    out.heading("9. Compliance")
    out.lead(
        "9.1",
        "Breaches of this policy may be dealt with under the Student Disciplinary Regulations "
        "or the staff disciplinary procedure, and access to IT facilities may be suspended "
        "while a breach is investigated.",
    )
    out.req(
        "9.2",
        "Requests for an exception to this policy must be made to the Chief Information "
        "Security Officer on the exception request form.",
    )
    out.note(
        "Information Security Policy (IT-POL-001); Data Protection Policy (GOV-POL-012); "
        "Monitoring Code of Practice; Student Disciplinary Regulations.",
        lead="Related policies:",
    )

    furniture = ("Westmoor University \u2013 IT Services", "IT-POL-007 Version 2.3")
    layout = _Layout(
        tuple(out.blocks),
        header=(furniture[0], ""),
        footer=furniture[1] + "  \u00b7  Page {page}",
        label_cm=1.25,
        label_mm=11.0,
        step_cm=1.25,
        step_mm=11.0,
    )
    return out.policy("university", furniture, layout)


# --------------------------------------------------------------------------------------
# 2. hospital: Fenwick Valley Hospitals NHS Foundation Trust, procedure IG-PRO-0412
# --------------------------------------------------------------------------------------


def _hospital() -> BlindPolicy:
    out = _Writer()
    out.title(
        "Information Security Procedure: Access to and Protection of Patient Information Systems"
    )
    out.meta(
        "Fenwick Valley Hospitals NHS Foundation Trust \u00b7 Document number IG-PRO-0412 "
        "\u00b7 Version 4.1 \u00b7 Approved by the Information Governance Steering Group, "
        "21 January 2026 \u00b7 Review date January 2028"
    )
    out.heading("Revision history", 2)
    out.table(
        (
            ("Version", "Date", "Author", "Summary of changes"),
            (
                "3.0",
                "02/2023",
                "Information Governance Manager",
                "Rewritten to align with the Data Security and Protection Toolkit.",
            ),
            (
                "4.0",
                "06/2025",
                "Head of Cyber Security",
                "Standard 5 (clinical devices and networks) added.",
            ),
            (
                "4.1",
                "01/2026",
                "Head of Cyber Security",
                "HS-3.2: session lock reduced from 30 to 15 minutes; theatre exception added.",
            ),
        )
    )

    out.heading("Purpose and scope")
    out.note(
        "This procedure sets the minimum standards for access to, and protection of, the "
        "Trust's clinical information systems and the patient information they hold. It "
        "applies to all staff, including bank, agency and locum staff, students on placement, "
        "volunteers and suppliers who access Trust systems."
    )

    def req(label: str, text: str) -> None:
        out.req(label, text)

    def guidance(text: str) -> None:
        out.note(text, lead="Implementation guidance:", italic=True, indent=True)

    def exception(text: str) -> None:
        out.note(text, lead="Exception:", italic=True, indent=True)

    out.heading("Standard 1 \u2013 Governance and Accountability")
    req(
        "HS-1.1",
        "Every clinical information system must have a named Information Asset Owner (IAO) at "
        "divisional director level, and an Information Asset Administrator who manages "
        "day-to-day access.",
    )
    req(
        "HS-1.2",
        "The IAO will make sure that a data protection impact assessment is completed before a "
        "new system goes live, or before an existing system is changed in a way that affects "
        "patient data.",
    )
    req(
        "HS-1.3",
        "All staff must complete the annual Data Security Awareness training. Access to "
        "clinical systems is suspended when a member of staff's training is more than 13 "
        "months old.",
    )
    guidance(
        "Training compliance is reported monthly to divisional boards. Line managers receive "
        "a reminder 30 days before a member of staff's training expires."
    )

    out.heading("Standard 2 \u2013 User Registration and Access Rights")
    req(
        "HS-2.1",
        "Access to clinical systems is to be requested on the electronic Registration "
        "Authority form and approved by the member of staff's line manager.",
    )
    req(
        "HS-2.2",
        "Access rights must match the role profile of the member of staff; any additional "
        "rights require the approval of the IAO.",
    )
    guidance(
        "Role profiles for nursing, medical, allied health professional and administrative "
        "posts are maintained by the Registration Authority team. A locum doctor is given the "
        "role profile of the post they are covering."
    )
    req(
        "HS-2.3",
        "The accounts of leavers must be disabled on their last working day, and the accounts "
        "of staff on long-term leave after 90 days of absence.",
    )
    req(
        "HS-2.4",
        "Information Asset Administrators will review the active users of their systems every "
        "quarter and remove access that is no longer needed.",
    )

    out.heading("Standard 3 \u2013 Authentication and Smartcards")
    req(
        "HS-3.1",
        "Staff must log in to clinical systems with their own smartcard and passcode, and must "
        "never let a colleague work under their login.",
    )
    req(
        "HS-3.2",
        "Shared clinical workstations will lock the session after 15 minutes of inactivity, "
        "or as soon as the smartcard is removed.",
    )
    guidance(
        "Tap-and-go readers let clinicians unlock a session in a few seconds, so a short "
        "timeout does not slow down ward rounds. Timeouts are configured centrally and cannot "
        "be changed on the ward."
    )
    exception(
        "In operating theatres and resuscitation areas, anaesthetic and monitoring workstations "
        "may stay unlocked for the duration of a procedure."
    )
    req(
        "HS-3.3",
        "Remote access to clinical systems requires multi-factor authentication with the "
        "Trust's approved authenticator app.",
    )
    req(
        "HS-3.4",
        "A lost or stolen smartcard must be reported to the Registration Authority on the same "
        "day, so that its certificate can be revoked.",
    )

    out.heading("Standard 4 \u2013 Audit of Access to Patient Records")
    req(
        "HS-4.1",
        "Clinical systems must record every access to a patient record, including the user, "
        "the date and time, and the part of the record that was viewed or changed.",
    )
    req("HS-4.2", "Audit records are to be kept for at least eight years.")
    req(
        "HS-4.3",
        "The Privacy Officer will investigate alerts about access to the records of staff, of "
        "their relatives and of patients with a high public profile within five working days.",
    )

    out.heading("Standard 5 \u2013 Clinical Devices and Networks")
    req(
        "HS-5.1",
        "Medical devices that connect to the Trust network must be registered with Clinical "
        "Engineering and placed on the segregated medical device network.",
    )
    req(
        "HS-5.2",
        "Before a networked medical device is bought, Procurement will obtain the "
        "manufacturer's MDS2 security disclosure form and send it to the Cyber Security team "
        "for review.",
    )
    req(
        "HS-5.3",
        "Security patches for medical devices are only to be installed after the manufacturer "
        "has validated them (see HS-5.1 for registration).",
    )
    guidance(
        "Where the manufacturer does not supply patches, Clinical Engineering records the "
        "device on the risk register and agrees compensating controls, such as network "
        "isolation, with the Cyber Security team."
    )
    req(
        "HS-5.4",
        "Personal devices must not be connected to the clinical network; staff and visitors "
        "use the Trust's guest Wi-Fi instead.",
    )

    out.heading("Standard 6 \u2013 Sharing and Transfer of Patient Information")
    req(
        "HS-6.1",
        "Patient identifiable information sent outside the Trust by e-mail must be sent from "
        "an NHSmail account to an address that meets the DCB1596 secure e-mail standard.",
    )
    req(
        "HS-6.2",
        "Bulk extracts of patient data require a data sharing agreement approved by the "
        "Caldicott Guardian before the first transfer.",
    )
    exception(
        "Disclosures required by law, for example to the coroner or under a court order, are "
        "handled by the Legal Services team under its own procedure."
    )
    req(
        "HS-6.3",
        "Patients and patient information must not be photographed or recorded on personal "
        "mobile phones.",
    )

    out.heading("Standard 7 \u2013 Incidents and Business Continuity")
    req(
        "HS-7.1",
        "Staff must report suspected data security incidents on Datix within 24 hours of "
        "becoming aware of them.",
    )
    req(
        "HS-7.2",
        "The Data Protection Officer will decide within 72 hours whether an incident is to be "
        "reported to the Information Commissioner's Office through the Toolkit.",
    )
    req(
        "HS-7.3",
        "Each clinical system will have a business continuity plan that describes how care "
        "continues during an outage, and every ward will test its downtime procedure at least "
        "once a year.",
    )
    out.note("Implementation guidance:", indent=True)
    out.note(
        "Downtime packs with paper forms and read-only patient lists are kept in every ward "
        "office. The lists are refreshed every four hours by the Business Intelligence team.",
        indent=True,
    )

    furniture = (
        "IG-PRO-0412 Information Security Procedure",
        "CONFIDENTIAL",
        "Fenwick Valley Hospitals NHS Foundation Trust",
    )
    layout = _Layout(
        tuple(out.blocks),
        header=(furniture[0], furniture[1]),
        footer=furniture[2] + "    Page {page} of {pages}",
        bold_label=True,
        label_cm=1.8,
        label_mm=17.0,
        col_mm=(16.0, 18.0, 48.0, 84.0),
    )
    return out.policy("hospital", furniture, layout)


# --------------------------------------------------------------------------------------
# 3. supplier: Ashcombe Precision Components, requirements for suppliers (SR-IS-03)
# --------------------------------------------------------------------------------------


def _supplier() -> BlindPolicy:
    out = _Writer()
    out.title(
        "Ashcombe Precision Components Ltd \u2013 Information Security Requirements for Suppliers"
    )
    out.meta(
        "Document SR-IS-03 \u00b7 Issue 5 \u00b7 March 2026 \u00b7 Owner: Group IT Security "
        "and Purchasing"
    )
    out.note(
        "These requirements form part of every purchase order and framework agreement under "
        "which a supplier receives Ashcombe drawings, specifications or other information, or "
        "has access to Ashcombe systems or sites. Requirements are referred to by their "
        "identifier, for example SUP-07, in audit reports and in the supplier portal."
    )
    counter = iter(range(1, 100))

    def req(text: str) -> None:
        number = next(counter)
        out.req(f"[SUP-{number:02d}]", text, cite=f"SUP-{number:02d}")

    out.heading("GOVERNANCE AND CONTACTS")
    req(
        "The Supplier shall appoint a named contact for information security and inform "
        "Ashcombe Purchasing of any change of contact within 10 working days."
    )
    req(
        "The Supplier shall hold a valid ISO/IEC 27001 certificate or a TISAX assessment label "
        "at assessment level 2 or higher covering the sites that handle Ashcombe information."
    )
    req(
        "Subcontractors that will process Ashcombe information must be approved in writing by "
        "Ashcombe before they start work, and bound by obligations equivalent to these "
        "requirements."
    )

    out.heading("PROTECTION OF ASHCOMBE INFORMATION")
    req(
        "Technical drawings, CAD models and specifications provided by Ashcombe are "
        "confidential and shall be used only for the order for which they were provided."
    )
    req(
        "CAD data shall be exchanged only through the Ashcombe supplier portal; drawings must "
        "not be sent as e-mail attachments."
    )
    out.note(
        "Note: The supplier portal encrypts files in transit and at rest and records every "
        "download, so Ashcombe can show its customers who has received a drawing."
    )
    req(
        "At the end of the contract the Supplier shall return or securely delete all Ashcombe "
        "information within 30 days and confirm the deletion in writing."
    )
    req(
        "Printed drawings on the shop floor should be collected at the end of each shift and "
        "kept in a locked cabinet."
    )

    out.heading("ACCESS TO ASHCOMBE SYSTEMS AND SITES")
    req(
        "Supplier personnel who need access to Ashcombe systems receive personal accounts. "
        "Accounts shall not be shared."
    )
    req(
        "Remote maintenance of Ashcombe machines and production systems is only permitted "
        "through the Ashcombe remote access gateway, and each session must be booked in "
        "advance with the plant's maintenance planner."
    )
    req(
        "Supplier staff on Ashcombe sites shall wear their visitor badge visibly and follow "
        "the instructions of site security."
    )
    req(
        "Laptops and USB devices brought onto Ashcombe sites must be scanned at the security "
        "desk before they are connected to any machine or network."
    )

    out.heading("OPERATIONAL SECURITY")
    req("The Supplier shall install security patches on internet-facing systems within 14 days.")
    req(
        "Systems that store Ashcombe information shall run supported operating systems and "
        "up-to-date anti-malware software."
    )
    req(
        "Ashcombe order and quality data is backed up daily by the Supplier, with at least one "
        "copy kept offline."
    )
    req(
        "Firmware and software delivered with machines or components shall be free of known "
        "malware and listed in a software bill of materials supplied with the delivery."
    )

    out.heading("SECURITY INCIDENTS")
    req(
        "The Supplier shall notify Ashcombe of any security incident that affects Ashcombe "
        "information or deliveries within 24 hours, by e-mail to security@ashcombe-pc.example "
        "and by telephone to the Purchasing contact."
    )
    req(
        "The Supplier must support Ashcombe's investigation of an incident and provide logs "
        "and reports on request."
    )

    out.heading("AUDIT")
    req(
        "Ashcombe may audit the Supplier's compliance with these requirements once a year with "
        "10 working days' notice, or at any time after a security incident."
    )

    out.heading("SUPPLIER SELF-ASSESSMENT CHECKLIST")
    out.note(
        "Tick each box to confirm that the measure is in place, and return the completed "
        "checklist with the signed acknowledgement below."
    )
    out.box(
        "All employees who handle Ashcombe information have signed a confidentiality agreement."
    )
    out.box(
        "Multi-factor authentication is enabled for e-mail and for all remote access to the "
        "Supplier's network."
    )
    out.box("Administrator accounts are separate from the accounts used for everyday work.")
    out.box(
        "Employees have completed security awareness training, including phishing, in the last "
        "12 months."
    )
    out.box("An incident response plan names who contacts Ashcombe in the event of an incident.")
    out.box(
        "Ashcombe drawings are stored in a folder that only the staff working on Ashcombe "
        "orders can open."
    )
    out.box("Old computers and hard disks are wiped or destroyed before disposal.")

    out.heading("ACKNOWLEDGEMENT")
    out.note(
        "By signing below, the Supplier confirms that it has read these requirements and will "
        "comply with them for the duration of its business with Ashcombe."
    )
    out.sign("Signed for and on behalf of the Supplier: ______________________________")
    out.sign("Name and position: ____________________________    Date: ______________")

    furniture = ("SR-IS-03 Issue 5", "Uncontrolled when printed")
    layout = _Layout(
        tuple(out.blocks),
        header=None,
        footer="SR-IS-03 Issue 5 \u2013 Uncontrolled when printed \u2013 Page {page} of {pages}",
        word_headings=False,
        word_title=False,
        label_cm=2.0,
        label_mm=19.0,
    )
    return out.policy("supplier", furniture, layout)


# --------------------------------------------------------------------------------------
# Word
# --------------------------------------------------------------------------------------

_ABSTRACT_ID = 40  # well above the template's own list definitions


def _lettered_lists(document: WordDocument, layout: _Layout) -> dict[int, int]:
    """Define a Word "a., b., c." list, as Word stores it, and one numbering instance per
    list in the document (each restarting at "a."); return list_id -> numId."""
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    list_ids = sorted({block.list_id for block in layout.blocks if block.kind == "auto"})
    if not list_ids:
        return {}
    numbering = document.part.numbering_part.element
    left = round((layout.step_cm + layout.label_cm) * 567)
    hanging = round(layout.label_cm * 567)
    abstract = parse_xml(
        f'<w:abstractNum {nsdecls("w")} w:abstractNumId="{_ABSTRACT_ID}">'
        '<w:multiLevelType w:val="hybridMultilevel"/>'
        '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/>'
        '<w:lvlText w:val="%1."/><w:lvlJc w:val="left"/>'
        f'<w:pPr><w:ind w:left="{left}" w:hanging="{hanging}"/></w:pPr></w:lvl>'
        "</w:abstractNum>"
    )
    first_num = numbering.num_lst[0] if numbering.num_lst else None
    if first_num is not None:
        first_num.addprevious(abstract)
    else:
        numbering.append(abstract)
    used = {num.numId for num in numbering.num_lst}
    found: dict[int, int] = {}
    for list_id in list_ids:
        num_id = max(used | set(found.values())) + 1
        numbering.append(
            parse_xml(
                f'<w:num {nsdecls("w")} w:numId="{num_id}">'
                f'<w:abstractNumId w:val="{_ABSTRACT_ID}"/>'
                '<w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride>'
                "</w:num>"
            )
        )
        found[list_id] = num_id
    return found


def _docx_header(paragraph: Paragraph, left: str, right: str) -> None:
    """Left text, then the right text at the header's right-hand tab stop."""
    paragraph.add_run(left)
    if right:
        paragraph.add_run("\t\t" + right).bold = True


def _write_docx(layout: _Layout, out: Path) -> None:
    import docx
    from docx.shared import Cm, Pt

    document = docx.Document()
    section = document.sections[0]
    if layout.header:
        _docx_header(section.header.paragraphs[0], *layout.header)
    _docx_footer(section.footer.paragraphs[0], layout.footer)
    lists = _lettered_lists(document, layout)

    for block in layout.blocks:
        if block.kind == "title":
            if layout.word_title:
                document.add_heading(block.text, 0)
            else:
                paragraph = document.add_paragraph()
                run = paragraph.add_run(block.text)
                run.bold = True
                run.font.size = Pt(16)
                paragraph.paragraph_format.space_after = Pt(6)
        elif block.kind == "meta":
            paragraph = document.add_paragraph()
            run = paragraph.add_run(block.text)
            run.italic = True
            run.font.size = Pt(9)
        elif block.kind == "heading":
            if layout.word_headings:
                document.add_heading(block.text, block.level)
            else:
                paragraph = document.add_paragraph()
                fmt = paragraph.paragraph_format
                fmt.space_before = Pt(14)
                fmt.space_after = Pt(4)
                fmt.keep_with_next = True
                run = paragraph.add_run(block.text)
                run.bold = True
                run.font.size = Pt(11)
        elif block.kind == "para":
            paragraph = document.add_paragraph()
            if block.indent:
                paragraph.paragraph_format.left_indent = Cm(layout.label_cm)
            if block.lead:
                lead = paragraph.add_run(block.lead)
                lead.bold = not block.lead_italic
                lead.italic = block.lead_italic
                if block.text:
                    paragraph.add_run(" " + block.text)
            else:
                paragraph.add_run(block.text)
        elif block.kind == "sign":
            paragraph = document.add_paragraph(block.text)
            paragraph.paragraph_format.space_before = Pt(18)
        elif block.kind == "table":
            table = document.add_table(rows=0, cols=len(block.rows[0]))
            table.style = document.styles["Table Grid"]
            for index, row in enumerate(block.rows):
                cells = table.add_row().cells
                for cell, text in zip(cells, row, strict=True):
                    cell.text = ""
                    cell.paragraphs[0].add_run(text).bold = index == 0
            document.add_paragraph()
        elif block.kind == "auto":
            paragraph = document.add_paragraph(block.text, style="List Paragraph")
            num_pr = paragraph._p.get_or_add_pPr().get_or_add_numPr()
            num_pr.get_or_add_ilvl().val = 0
            num_pr.get_or_add_numId().val = lists[block.list_id]
        elif block.kind == "box":
            paragraph = document.add_paragraph()
            fmt = paragraph.paragraph_format
            fmt.left_indent = Cm(0.8)
            fmt.first_line_indent = Cm(-0.8)
            fmt.tab_stops.add_tab_stop(Cm(0.8))
            box = paragraph.add_run("\u2610")
            box.font.name = "MS Gothic"
            paragraph.add_run("\t" + block.text)
        else:  # item: a typed label, a tab, the text, in a hanging indent
            paragraph = document.add_paragraph()
            fmt = paragraph.paragraph_format
            stop = Cm(block.level * layout.step_cm + layout.label_cm)
            fmt.left_indent = stop
            fmt.first_line_indent = Cm(-layout.label_cm)
            fmt.tab_stops.add_tab_stop(stop)
            label = paragraph.add_run(block.label or "")
            label.bold = layout.bold_label
            paragraph.add_run("\t" + block.text)
    document.save(str(out))


# --------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------

_LINE = 5.2  # mm, body text at 10.5 pt


def _pdf_run_in(pdf: FPDF, x: float, lead: str, italic: bool, text: str) -> None:
    """A paragraph starting with a bold or italic lead, its lines wrapping back to `x`."""
    margin = pdf.l_margin
    pdf.set_left_margin(x)
    pdf.set_x(x)
    pdf.set_font("helvetica", "I" if italic else "B", 10.5)
    pdf.write(_LINE, lead)
    if text:
        pdf.set_font("helvetica", size=10.5)
        pdf.write(_LINE, " " + text)
    pdf.ln(_LINE)
    pdf.set_left_margin(margin)


def _pdf_table(pdf: FPDF, rows: tuple[tuple[str, ...], ...], widths: tuple[float, ...]) -> None:
    pdf.set_font("helvetica", size=9)
    with pdf.table(
        col_widths=widths or None,
        width=sum(widths) if widths else None,
        align="LEFT",
        text_align="LEFT",
        line_height=4.6,
        first_row_as_headings=True,
    ) as table:
        for row in rows:
            cells = table.row()
            for text in row:
                cells.cell(text)
    pdf.ln(4)


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

    for block in layout.blocks:
        if block.kind == "title":
            pdf.set_font("helvetica", "B", 17 if layout.word_title else 15)
            pdf.multi_cell(0, 8, block.text)
            pdf.ln(2)
        elif block.kind == "meta":
            pdf.set_font("helvetica", "I", 9)
            pdf.multi_cell(0, 4.5, block.text)
            pdf.ln(3)
        elif block.kind == "heading":
            if pdf.get_y() > pdf.h - 50:
                pdf.add_page()
            pdf.ln(3)
            if outline:
                pdf.start_section(block.text, level=block.level - 1)
            if layout.word_headings:
                pdf.set_font("helvetica", "B", 13 if block.level == 1 else 11.5)
                pdf.multi_cell(0, 7, block.text)
            else:
                pdf.set_font("helvetica", "B", 11)
                pdf.multi_cell(0, 6, block.text)
            pdf.ln(1.5)
        elif block.kind == "para":
            x = pdf.l_margin + (layout.label_mm if block.indent else 0.0)
            if block.lead:
                _pdf_run_in(pdf, x, block.lead, block.lead_italic, block.text)
            else:
                pdf.set_font("helvetica", size=10.5)
                pdf.set_x(x)
                pdf.multi_cell(0, _LINE, block.text)
            pdf.ln(2)
        elif block.kind == "sign":
            pdf.ln(6)
            pdf.set_font("helvetica", size=10.5)
            pdf.multi_cell(0, _LINE, block.text)
        elif block.kind == "table":
            _pdf_table(pdf, block.rows, layout.col_mm)
        elif block.kind == "box":
            pdf.set_font("helvetica", size=10.5)
            if pdf.get_y() + _LINE > pdf.page_break_trigger:
                pdf.add_page()
            y = pdf.get_y()
            pdf.rect(pdf.l_margin + 0.5, y + 0.9, 3.4, 3.4)
            pdf.set_x(pdf.l_margin + 8.0)
            pdf.multi_cell(0, _LINE, block.text)
            pdf.ln(1.5)
        else:  # item or auto: the label in its column, the text wrapping under the text
            pdf.set_x(pdf.l_margin + block.level * layout.step_mm)
            bold = layout.bold_label and block.kind == "item"
            pdf.set_font("helvetica", "B" if bold else "", 10.5)
            pdf.cell(layout.label_mm, _LINE, block.label or "")
            pdf.set_font("helvetica", size=10.5)
            pdf.multi_cell(0, _LINE, block.text)
            pdf.ln(2)
    pdf.output(str(out))


POLICIES: tuple[BlindPolicy, ...] = (_university(), _hospital(), _supplier())
