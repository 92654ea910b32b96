"""Security policies written "blind", in the house styles real organisations use, for testing
how documents are split into one item per requirement.

The documents were written without reference to how the segmenter works: each policy knows
only what a careful human reader would say about it (which paragraphs are requirements, how
the document labels and cites them, which paragraphs are not requirements, and which strings
are running page furniture). Nothing binary is committed: `BlindPolicy.save` builds the Word
file (python-docx) or the PDF (fpdf2, core fonts) at test time.

House styles (`POLICIES`):

* ``logistics``: ISP-01, Roman-numeral topics (Heading 1) and hand-typed clause labels
  ("IV.a", a tab, the text, with a hanging indent); mixed wording (shall, must, will, "is
  required to", plain present tense); Purpose, Scope, Definitions, "Note:" and "Example:"
  paragraphs between the clauses; a running header and footer in the PDF.
* ``agency``: a government template, "Section 3 - Identification and Authentication",
  clauses "3.1", "3.2"; some clauses only introduce sub-clauses "(a)", "(b)" (each sub-clause
  is a requirement cited "3.2(a)", the introducing line is not); "OFFICIAL" header and
  "Page N of M" footer.
* ``saas``: an engineering security standard, requirements "R-01" ... (bold label inline, the
  text wrapping back to the margin), plain imperatives, bulleted lists under an unlabelled
  lead-in (each bullet a requirement with no label), "Why:" and "Example:" paragraphs.
* ``bank``: a bank's regulation, articles "Art. 4 Access management" set as bold body text
  (no Word heading styles), numbered paragraphs "(1)", "(2)" cited "Art. 4(1)"; an article
  with a single paragraph carries no number (cited "Art. 5").

`version_two()` gives version 2.0 of the logistics policy, edited as a person edits it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docx.text.paragraph import Paragraph

__all__ = ["POLICIES", "BlindPolicy", "Expected", "version_two"]


@dataclass(frozen=True)
class Expected:
    """One requirement as a reader of the document would list it."""

    label: str | None
    """The label printed before the requirement ("IV.a", "(b)", "R-07"); None if none."""
    cite: str | None
    """How the document itself would cite it ("3.2(b)", "Art. 4(1)"); else the label."""
    text: str
    """The requirement's full text, without its label."""


@dataclass(frozen=True)
class _Block:
    """One paragraph of a document, in reading order."""

    kind: str  # "title", "meta", "heading", "para", "item", "bullet"
    text: str
    label: str | None = None
    level: int = 1  # a heading's level; an item's or bullet's indent depth (0 = flush)


@dataclass(frozen=True)
class _Style:
    """How a house lays its documents out."""

    header: str | None
    footer: str  # may hold "{page}" and "{pages}"
    word_headings: bool = True  # Word heading styles; False: bold body-text paragraphs
    centred_headings: bool = False
    hanging: bool = True  # label in a hanging indent; False: label inline, text wraps back
    label_sep: str = "\t"  # between label and text in Word
    label_cm: float = 1.5  # Word: width of the hanging indent
    label_mm: float = 14.0  # PDF: width of the label column
    step_cm: float = 1.0  # Word: extra indent per depth
    step_mm: float = 10.0  # PDF: extra indent per depth
    bold_label: bool = False


@dataclass(frozen=True)
class BlindPolicy:
    name: str
    requirements: tuple[Expected, ...]
    notes: tuple[str, ...]
    furniture: tuple[str, ...]
    blocks: tuple[_Block, ...] = field(default=(), repr=False, compare=False)
    style: _Style = field(default=_Style(None, ""), repr=False, compare=False)

    def save(self, kind: str, folder: Path) -> Path:
        """Write the policy as ``docx``, ``pdf`` (with a bookmark outline) or ``bare.pdf``
        (no outline) into `folder`; return the path written."""
        return saved(self.name, kind, folder, partial(_write_docx, self), partial(_write_pdf, self))


def saved(
    name: str,
    kind: str,
    folder: Path,
    docx: Callable[[Path], None],
    pdf: Callable[[Path, bool], None],
) -> Path:
    """A blind policy written as ``docx``, ``pdf`` (with a bookmark outline) or
    ``bare.pdf`` (no outline) into `folder` by its module's writers; the path written."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{name}.{kind}"
    if kind == "docx":
        docx(out)
    elif kind in ("pdf", "bare.pdf"):
        pdf(out, kind == "pdf")
    else:
        raise ValueError(f"unknown kind {kind!r}: use 'docx', 'pdf' or 'bare.pdf'")
    return out


class _Writer:
    """Collects a document's paragraphs and, alongside, what a reader expects of them."""

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

    def note(self, text: str) -> None:
        """An unlabelled paragraph that is not a requirement."""
        self.blocks.append(_Block("para", text))
        self.notes.append(text)

    def lead(self, label: str, text: str, depth: int = 0) -> None:
        """A labelled paragraph that is not a requirement (it introduces sub-clauses, or
        states a purpose)."""
        self.blocks.append(_Block("item", text, label=label, level=depth))
        self.notes.append(text)

    def req(self, label: str, text: str, cite: str | None = None, depth: int = 0) -> None:
        self.blocks.append(_Block("item", text, label=label, level=depth))
        self.requirements.append(Expected(label, cite or label, text))

    def plain_req(self, text: str, cite: str | None) -> None:
        """A requirement printed as an unlabelled paragraph."""
        self.blocks.append(_Block("para", text))
        self.requirements.append(Expected(None, cite, text))

    def bullet(self, text: str, depth: int = 1) -> None:
        self.blocks.append(_Block("bullet", text, level=depth))
        self.requirements.append(Expected(None, None, text))

    def policy(self, name: str, style: _Style, furniture: tuple[str, ...]) -> BlindPolicy:
        return BlindPolicy(
            name=name,
            requirements=tuple(self.requirements),
            notes=tuple(self.notes),
            furniture=furniture,
            blocks=tuple(self.blocks),
            style=style,
        )


# --------------------------------------------------------------------------------------
# 1. logistics: Northwind Logistics, ISP-01
# --------------------------------------------------------------------------------------

_NOTE, _REQ = "note", "req"

_Section = tuple[str, tuple[tuple[str, str], ...]]

_LOGISTICS_TITLE = (
    "Northwind Logistics Information Security Policy (ISP-01) for Employees and Contractors"
)

_LOGISTICS: tuple[_Section, ...] = (
    (
        "Purpose",
        (
            (
                _NOTE,
                "This policy sets out how Northwind Logistics protects the information it "
                "holds about customers, shipments and employees, and the systems that process "
                "it. It supports our ISO/IEC 27001 certification and the security commitments "
                "we make to customers in our contracts.",
            ),
        ),
    ),
    (
        "Scope",
        (
            (
                _NOTE,
                "The policy applies to all employees, temporary staff and contractors, and to "
                "every system that stores or processes Northwind data, whether it is hosted in "
                "our own data centres, in the cloud or by a supplier.",
            ),
        ),
    ),
    (
        "Definitions",
        (
            (
                _NOTE,
                "Privileged account: an account that can change system configuration, security "
                "settings or other users' access rights.",
            ),
            (
                _NOTE,
                "Business-critical data: data whose loss would stop warehouse, transport or "
                "billing operations for more than one working day.",
            ),
        ),
    ),
    (
        "Access Control",
        (
            (
                _REQ,
                "Access to systems is granted on a need-to-know basis and approved by the "
                "information owner before the account is created.",
            ),
            (
                _REQ,
                "Each user must have a unique user ID; shared or generic accounts are not "
                "permitted.",
            ),
            (
                _REQ,
                "Line managers shall review the access rights of their team members every six "
                "months and request the removal of any rights that are no longer needed.",
            ),
            (
                _REQ,
                "Privileged accounts will be used only for administrative tasks. Administrators "
                "are required to use a separate, non-privileged account for e-mail and web "
                "browsing.",
            ),
            (
                _REQ,
                "Access of leavers is revoked on their last working day, and their badges, "
                "tokens and laptops are returned to the service desk.",
            ),
            (
                _REQ,
                "Remote access to the corporate network is only possible through the company "
                "VPN with multi-factor authentication.",
            ),
            (
                _NOTE,
                "Note: Temporary access for external auditors follows the same request process "
                "and expires automatically after 30 days.",
            ),
        ),
    ),
    (
        "Passwords and Authentication",
        (
            (
                _REQ,
                "Passwords will be at least 12 characters long and must not contain the user's "
                "name or user ID.",
            ),
            (
                _REQ,
                "Users shall not reuse any of their last ten passwords and must not use the "
                "same password for Northwind and personal services.",
            ),
            (
                _REQ,
                "Multi-factor authentication is required for all cloud services, for remote "
                "access and for every privileged account.",
            ),
            (
                _REQ,
                "Accounts are locked for 15 minutes after five consecutive failed login attempts.",
            ),
            (
                _REQ,
                "Default passwords on network equipment, printers and handheld scanners must "
                "be changed before the device is connected to the network.",
            ),
            (
                _NOTE,
                'Example: a passphrase such as "four pallets left the dock at dawn" is long, '
                "easy to remember and meets the length rule.",
            ),
        ),
    ),
    (
        "Backup and Recovery",
        (
            (_REQ, "Business-critical data is backed up every day."),
            (
                _REQ,
                "Backups are encrypted, and at least one copy is kept offline or in a separate "
                "cloud account that ordinary administrators cannot delete.",
            ),
            (
                _REQ,
                "The IT Operations team is required to test the restoration of each critical "
                "system at least once a year and to record the result.",
            ),
            (
                _REQ,
                "Backup media that leave the data centre shall be transported in locked "
                "containers and logged on dispatch and on arrival.",
            ),
            (
                _NOTE,
                "Note: Files kept only on a laptop's local disk are not backed up. Save work "
                "files on the team drive or in SharePoint.",
            ),
        ),
    ),
    (
        "Cryptography",
        (
            (
                _REQ,
                "All data sent over public networks must be encrypted using TLS 1.2 or higher.",
            ),
            (
                _REQ,
                "Laptops, mobile phones and removable media will be protected with full-disk "
                "encryption.",
            ),
            (
                _REQ,
                "SHA-1 and DES are prohibited for any new system, and existing systems that "
                "still rely on them must be migrated by the end of 2026.",
            ),
            (
                _REQ,
                "Encryption keys are stored in the central key management service and rotated "
                "at least every two years; keys are never stored in source code.",
            ),
            (
                _REQ,
                "Certificates for public websites shall be issued by the approved certificate "
                "authority only. SHA-1 signed certificates are rejected by our proxies and must "
                "be replaced.",
            ),
            (
                _NOTE,
                "Example: the customer portal uses TLS 1.3 with a certificate from the approved "
                "authority, renewed automatically every 90 days.",
            ),
        ),
    ),
    (
        "Logging and Monitoring",
        (
            (
                _REQ,
                "Security events from servers, firewalls and cloud services are sent to the "
                "central log platform.",
            ),
            (
                _REQ,
                "Logs must be kept for at least 12 months and protected against modification "
                "or deletion.",
            ),
            (
                _REQ,
                "The Security Operations team will review high-severity alerts within one hour, "
                "around the clock.",
            ),
            (_REQ, "System clocks shall be synchronised with the company NTP servers."),
        ),
    ),
    (
        "Network Security",
        (
            (_REQ, "The firewall blocks inbound traffic by default."),
            (
                _REQ,
                "Every firewall rule that allows inbound traffic must have a documented "
                "business owner and is reviewed twice a year.",
            ),
            (
                _REQ,
                "Guest Wi-Fi is separated from the corporate network and from the warehouse "
                "scanner network.",
            ),
        ),
    ),
    (
        "Incident Response",
        (
            (
                _NOTE,
                "An information security incident is any event that threatens the "
                "confidentiality, integrity or availability of Northwind information or "
                "systems.",
            ),
            (
                _REQ,
                "Staff will report suspected incidents, lost devices and phishing e-mails to "
                "the service desk immediately.",
            ),
            (
                _REQ,
                "The CISO shall classify each reported incident within four hours and, for "
                "high-severity incidents, convene the incident response team.",
            ),
            (
                _REQ,
                "Personal data breaches must be reported to the Data Protection Officer within "
                "24 hours so that the supervisory authority can be notified within 72 hours.",
            ),
            (
                _REQ,
                "Evidence from affected systems is preserved until the investigation is closed.",
            ),
            (
                _REQ,
                "A lessons-learned review is held within two weeks of closing every "
                "high-severity incident.",
            ),
            (
                _NOTE,
                "Example: a driver who loses a handheld scanner calls the service desk, which "
                "locks and wipes the device remotely.",
            ),
        ),
    ),
    (
        "Suppliers",
        (
            (
                _REQ,
                "Suppliers that process Northwind data are required to sign the Supplier "
                "Security Agreement before any data is shared with them, and to report security "
                "incidents in line with X.c within 24 hours.",
            ),
            (
                _REQ,
                "Procurement shall assess the information security of every new supplier "
                "before the contract is signed and repeat the assessment every two years for "
                "suppliers rated high risk.",
            ),
            (
                _REQ,
                "Supplier access to Northwind systems will be limited to named individuals and "
                "removed when the contract ends.",
            ),
        ),
    ),
    (
        "Physical Security",
        (
            (
                _REQ,
                "Data centres and server rooms are locked at all times and access is restricted "
                "to authorised staff.",
            ),
            (
                _REQ,
                "Visitors must sign in at reception, wear a visible badge and be escorted in all "
                "non-public areas.",
            ),
            (
                _REQ,
                "Screens must be locked when unattended, and confidential papers shall be kept "
                "in locked cabinets outside working hours.",
            ),
        ),
    ),
    (
        "Compliance and Exceptions",
        (
            (
                _NOTE,
                "Breaches of this policy may lead to disciplinary action, up to and including "
                "dismissal, and to the termination of contracts with suppliers.",
            ),
            (
                _REQ,
                "Exceptions to this policy must be approved in writing by the CISO and are "
                "valid for no more than 12 months.",
            ),
        ),
    ),
)

_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _logistics(sections: tuple[_Section, ...], version: str, approved: str) -> BlindPolicy:
    furniture = (
        "Northwind Logistics \u2014 Internal",
        f"ISP-01 Information Security Policy, version {version}",
    )
    style = _Style(
        header=furniture[0],
        footer=furniture[1] + "    Page {page}",
        label_cm=1.6,
        label_mm=15.0,
    )
    out = _Writer()
    out.title(_LOGISTICS_TITLE)
    out.meta(
        f"Document owner: CISO \u00b7 Approved {approved} \u00b7 Version {version} "
        "\u00b7 Review annually"
    )
    for number, (topic, items) in enumerate(sections):
        roman = _ROMAN[number]
        out.heading(f"{roman}. {topic}")
        letters = iter(_LETTERS)
        for kind, text in items:
            if kind == _NOTE:
                out.note(text)
            else:
                out.req(f"{roman}.{next(letters)}", text)
    name = "logistics" if version == "1.0" else f"logistics-v{version.split('.')[0]}"
    return out.policy(name, style, furniture)


def _labels(sections: tuple[_Section, ...]) -> list[tuple[str, str]]:
    """(label, text) of each clause, as `_logistics` letters them."""
    found = []
    for number, (_, items) in enumerate(sections):
        clauses = [text for kind, text in items if kind == _REQ]
        for letter, text in zip(_LETTERS, clauses, strict=False):
            found.append((f"{_ROMAN[number]}.{letter}", text))
    return found


def version_two() -> tuple[BlindPolicy, dict[str, list[str]]]:
    """Version 2.0 of the logistics policy: two clauses deleted (IV.e, X.d), three reworded
    (V.a, VII.c, XI.b), two inserted (V.c, VIII.c); the author re-letters the clauses after
    each edit, so IV.f becomes IV.e, V.c to V.e become V.d to V.f, and so on.

    Returns the policy and {"removed": v1 labels, "changed": v1 labels whose text changed,
    "added": v2 labels that are new, "relabelled": ["v1 -> v2", ...] for clauses that kept
    their text but not their label}."""
    removed = ["IV.e", "X.d"]
    changed = {
        "V.a": "Passwords will be at least 14 characters long and must not contain the user's "
        'name, user ID or the word "Northwind".',
        "VII.c": "SHA-1, DES and 3DES are prohibited for any new system, and existing systems "
        "that still rely on them must be migrated by 30 June 2027.",
        "XI.b": "Procurement shall assess the information security of every new supplier "
        "before the contract is signed and repeat the assessment every year for suppliers "
        "rated high risk.",
    }
    inserted = {  # v1 label of the clause the new one follows -> new text
        "V.b": "Staff are required to keep work passwords only in the company password manager.",
        "VIII.b": "Access to the central log platform is restricted to the Security Operations "
        "team and to internal and external auditors.",
    }
    v1 = dict(_labels(_LOGISTICS))
    by_text = {text: label for label, text in v1.items()}
    sections: list[_Section] = []
    for number, (topic, items) in enumerate(_LOGISTICS):
        edited: list[tuple[str, str]] = []
        letters = iter(_LETTERS)
        for kind, text in items:
            if kind == _NOTE:
                edited.append((kind, text))
                continue
            label = f"{_ROMAN[number]}.{next(letters)}"
            if label in removed:
                continue
            edited.append((kind, changed.get(label, text)))
            if label in inserted:
                edited.append((_REQ, inserted[label]))
        sections.append((topic, tuple(edited)))
    v2_sections = tuple(sections)
    policy = _logistics(v2_sections, "2.0", "2026-09-15")
    new_texts = set(inserted.values())
    changed_texts = {text: label for label, text in changed.items()}
    added: list[str] = []
    relabelled: list[str] = []
    for label, text in _labels(v2_sections):
        if text in new_texts:
            added.append(label)
        elif text in changed_texts:
            if changed_texts[text] != label:
                relabelled.append(f"{changed_texts[text]} -> {label}")
        elif by_text[text] != label:
            relabelled.append(f"{by_text[text]} -> {label}")
    diff = {
        "removed": removed,
        "changed": list(changed),
        "added": added,
        "relabelled": relabelled,
    }
    return policy, diff


# --------------------------------------------------------------------------------------
# 2. agency: a government information security manual
# --------------------------------------------------------------------------------------


def _agency() -> BlindPolicy:
    out = _Writer()
    out.title(
        "Department of Regional Services \u2014 Information Security Manual, Part 3: Controls"
    )
    out.meta("Version 3.2 \u00b7 Issued by the Chief Information Security Officer \u00b7 May 2026")

    out.heading("Section 1 \u2014 Purpose and Authority")
    out.lead(
        "1.1",
        "This Part sets out the minimum security controls for the Department's information "
        "systems. It is issued under the Department's Information Management Framework.",
    )
    out.lead(
        "1.2",
        "It applies to all departmental information systems, including systems operated on the "
        "Department's behalf by contractors and shared service providers.",
    )
    out.note(
        'In this Part, "system owner" means the senior officer accountable for an information '
        'system, and "privileged user" means a user who can alter the configuration or the '
        "security controls of a system.",
    )

    out.heading("Section 2 \u2014 Governance and Roles")
    out.req(
        "2.1",
        "The system owner shall approve a system security plan for each information system "
        "before the system enters operation.",
    )
    out.req(
        "2.2",
        "The agency shall review each system security plan at least every two years and after "
        "any significant change to the system.",
    )
    out.req(
        "2.3",
        "Personnel shall complete security awareness training on appointment and annually "
        "thereafter.",
    )

    out.heading("Section 3 \u2014 Identification and Authentication")
    out.req(
        "3.1",
        "The agency shall maintain a register of all user accounts, including the owner, "
        "purpose and approval date of each account.",
    )
    out.lead("3.2", "Before granting access to an information system, the agency shall:")
    out.req(
        "(a)",
        "uniquely identify and authenticate each user;",
        cite="3.2(a)",
        depth=1,
    )
    out.req(
        "(b)",
        "verify the identity of the user against an official identity document or an existing "
        "departmental record; and",
        cite="3.2(b)",
        depth=1,
    )
    out.req(
        "(c)",
        "obtain the written approval of the user's supervisor.",
        cite="3.2(c)",
        depth=1,
    )
    out.req(
        "3.3",
        "Multi-factor authentication shall be used for all privileged users, for remote access "
        "and for access to systems that hold personal information.",
    )
    out.lead("3.4", "Passwords used to access agency systems shall:")
    out.req("(a)", "be at least 14 characters in length;", cite="3.4(a)", depth=1)
    out.req(
        "(b)",
        "be checked against a list of passwords known to be compromised when they are set;",
        cite="3.4(b)",
        depth=1,
    )
    out.req("(c)", "not be shared between users or between systems; and", cite="3.4(c)", depth=1)
    out.req(
        "(d)",
        "be changed without delay if there is any indication that they have been disclosed.",
        cite="3.4(d)",
        depth=1,
    )
    out.note(
        "Note: Paragraph 3.4 does not require periodic password changes. Forced periodic "
        "changes lead users to choose weaker passwords.",
    )

    out.heading("Section 4 \u2014 Audit and Accountability")
    out.req(
        "4.1",
        "Information systems shall generate audit records for logon and logoff events, failed "
        "access attempts, changes to privileges and the use of privileged commands.",
    )
    out.lead("4.2", "The agency shall:")
    out.req(
        "(a)",
        "retain audit records for at least seven years;",
        cite="4.2(a)",
        depth=1,
    )
    out.req(
        "(b)",
        "protect audit records from unauthorised access, modification and deletion; and",
        cite="4.2(b)",
        depth=1,
    )
    out.req(
        "(c)",
        "review audit records for indications of inappropriate or unusual activity at least "
        "weekly.",
        cite="4.2(c)",
        depth=1,
    )
    out.req(
        "4.3",
        "System clocks shall be synchronised to an authoritative time source so that audit "
        "records from different systems can be correlated.",
    )
    out.note(
        "Guidance: Centralised log collection makes review under paragraph 4.2(c) practical for "
        "most business units.",
    )

    out.heading("Section 5 \u2014 Cryptography and Media Protection")
    out.req(
        "5.1",
        "Information classified PROTECTED shall be encrypted with an approved algorithm when "
        "stored on portable media or transmitted over public networks.",
    )
    out.req(
        "5.2",
        "Cryptographic keys shall be generated, stored and destroyed in accordance with the "
        "Department's Key Management Plan.",
    )
    out.req(
        "5.3",
        "Media that have held classified information shall be sanitised or destroyed before "
        "disposal, and the disposal shall be recorded.",
    )

    out.heading("Section 6 \u2014 Incident Management")
    out.req(
        "6.1",
        "Personnel shall report any actual or suspected cyber security incident to the Cyber "
        "Security Operations Centre as soon as practicable, and in any case within 24 hours.",
    )
    out.lead("6.2", "For each reported incident, the Cyber Security Operations Centre shall:")
    out.req(
        "(a)",
        "assess its severity and notify the system owner within four hours; and",
        cite="6.2(a)",
        depth=1,
    )
    out.req(
        "(b)",
        "record the incident, the actions taken and the outcome in the incident register.",
        cite="6.2(b)",
        depth=1,
    )
    out.req(
        "6.3",
        "The agency shall test its incident response plan at least annually through an "
        "exercise involving the business units that own critical systems.",
    )

    out.heading("Section 7 \u2014 Contractors and Service Providers")
    out.req(
        "7.1",
        "Contracts for services that involve access to departmental information shall include "
        "the security obligations set out in Schedule 4.",
    )
    out.req(
        "7.2",
        "Contractor personnel with access to classified information shall hold a security "
        "clearance at the level of the information accessed.",
    )
    out.note(
        "Note: Schedule 4 is maintained by the Procurement Branch and is available on the "
        "intranet.",
    )

    out.heading("Section 8 \u2014 Physical and Environmental Protection")
    out.req(
        "8.1",
        "Server rooms and communications cabinets shall be secured with electronic access "
        "control, and access shall be limited to authorised personnel.",
    )
    out.req(
        "8.2",
        "Visitors to secure areas shall be recorded in the visitor register and escorted at all "
        "times.",
    )
    out.req(
        "8.3",
        "Equipment rooms shall be protected by fire detection and suppression systems, and by "
        "an uninterruptible power supply.",
    )
    out.note(
        "Guidance: Further physical security requirements for facilities holding SECRET "
        "information are set out in Part 5 of this Manual.",
    )

    style = _Style(
        header="OFFICIAL",
        footer="DRS Information Security Manual, Part 3    OFFICIAL    Page {page} of {pages}",
        label_cm=1.4,
        label_mm=12.0,
        step_cm=1.4,
        step_mm=12.0,
    )
    return out.policy("agency", style, ("OFFICIAL", "DRS Information Security Manual, Part 3"))


# --------------------------------------------------------------------------------------
# 3. saas: an engineering security standard
# --------------------------------------------------------------------------------------


def _saas() -> BlindPolicy:
    out = _Writer()
    out.title("Engineering Security Standard")
    out.meta(
        "Driftwood Labs \u00b7 ESS v4 \u00b7 Owner: Security Engineering "
        "\u00b7 Last reviewed 2026-02"
    )
    out.note(
        "This standard applies to everyone who writes, reviews or deploys code at Driftwood "
        "Labs, including contractors. If a requirement does not fit your situation, talk to "
        "#security before you work around it.",
    )
    counter = iter(range(1, 100))

    def r(text: str) -> None:
        out.req(f"R-{next(counter):02d}", text)

    out.heading("Identity and access")
    r("Sign in to every internal tool through SSO with a hardware security key.")
    r(
        "Production access is granted just in time through the access broker and expires after "
        "8 hours."
    )
    out.note(
        "Why: standing access is the most common path from a stolen laptop to a production "
        "incident."
    )
    r("Nobody shares accounts, tokens or SSH keys, not even within a team.")

    out.heading("Secrets")
    r("Rotate API keys every 90 days.")
    r(
        "Secrets live in Vault. Never commit a secret to a repository, not even a private one, "
        "and never paste one into a ticket or a chat."
    )
    out.note(
        "Example: the deploy job reads the payment provider key with vault kv get "
        "secret/payments/provider instead of loading an .env file checked into git."
    )
    r("If a secret is exposed, revoke it first and investigate second.")

    out.heading("Source code and CI")
    out.note("Every repository that builds production artifacts has:")
    out.bullet(
        "branch protection on the default branch, with at least one approving review from a "
        "code owner;"
    )
    out.bullet("signed commits required for merges;")
    out.bullet("secret scanning and dependency scanning enabled in CI.")
    r(
        "CI runners do not get long-lived cloud credentials; they use OIDC federation with "
        "short-lived tokens."
    )
    r("Pin third-party GitHub Actions to a full commit SHA.")
    out.note("Why: a tag can be moved to point at malicious code; a commit SHA cannot.")

    out.heading("Dependencies")
    r("Pin direct dependencies and commit the lockfile.")
    r("Fix critical vulnerabilities in dependencies within 7 days and high ones within 30 days.")
    r(
        "New dependencies with fewer than two maintainers, or with no release in the last year, "
        "need a review from the security team before they are added."
    )

    out.heading("Data protection")
    r("Customer data is encrypted at rest with AES-256 and in transit with TLS 1.2 or later.")
    r("Do not copy production data to staging or to laptops. Use the anonymised dataset instead.")
    out.note("Before a service stores customer data, the owning team makes sure that:")
    out.bullet("the data is classified in the data inventory;")
    out.bullet("a retention period is defined and enforced by an automated job;")
    out.bullet("backups are enabled and a restore has been tested at least once.")

    out.heading("Logging and monitoring")
    r(
        "Services write structured audit logs for every authentication event and every change "
        "to permissions."
    )
    r("Never log passwords, tokens, full card numbers or session cookies.")
    r("Keep audit logs for 400 days in the central log store.")
    out.note(
        'Example: {"event": "login", "user": "u_123", "result": "success"} is fine; adding the '
        "session cookie to that line is not."
    )

    out.heading("Incidents")
    r(
        "Alert the on-call security engineer for any suspected breach; don't wait until you "
        "are sure."
    )
    r(
        "Every incident gets a blameless post-mortem within 10 working days, published "
        "internally unless the security team decides it would put customers at risk."
    )
    out.note(
        "Why: most of our controls exist because an earlier post-mortem showed they were missing."
    )

    out.heading("Vendors")
    r(
        "Any new SaaS vendor that will hold customer data goes through a security review before "
        "the contract is signed."
    )
    r("Vendors get access through their own named accounts, never through an employee's account.")

    out.heading("Laptops and offices")
    out.note("Company laptops:")
    out.bullet("run full-disk encryption and the endpoint agent;")
    out.bullet("lock the screen after 5 minutes of inactivity;")
    out.bullet("install operating system updates within 14 days of their release.")
    r("Don't leave a laptop in a car, even a locked one.")
    r("Badge in at the office door; don't hold it open for people you don't know.")

    style = _Style(
        header=None,
        footer="Driftwood Labs Engineering Security Standard (ESS v4) \u00b7 {page}",
        hanging=False,
        label_sep=" ",
        bold_label=True,
        step_cm=0.8,
        step_mm=6.0,
    )
    return out.policy("saas", style, ("Driftwood Labs Engineering Security Standard (ESS v4)",))


# --------------------------------------------------------------------------------------
# 4. bank: a regulation with articles and numbered paragraphs
# --------------------------------------------------------------------------------------


def _bank() -> BlindPolicy:
    out = _Writer()
    out.title("Harbour Savings Bank \u2013 Regulation on Information Security (RIS)")
    out.meta("Adopted by the Management Board on 12 March 2026 \u00b7 Ref. MB/2026/014")
    out.note(
        "The Management Board of Harbour Savings Bank, having regard to the Bank's ICT risk "
        "management framework and to the applicable supervisory requirements, adopts the "
        "following regulation:"
    )

    def article(
        number: int, title: str, paragraphs: list[str], notes: tuple[str, ...] = ()
    ) -> None:
        out.heading(f"Art. {number} {title}")
        if len(paragraphs) == 1:
            out.plain_req(paragraphs[0], cite=f"Art. {number}")
        else:
            for index, text in enumerate(paragraphs, start=1):
                out.req(f"({index})", text, cite=f"Art. {number}({index})")
        for text in notes:
            out.note(text)

    out.heading("Art. 1 Subject matter and scope")
    out.note(
        "This regulation lays down the information security rules of Harbour Savings Bank. It "
        "applies to all employees, to the members of the governing bodies and to service "
        "providers working on the Bank's premises or systems."
    )
    out.heading("Art. 2 Definitions")
    out.note(
        'For the purposes of this regulation, "critical system" means a system listed in the '
        "Bank's register of ICT services supporting critical or important functions."
    )
    article(
        3,
        "Responsibilities",
        [
            "The Management Board bears overall responsibility for information security and "
            "approves this regulation.",
            "The Chief Information Security Officer reports to the Management Board at least "
            "quarterly on the state of information security.",
            "Each head of department ensures that the staff of the department complete the "
            "annual security training.",
        ],
    )
    article(
        4,
        "Access management",
        [
            "Access rights are granted according to the principle of least privilege, on the "
            "basis of a documented request approved by the owner of the system.",
            "Access rights to critical systems shall be recertified every six months.",
            "Privileged access shall be logged, and the logs shall be reviewed monthly by a "
            "person who does not hold that access.",
            "Passwords shall a) consist of at least 14 characters, b) be changed immediately if "
            "a compromise is suspected and c) not be written down or stored in clear text.",
        ],
        notes=(
            "Explanatory note: Paragraph 2 implements the Bank's commitment to the supervisory "
            "authority following the 2025 on-site inspection.",
        ),
    )
    article(
        5,
        "Authentication in customer channels",
        [
            "Online banking and the mobile banking app shall require strong customer "
            "authentication for log-in and for every payment order.",
        ],
    )
    article(
        6,
        "Backup and recovery",
        [
            "Data of critical systems is backed up daily; the backups are kept in a second data "
            "centre at least 10 km from the first.",
            "The recovery of critical systems shall be tested annually against the recovery "
            "time objectives set in the business impact analysis.",
        ],
    )
    article(
        7,
        "Cryptography",
        [
            "Cryptographic keys for payment systems are generated and stored in hardware "
            "security modules.",
            "The use of a cryptographic algorithm not listed in Annex 1 requires the prior "
            "approval of the Chief Information Security Officer.",
        ],
    )
    article(
        8,
        "Logging and monitoring",
        [
            "Security-relevant events on critical systems are logged and the logs are kept for "
            "at least five years.",
            "The security operations centre monitors the logs continuously and escalates "
            "suspected attacks to the Chief Information Security Officer without delay.",
            "Employees shall not disable, bypass or alter logging on any system.",
        ],
    )
    article(
        9,
        "ICT-related incidents",
        [
            "Major ICT-related incidents shall be reported to the supervisory authority within "
            "the deadlines set by law.",
            "The Bank keeps a register of all ICT-related incidents, their causes and the "
            "measures taken.",
            "After every major incident, a root cause analysis shall be presented to the "
            "Management Board within one month.",
        ],
    )
    article(
        10,
        "Outsourcing",
        [
            "Before outsourcing a critical or important function, the Bank shall carry out a "
            "risk assessment and ensure that the contract grants the Bank and the supervisory "
            "authority full rights of access and audit.",
        ],
        notes=(
            "Explanatory note: Outsourcing to another company of the group is outsourcing "
            "within the meaning of this Article.",
        ),
    )
    article(
        11,
        "Physical security",
        [
            "Data centres are protected by access control with two factors, video surveillance "
            "and intrusion detection.",
            "Access to data centres is limited to authorised persons; visitors are accompanied "
            "at all times.",
            "Documents and media containing confidential information shall be destroyed in "
            "accordance with the Bank's disposal procedure.",
        ],
    )
    article(
        12,
        "Remote work",
        [
            "Bank data may be processed on private devices only through the managed workspace "
            "application provided by the Bank.",
        ],
    )
    article(
        13,
        "Security testing",
        [
            "Critical systems undergo penetration testing by independent testers at least once "
            "a year.",
            "Vulnerabilities rated critical shall be remediated within 14 days.",
            "Changes to critical systems shall not go live until the findings of the security "
            "tests have been remediated or formally accepted by the system owner.",
        ],
    )
    out.heading("Art. 14 Entry into force")
    out.note(
        "This regulation enters into force on 1 April 2026 and replaces the regulation on "
        "information security of 14 June 2022."
    )

    style = _Style(
        header="Harbour Savings Bank \u2013 Confidential",
        footer="RIS 2026 \u2013 {page}/{pages}",
        word_headings=False,
        centred_headings=True,
        label_cm=1.0,
        label_mm=9.0,
    )
    return out.policy("bank", style, ("Harbour Savings Bank \u2013 Confidential", "RIS 2026"))


# --------------------------------------------------------------------------------------
# Word
# --------------------------------------------------------------------------------------


def _docx_footer(paragraph: Paragraph, footer: str) -> None:
    """The footer's text, with Word PAGE and NUMPAGES fields for "{page}" and "{pages}"."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    for piece in re.split(r"(\{page\}|\{pages\})", footer):
        if piece in ("{page}", "{pages}"):
            field_ = OxmlElement("w:fldSimple")
            field_.set(qn("w:instr"), "PAGE" if piece == "{page}" else "NUMPAGES")
            run = OxmlElement("w:r")
            text = OxmlElement("w:t")
            text.text = "1"
            run.append(text)
            field_.append(run)
            paragraph._p.append(field_)
        elif piece:
            paragraph.add_run(piece)


def _write_docx(policy: BlindPolicy, out: Path) -> None:
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Cm, Pt

    style = policy.style
    document = docx.Document()
    section = document.sections[0]
    if style.header:
        section.header.paragraphs[0].text = style.header
    _docx_footer(section.footer.paragraphs[0], style.footer)

    for block in policy.blocks:
        if block.kind == "title":
            if style.word_headings:
                document.add_heading(block.text, 0)
            else:
                paragraph = document.add_paragraph()
                paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
                run = paragraph.add_run(block.text)
                run.bold = True
                run.font.size = Pt(16)
        elif block.kind == "meta":
            paragraph = document.add_paragraph()
            run = paragraph.add_run(block.text)
            run.italic = True
            run.font.size = Pt(9)
        elif block.kind == "heading":
            if style.word_headings:
                document.add_heading(block.text, block.level)
            else:
                paragraph = document.add_paragraph()
                if style.centred_headings:
                    paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
                paragraph.paragraph_format.space_before = Pt(12)
                paragraph.paragraph_format.keep_with_next = True
                paragraph.add_run(block.text).bold = True
        elif block.kind == "para":
            document.add_paragraph(block.text)
        elif block.kind == "bullet":
            document.add_paragraph(block.text, style="List Bullet")
        else:  # item
            paragraph = document.add_paragraph()
            base = Cm(block.level * style.step_cm)
            fmt = paragraph.paragraph_format
            if style.hanging:
                fmt.left_indent = Cm(block.level * style.step_cm + style.label_cm)
                fmt.first_line_indent = Cm(-style.label_cm)
                fmt.tab_stops.add_tab_stop(Cm(block.level * style.step_cm + style.label_cm))
            elif block.level:
                fmt.left_indent = base
            label = paragraph.add_run(block.label or "")
            label.bold = style.bold_label
            paragraph.add_run(style.label_sep + block.text)
    document.save(str(out))


# --------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------


def _write_pdf(policy: BlindPolicy, out: Path, outline: bool) -> None:
    from fpdf import FPDF

    style = policy.style

    class Document(FPDF):
        def header(self) -> None:
            if style.header:
                self.set_font("helvetica", "I", 8)
                self.set_text_color(90, 90, 90)
                self.cell(0, 5, style.header, align="C" if style.header == "OFFICIAL" else "L")
                self.set_text_color(0, 0, 0)
                self.ln(10)

        def footer(self) -> None:
            self.set_y(-14)
            self.set_font("helvetica", size=8)
            self.set_text_color(90, 90, 90)
            text = style.footer.replace("{page}", str(self.page_no())).replace("{pages}", "{nb}")
            self.cell(0, 5, text, align="C")
            self.set_text_color(0, 0, 0)

    pdf = Document(format="A4")
    pdf.core_fonts_encoding = "windows-1252"  # dashes, middle dots, bullets
    pdf.set_margins(22, 18, 22)
    pdf.set_auto_page_break(True, 22)
    pdf.set_title(policy.name)
    pdf.add_page()
    line = 5.2

    for block in policy.blocks:
        if block.kind == "title":
            pdf.set_font("helvetica", "B", 18)
            pdf.multi_cell(0, 8.5, block.text, align="C" if not style.word_headings else "L")
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
            pdf.set_font("helvetica", "B", 13 if block.level == 1 else 11.5)
            pdf.multi_cell(0, 7, block.text, align="C" if style.centred_headings else "L")
            pdf.ln(1.5)
        elif block.kind == "para":
            pdf.set_font("helvetica", size=10.5)
            pdf.multi_cell(0, line, block.text)
            pdf.ln(2)
        elif block.kind == "bullet":
            pdf.set_font("helvetica", size=10.5)
            pdf.set_x(pdf.l_margin + block.level * style.step_mm)
            pdf.cell(5, line, "\u2022")
            pdf.multi_cell(0, line, block.text)
            pdf.ln(1.2)
        else:  # item
            indent = pdf.l_margin + block.level * style.step_mm
            pdf.set_x(indent)
            if style.hanging:
                pdf.set_font("helvetica", "B" if style.bold_label else "", 10.5)
                pdf.cell(style.label_mm, line, block.label or "")
                pdf.set_font("helvetica", size=10.5)
                pdf.multi_cell(0, line, block.text)
            else:
                pdf.set_font("helvetica", "B" if style.bold_label else "", 10.5)
                pdf.write(line, (block.label or "") + " ")
                pdf.set_font("helvetica", size=10.5)
                pdf.write(line, block.text)
                pdf.ln(line)
            pdf.ln(2)
    pdf.output(str(out))


POLICIES: tuple[BlindPolicy, ...] = (
    _logistics(_LOGISTICS, "1.0", "2026-03-01"),
    _agency(),
    _saas(),
    _bank(),
)
