"""Three more security policies written "blind", in house styles that differ from those of
tests/blind_policies.py, tests/blind_policies_two.py and tests/blind_policies_three.py, for
testing how documents are split into one item per requirement.

Like the policies of those modules, these were written without reference to how the
segmenter works: each policy knows only what a careful human reader would say about it
(which paragraphs are requirements, how the document labels and cites them, which paragraphs
are not requirements, and which strings are running page furniture). `BlindPolicy.save`
builds the Word file (python-docx) or the PDF (fpdf2, core fonts) at test time.

House styles (`POLICIES`):

* ``military``: a defence contractor's corporate security instruction (HDSI 5239.2C) in the
  form of a military directive. A centred title, a "SUBJECT:" line, a "REFERENCES:" block
  of lettered references "(a)" to "(e)" and an "ENCLOSURE:" line (all notes). Paragraphs
  carry their full number typed at their start: "1.", "6.a.", "6.a.(1)", "7.b.(2)(a)",
  two spaces, then the text. Each level's first line is indented one step further and the
  text wraps back to the left margin, as in military correspondence. A paragraph that has
  sub-paragraphs and no text of its own stands as a caption ("6. Responsibilities.", a
  Word heading restyled to body size, and an outline entry); the others run on after an
  underlined caption ("1. Purpose. This instruction ..."). Labels are as printed ("7.b.",
  with its final full stop), cited without the final full stop ("7.b", "7.b.(2)(a)"), as
  the text cites them ("paragraph 7.c"). A run-in caption is part of the paragraph's text,
  so the one top-level requirement, "11. Foreign Travel. Personnel ...", has
  `Expected.text` starting "Foreign Travel.". Purpose, cancellation, applicability,
  definitions (4.a-4.c), the policy statement (5, which calls the controls "mandatory"),
  lead-ins ending in a colon ("The ISSM will:", "Accounts are disabled:"), a labelled
  "Consequences." paragraph (9.d), forms, effective date, "NOTE:" paragraphs indented under
  the paragraph they annotate, the signature block and "DISTRIBUTION:" are notes. Mixed
  wording: "will" lists, "shall", plain present tense, imperatives. Running header
  "UNCLASSIFIED" and a footer of the page number above "UNCLASSIFIED", on every page; the
  body mentions "Controlled Unclassified Information" (in notes only) in mixed case.
* ``handbook``: an employee security handbook (Copperleaf Foods) in plain prose under plain
  Word headings, with no clause numbers anywhere; curly apostrophes and quotes, as Word
  types them. The unit is the paragraph: a paragraph that states a rule (or closely linked
  rules about one matter) is one requirement, and its `Expected.text` is the whole
  paragraph, including any sentence in it that only sets the scene or explains the rule
  ("Criminals often pose as suppliers ... Before anyone changes a supplier's bank details,
  the Finance team calls ..."). A paragraph that only explains, welcomes, defines or warns
  of consequences is a note. A bulleted list under a lead-in is one requirement per bullet
  (text as printed, with its "; " or ".", without the bullet), the lead-in ("When you work
  away from the office:") a note; but the bullets under "Tell-tale signs of a phishing
  message include:" describe, they do not require, and are notes. Two shaded, boxed
  "Did you know?" paragraphs (bold run-in lead) are notes. A "Frequently asked questions"
  section of bold questions, each followed by a plain answer paragraph: questions and
  answers are all notes, although answers repeat rules in the imperative or with "must"
  (every rule an answer states is also stated, as a requirement, in the body). No
  requirement has a label or a citation: `label` and `cite` are None. Footer with the
  handbook's name, edition and page number.
* ``register``: a requirements register (Tessellate Cloud, TC-SRR-001) laid out as Word
  paragraphs, not as a table. Numbered headings ("3.2 Cryptography", Heading 2) whose
  numbers are not requirement labels. Each entry is a bold line "SEC-ACC-001 | Access |
  High" followed by a paragraph of requirement text; label and cite are the identifier
  ("SEC-ACC-001"), `Expected.text` the paragraph after the line alone. Some entries are
  followed by indented, smaller "Rationale:" and "Verification:" paragraphs (italic run-in
  lead), which are notes, some of them imperatives ("Inspect ...", "Review ..."). One
  entry, "SEC-LOG-003 | Logging | Withdrawn", is followed by a withdrawal note instead of
  requirement text. Introductory "Conventions" notes quote an example entry line with a
  real identifier and define the priorities with "must"; a "Change history" section names
  identifiers. The identifier lines themselves are neither requirements nor notes (they
  carry the label, like the control title lines of the annex policy). Footer
  "TC-SRR-001 Rev C | Company Confidential | Page N of M".

Titles and headings are neither requirements nor notes; `notes` holds the text of each note
paragraph as printed, a run-in lead included. Text uses only characters of Windows-1252 (the
PDF core fonts' encoding, as in the other modules).
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

    # "title", "meta", "heading", "para", "item", "ref", "bullet", "box", "question",
    # "idline", "sign"
    kind: str
    text: str = ""
    label: str | None = None
    level: int = 1  # a heading's level; an item's, bullet's or reference's depth
    caption: str | None = None  # item: an underlined run-in caption ("Purpose.")
    lead: str | None = None  # para, box: a run-in lead ("NOTE:", "Rationale:")
    lead_italic: bool = False
    small: bool = False  # para: set in smaller type
    indent: int = 0  # para: indent depth


@dataclass(frozen=True)
class _Layout:
    """How a house lays its documents out, and the document's blocks."""

    blocks: tuple[_Block, ...]
    header: str | None  # centred running header
    footer: tuple[str, ...]  # centred footer lines; may hold "{page}" and "{pages}"
    centred_title: bool = False  # a bold centred paragraph instead of the Title style
    caption_headings: bool = False  # headings restyled to body size, black, bold
    step_cm: float = 1.0  # Word: indent per depth
    step_mm: float = 9.0  # PDF: indent per depth


@dataclass(frozen=True)
class _Policy(BlindPolicy):
    """A `BlindPolicy` that lays itself out with this module's writers."""

    layout: _Layout = field(default=_Layout((), None, ()), repr=False, compare=False, kw_only=True)

    def save(self, kind: str, folder: Path) -> Path:
        """Write the policy as ``docx``, ``pdf`` (with a bookmark outline) or ``bare.pdf``
        (no outline) into `folder`; return the path written."""
        pdf = partial(_write_pdf, self.name, self.layout)
        return saved(self.name, kind, folder, partial(_write_docx, self.layout), pdf)


def _joined(lead: str | None, text: str) -> str:
    """A paragraph's text as printed: its run-in lead or caption, a space, its text."""
    if lead and text:
        return f"{lead} {text}"
    return lead or text


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
        ("NOTE:") set in bold, or in italics."""
        self.blocks.append(
            _Block("para", text, lead=lead, lead_italic=italic, small=small, indent=indent)
        )
        self.notes.append(_joined(lead, text))

    def plain_req(self, text: str, label: str | None = None, cite: str | None = None) -> None:
        """A requirement printed as an unlabelled paragraph; `label` is the label printed
        elsewhere (on the identifier line above it), if any."""
        self.blocks.append(_Block("para", text))
        self.requirements.append(Expected(label, cite, text))

    def item(
        self, label: str, text: str, depth: int, caption: str | None = None, req: bool = True
    ) -> None:
        """A paragraph with its full number typed in front (military style); a requirement
        cited by its number without the final full stop, or (`req` False) a note."""
        self.blocks.append(_Block("item", text, label=label, level=depth, caption=caption))
        if req:
            self.requirements.append(Expected(label, label.rstrip("."), _joined(caption, text)))
        else:
            self.notes.append(_joined(caption, text))

    def ref(self, label: str, text: str) -> None:
        """A lettered reference, label in a hanging indent (a note)."""
        self.blocks.append(_Block("ref", text, label=label, level=1))
        self.notes.append(text)

    def bullet(self, text: str, req: bool = True) -> None:
        """A bulleted paragraph: a requirement without label or citation, or a note."""
        self.blocks.append(_Block("bullet", text))
        if req:
            self.requirements.append(Expected(None, None, text))
        else:
            self.notes.append(text)

    def box(self, lead: str, text: str) -> None:
        """A shaded, boxed paragraph with a bold run-in lead (a note)."""
        self.blocks.append(_Block("box", text, lead=lead))
        self.notes.append(_joined(lead, text))

    def question(self, text: str) -> None:
        """A bold question of a FAQ (a note)."""
        self.blocks.append(_Block("question", text))
        self.notes.append(text)

    def idline(self, ident: str, rest: str) -> None:
        """A register entry's identifier line, "SEC-ACC-001 | Access | High": the label of
        the paragraph after it, neither a requirement nor a note."""
        self.blocks.append(_Block("idline", rest, label=ident))

    def sign(self, text: str) -> None:
        """A line of a signature block (a note)."""
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
# 1. military: Halberd Defense Systems, Corporate Security Instruction HDSI 5239.2C
# --------------------------------------------------------------------------------------


def _military() -> BlindPolicy:
    out = _Writer()
    out.title("HALBERD DEFENSE SYSTEMS CORPORATE SECURITY INSTRUCTION 5239.2C")
    out.meta("HDSI 5239.2C \u00b7 Office of the Chief Security Officer \u00b7 14 March 2026")
    out.note(
        "Protection of Controlled Unclassified Information on Company Information Systems",
        lead="SUBJECT:",
    )
    out.note("", lead="REFERENCES:")
    out.ref(
        "(a)",
        "DFARS 252.204-7012, Safeguarding Covered Defense Information and Cyber Incident Reporting",
    )
    out.ref(
        "(b)",
        "NIST SP 800-171 Rev. 2, Protecting Controlled Unclassified Information in Nonfederal "
        "Systems and Organizations",
    )
    out.ref("(c)", "32 CFR Part 2002, Controlled Unclassified Information")
    out.ref("(d)", "32 CFR Part 117, National Industrial Security Program Operating Manual")
    out.ref("(e)", "HDSI 5510.1B, Personnel Security Program")
    out.note("(1) CUI Marking Quick Reference Card", lead="ENCLOSURE:")

    def r(label: str, text: str, caption: str | None = None) -> None:
        out.item(label, text, label.count(".") + label.count("(") - 1, caption)

    def lead(label: str, text: str, caption: str | None = None) -> None:
        out.item(label, text, label.count(".") + label.count("(") - 1, caption, req=False)

    def note(text: str, depth: int) -> None:
        out.note(text, lead="NOTE:", indent=depth)

    lead(
        "1.",
        "This instruction establishes policy, assigns responsibilities and prescribes "
        "procedures for protecting Controlled Unclassified Information (CUI) and covered "
        "defense information on Halberd information systems, in accordance with references "
        "(a) through (d).",
        "Purpose.",
    )
    lead("2.", "HDSI 5239.2B, dated 3 May 2022, is cancelled.", "Cancellation.")
    lead(
        "3.",
        "This instruction applies to all Halberd employees, consultants and subcontractor "
        "personnel, and to every company-owned or company-managed information system that "
        "processes, stores or transmits CUI, at all Halberd facilities.",
        "Applicability.",
    )
    lead(
        "4.",
        "For the purposes of this instruction, the following definitions apply:",
        "Definitions.",
    )
    lead(
        "4.a.",
        "Information the Government creates or possesses, or that an entity creates or "
        "possesses for or on behalf of the Government, that a law, regulation or "
        "Government-wide policy requires or permits an agency to handle using safeguarding or "
        "dissemination controls, as defined in reference (c).",
        "Controlled Unclassified Information (CUI).",
    )
    lead(
        "4.b.",
        "The employee appointed in writing by the Chief Security Officer to manage the "
        "security of company information systems that process CUI.",
        "Information System Security Manager (ISSM).",
    )
    lead(
        "4.c.",
        "A user who is authorized to perform security-relevant functions, such as creating "
        "accounts or changing system configurations, that ordinary users are not authorized "
        "to perform.",
        "Privileged User.",
    )
    lead(
        "5.",
        "It is Halberd policy to protect CUI entrusted to the company by the Department of "
        "Defense and its prime contractors to the standard required by references (a) and "
        "(b). The security controls in paragraphs 6 through 11 implement that policy and are "
        "mandatory for all personnel.",
        "Policy.",
    )

    out.heading("6. Responsibilities.")
    lead("6.a.", "The Chief Security Officer (CSO) will:")
    r(
        "6.a.(1)",
        "approve the System Security Plan (SSP) for each information system that processes "
        "CUI, and review each SSP at least annually;",
    )
    r("6.a.(2)", "appoint the ISSM and an alternate ISSM in writing; and")
    r(
        "6.a.(3)",
        "report the company's NIST SP 800-171 assessment score to the Supplier Performance "
        "Risk System (SPRS), and update it whenever the score changes.",
    )
    lead("6.b.", "The Facility Security Officer (FSO) will:")
    r(
        "6.b.(1)",
        "maintain a record of all personnel granted access to CUI, including the date of "
        "their initial security briefing; and",
    )
    r(
        "6.b.(2)",
        "conduct an annual security refresher briefing for all personnel with access to CUI.",
    )
    lead("6.c.", "The ISSM will:")
    r(
        "6.c.(1)",
        "maintain the Plan of Action and Milestones (POA&M) for every security control that "
        "is not yet fully implemented; and",
    )
    r(
        "6.c.(2)",
        "review audit logs from CUI systems at least weekly and document the results of each "
        "review.",
    )
    r(
        "6.d.",
        "Program managers ensure that the DD Form 254 or other contract security requirements "
        "of each program are communicated to the ISSM before any CUI is received under the "
        "contract.",
    )

    out.heading("7. Access Control.")
    r(
        "7.a.",
        "Access to CUI is limited to personnel who have a lawful Government purpose and a need "
        "to know, as determined by the program manager.",
    )
    lead("7.b.", "Accounts on information systems that process CUI will be managed as follows:")
    r(
        "7.b.(1)",
        "Each account is approved by the user's supervisor and by the ISSM before it is created.",
    )
    lead("7.b.(2)", "Accounts are disabled:")
    r(
        "7.b.(2)(a)",
        "within 4 hours of the employee's separation or of the end of the subcontract;",
    )
    r("7.b.(2)(b)", "after 45 days of inactivity; and")
    r("7.b.(2)(c)", "immediately upon direction of the FSO.")
    r("7.b.(3)", "Shared and group accounts are prohibited.")
    r(
        "7.c.",
        "Multi-factor authentication shall be used for all network access to privileged "
        "accounts, and for local and network access to all accounts on CUI systems.",
    )
    note(
        "Hardware tokens are issued by the IT Service Desk. Authentication codes sent by SMS "
        "text message do not satisfy paragraph 7.c.",
        1,
    )
    lead("7.d.", "Privileged users will:")
    r("7.d.(1)", "use their privileged account only for administrative functions; and")
    r(
        "7.d.(2)",
        "not read e-mail or browse the internet while logged on with a privileged account.",
    )
    r(
        "7.e.",
        "Lock your workstation whenever you leave it unattended. Sessions lock automatically "
        "after 15 minutes of inactivity.",
    )

    out.heading("8. Media Protection.")
    r(
        "8.a.",
        "All media containing CUI shall be marked with the CUI banner marking and the "
        "designation indicator of the originating agency.",
    )
    r(
        "8.b.",
        "CUI stored on removable media or on laptops is encrypted with FIPS 140-validated "
        "cryptography.",
    )
    r(
        "8.c.",
        "Sanitize or destroy media containing CUI before disposal or reuse, using the methods "
        "of NIST SP 800-88.",
    )
    note(
        "Cross-cut shredders listed on the NSA/CSS Evaluated Products List are located in each "
        "building. Ordinary office shredders do not meet paragraph 8.c.",
        1,
    )
    r(
        "8.d.",
        "CUI shall not be stored on personally owned devices or in personal cloud storage "
        "accounts.",
    )

    out.heading("9. Incident Reporting.")
    r(
        "9.a.",
        "Report any known or suspected compromise of CUI, or of a company information system, "
        "to the ISSM immediately, and in no case later than 1 hour after discovery.",
    )
    r(
        "9.b.",
        "The ISSM shall report each cyber incident that affects covered defense information "
        "to the DoD Cyber Crime Center (DC3) within 72 hours of discovery, as required by "
        "reference (a).",
    )
    lead("9.c.", "Following a reported cyber incident, the ISSM will:")
    r(
        "9.c.(1)",
        "preserve and protect images of all affected information systems for at least 90 days "
        "from the submission of the incident report; and",
    )
    r(
        "9.c.(2)",
        "provide the DoD with access to additional information or equipment needed for a "
        "forensic analysis, when requested.",
    )
    lead(
        "9.d.",
        "Personnel who fail to report a known or suspected incident may be subject to "
        "disciplinary action, up to and including termination of employment, and the failure "
        "may be reported to the Defense Counterintelligence and Security Agency (DCSA).",
        "Consequences.",
    )

    out.heading("10. Training.")
    r(
        "10.a.",
        "All personnel complete CUI awareness and insider threat awareness training before "
        "they are granted access to CUI, and annually thereafter.",
    )
    r("10.b.", "Training records are retained for at least 3 years.")

    r(
        "11.",
        "Personnel with access to CUI shall report all foreign travel, whether personal or "
        "official, to the FSO at least 30 days before departure.",
        "Foreign Travel.",
    )
    lead(
        "12.",
        "The CUI Access Request (HDS Form 5239/1) and the Foreign Travel Notification (HDS "
        "Form 5510/4) are available on the Security Office intranet page.",
        "Forms.",
    )
    lead("13.", "This instruction is effective immediately.", "Effective Date.")

    out.sign("J. R. TALBOT")
    out.sign("Chief Security Officer")
    out.note(
        "All employees; consultants and subcontractor personnel through their program managers.",
        lead="DISTRIBUTION:",
    )

    furniture = ("UNCLASSIFIED",)
    layout = _Layout(
        tuple(out.blocks),
        header="UNCLASSIFIED",
        footer=("{page}", "UNCLASSIFIED"),
        centred_title=True,
        caption_headings=True,
        step_cm=1.0,
        step_mm=8.0,
    )
    return out.policy("military", furniture, layout)


# --------------------------------------------------------------------------------------
# 2. handbook: Copperleaf Foods, employee security handbook
# --------------------------------------------------------------------------------------


def _handbook() -> BlindPolicy:
    out = _Writer()
    out.title("Staying Safe at Copperleaf: Your Employee Security Handbook")
    out.meta(
        "Copperleaf Foods Ltd \u00b7 2026 edition \u00b7 Published by the Information Security "
        "team \u00b7 Questions? Write to security@copperleaf.example"
    )

    out.heading("A message from our Chief Executive")
    out.note(
        "Every day, thousands of us serve customers, pay suppliers and ship orders using "
        "systems that criminals would very much like to get into. Keeping them out is not only "
        "the job of the IT team; it depends on the small choices each of us makes."
    )
    out.note(
        "This handbook explains, in plain language, what we ask of you and why. Please read it "
        "when you join, keep it handy, and ask the Information Security team whenever "
        "something is unclear."
    )
    out.note("Priya Raman, Chief Executive")

    out.heading("Who this handbook is for")
    out.note(
        "The handbook applies to everyone who works for Copperleaf, whether in a store, a "
        "distribution centre or an office, including temporary staff and contractors. The "
        "rules in it are part of your terms of employment; the Information Security Policy "
        "(ISP-01) sets out the full detail for managers and IT staff."
    )

    out.heading("Your account and password")
    out.plain_req(
        "Your Copperleaf account is yours alone. Never share your password with anyone, not "
        "even your manager or the IT Service Desk \u2013 we will never ask you for it."
    )
    out.note("When you choose a password for your Copperleaf account:")
    out.bullet("use at least 14 characters \u2013 three or four random words work well;")
    out.bullet("don\u2019t use the same password for any other account, work or personal;")
    out.bullet("don\u2019t include your name, your username or the word \u201cCopperleaf\u201d.")
    out.plain_req(
        "Multi-factor authentication (MFA) is switched on for every Copperleaf account. Only "
        "approve a sign-in request on your phone if you have just tried to sign in yourself."
    )
    out.box(
        "Did you know?",
        "Keeper, the password manager on your work laptop, comes with a free family licence, "
        "so you can protect your personal accounts too. Ask for it on the IT portal.",
    )

    out.heading("Phishing and suspicious messages")
    out.note(
        "Phishing messages pretend to come from someone you trust \u2013 a colleague, a "
        "supplier, a bank \u2013 to trick you into clicking a link, opening an attachment or "
        "paying a fake invoice. They are the most common way attackers get into companies "
        "like ours."
    )
    out.note("Tell-tale signs of a phishing message include:")
    out.bullet("a sender address that doesn\u2019t quite match the name of the company;", req=False)
    out.bullet("pressure to act quickly, such as a threat to close your account today;", req=False)
    out.bullet(
        "a request for your password, for gift cards or for a change of bank details.", req=False
    )
    out.plain_req(
        "If you think a message is phishing, report it with the Report Phishing button in "
        "Outlook. Don\u2019t reply to it, and don\u2019t forward it to colleagues to ask what "
        "they think."
    )
    out.plain_req(
        "Criminals often pose as suppliers and write to say that their bank details have "
        "changed. Before anyone changes a supplier\u2019s bank details, the Finance team calls "
        "the supplier back on the phone number held in our supplier records, never on a number "
        "given in the message."
    )
    out.box(
        "Did you know?",
        "Last year colleagues pressed the Report Phishing button more than 4,000 times. The "
        "Information Security team found 37 real attacks among those reports and stopped every "
        "one of them.",
    )

    out.heading("Laptops, phones and working away from the office")
    out.plain_req(
        "Your laptop is encrypted and managed by IT. Don\u2019t try to remove or switch off the "
        "security software, even if you think it is slowing you down."
    )
    out.note("When you work away from the office:")
    out.bullet("lock your screen (Windows key + L) whenever you step away;")
    out.bullet("don\u2019t let family or friends use your work laptop, even for a moment;")
    out.bullet("connect to the Copperleaf VPN before you open any internal system;")
    out.bullet("keep your laptop with you when you travel, and never leave it in a parked car.")
    out.plain_req(
        "Lost or stolen laptops and phones must be reported to the IT Service Desk on 0800 555 "
        "0199 straight away, at any time of the day or night, so that they can be wiped "
        "remotely."
    )
    out.note(
        "Nobody will be blamed for losing a device. What turns a lost laptop into a serious "
        "problem is a delay in telling us."
    )
    out.plain_req(
        "Your own phone can be used for work e-mail and Teams only after it has been enrolled "
        "in Intune, which keeps work data in a separate, encrypted area of the phone."
    )

    out.heading("Handling information")
    out.note(
        "Most of what we handle day to day is internal. Some information is confidential: "
        "recipes and product formulations, supplier prices, customer and employee personal "
        "data, and anything marked \u201cConfidential\u201d."
    )
    out.note("When you handle confidential information:")
    out.bullet(
        "store it in SharePoint or OneDrive, never on a USB stick or in a personal cloud account;"
    )
    out.bullet("share it outside Copperleaf only through a SharePoint link that expires;")
    out.bullet("print it only when you really need to, and collect your printouts straight away.")
    out.plain_req(
        "Put confidential paper in the locked blue shredding bins, never in ordinary recycling."
    )
    out.plain_req(
        "Don\u2019t forward work e-mail to a personal e-mail account, and don\u2019t set up "
        "rules that do it automatically."
    )
    out.plain_req(
        "Copilot is the only AI assistant approved for work. Don\u2019t paste confidential "
        "information into ChatGPT or any other AI tool."
    )
    out.plain_req(
        "Customer and employee personal data is kept only for as long as our retention "
        "schedule allows, and is then deleted automatically."
    )

    out.heading("In our stores, sites and offices")
    out.plain_req(
        "Wear your ID badge where it can be seen whenever you are in an office, a distribution "
        "centre or the back-of-house area of a store."
    )
    out.plain_req(
        "Tailgating is when someone follows you through a secure door without using their own "
        "badge. Don\u2019t hold secure doors open for people you don\u2019t recognise; point "
        "them politely to reception instead."
    )
    out.plain_req(
        "Card payment terminals are checked for signs of tampering by the duty manager at the "
        "start of every shift."
    )

    out.heading("Reporting a security incident")
    out.note(
        "A security incident is anything that might put our information or systems at risk: a "
        "lost laptop, a link you wish you hadn\u2019t clicked, a password written on a sticky "
        "note, or an e-mail sent to the wrong person."
    )
    out.plain_req(
        "Report every incident to the IT Service Desk as soon as you notice it, even if "
        "you\u2019re not sure that it is one."
    )
    out.note(
        "Deliberately ignoring the rules in this handbook, or trying to get around our "
        "security controls, can lead to disciplinary action under the Copperleaf Disciplinary "
        "Policy. Honest mistakes that are reported promptly never will."
    )

    out.heading("Frequently asked questions")
    out.question("Can I use ChatGPT to help me write a report?")
    out.note(
        "Only if the report contains nothing confidential. For anything confidential, use "
        "Copilot: it is included in your Microsoft 365 licence and keeps our data inside "
        "Copperleaf."
    )
    out.question("I clicked a link in a phishing e-mail. Am I in trouble?")
    out.note(
        "No. Report it straight away with the Report Phishing button and call the IT Service "
        "Desk. Acting quickly is what matters."
    )
    out.question("Why do I need MFA when I\u2019m in the office?")
    out.note(
        "Because a stolen password can be used from anywhere in the world, not only from "
        "inside our buildings. With MFA, a password on its own is not enough to get into your "
        "account."
    )
    out.question("Can I forward a document to my personal e-mail to finish it at home?")
    out.note(
        "No. You must not forward work e-mail to personal accounts. Enrol your own phone in "
        "Intune, or take your work laptop home and connect to the VPN."
    )

    furniture = ("Copperleaf Employee Security Handbook \u00b7 2026 edition",)
    layout = _Layout(
        tuple(out.blocks),
        header=None,
        footer=(furniture[0] + "    {page}",),
        step_cm=0.63,
        step_mm=6.0,
    )
    return out.policy("handbook", furniture, layout)


# --------------------------------------------------------------------------------------
# 3. register: Tessellate Cloud, platform security requirements register TC-SRR-001
# --------------------------------------------------------------------------------------


def _register() -> BlindPolicy:
    out = _Writer()
    out.title("Platform Security Requirements Register")
    out.meta(
        "Tessellate Cloud Ltd \u00b7 Document TC-SRR-001, revision C \u00b7 Owner: Platform "
        "Security \u00b7 Approved by the Security Architecture Board, 10 February 2026"
    )

    def entry(ident: str, category: str, priority: str, text: str) -> None:
        out.idline(ident, f" | {category} | {priority}")
        out.plain_req(text, label=ident, cite=ident)

    def rationale(text: str) -> None:
        out.note(text, lead="Rationale:", italic=True, small=True, indent=1)

    def verification(text: str) -> None:
        out.note(text, lead="Verification:", italic=True, small=True, indent=1)

    out.heading("1 Introduction", 1)
    out.note(
        "This register lists the security requirements that apply to the Tessellate hosting "
        "platform and to every service deployed on it. It is the single source for audit "
        "evidence requests: each requirement keeps its identifier for as long as the register "
        "exists, and withdrawn identifiers are not reused."
    )

    out.heading("2 Conventions", 1)
    out.note(
        "Each entry begins with a line giving the identifier, the category and the priority, "
        "separated by vertical bars, for example SEC-NET-002 | Network | Medium. The "
        "requirement statement follows on the next line."
    )
    out.note("High \u2013 must be met before a service goes live.")
    out.note("Medium \u2013 must be met within 90 days of go-live.")
    out.note("Low \u2013 to be met by the next major release of the service.")
    out.note(
        "Rationale and Verification paragraphs, where present, are informative. They explain "
        "why a requirement exists and how the internal audit team tests it; they do not add to "
        "the requirement."
    )

    out.heading("3 Requirements", 1)
    out.heading("3.1 Access control", 2)
    entry(
        "SEC-ACC-001",
        "Access",
        "High",
        "All access to platform consoles and production hosts shall be through the corporate "
        "identity provider using single sign-on.",
    )
    rationale("Central sign-on lets us revoke all of a leaver's access in one place.")
    verification(
        "Inspect the identity provider's application list and attempt a direct log-in to a "
        "sample of three production hosts."
    )
    entry(
        "SEC-ACC-002",
        "Access",
        "High",
        "Multi-factor authentication using a phishing-resistant method (a FIDO2 security key "
        "or a platform authenticator) is enforced for all administrative access.",
    )
    entry(
        "SEC-ACC-003",
        "Access",
        "High",
        "Standing administrative access to production is not permitted. Engineers request "
        "time-limited elevation through the access broker, and elevation expires after at most "
        "4 hours.",
    )
    verification(
        "Review the access broker's grant log for one month and confirm that no grant "
        "exceeded 4 hours."
    )
    entry(
        "SEC-ACC-004",
        "Access",
        "Medium",
        "Every service account has a named human owner recorded in the service catalogue.",
    )
    entry(
        "SEC-ACC-005",
        "Access",
        "Medium",
        "Review the membership of every privileged group quarterly and remove members who no "
        "longer need it.",
    )
    entry(
        "SEC-ACC-006",
        "Access",
        "Low",
        "Interactive SSH access to production hosts should be replaced by the session manager "
        "wherever the host image supports it.",
    )

    out.heading("3.2 Cryptography", 2)
    entry(
        "SEC-CRY-001",
        "Cryptography",
        "High",
        "Data at rest in platform storage services shall be encrypted with AES-256 using keys "
        "held in the platform key management service (KMS).",
    )
    entry(
        "SEC-CRY-002",
        "Cryptography",
        "High",
        "External endpoints accept TLS 1.2 or TLS 1.3 only; TLS 1.0, TLS 1.1 and all SSL "
        "versions are disabled.",
    )
    rationale("TLS 1.0 and TLS 1.1 were formally deprecated by RFC 8996 in 2021.")
    entry(
        "SEC-CRY-003",
        "Cryptography",
        "Medium",
        "Customer-managed keys shall be supported by every storage service that holds "
        "customer content.",
    )
    entry("SEC-CRY-004", "Cryptography", "Medium", "KMS keys are rotated automatically every year.")

    out.heading("3.3 Logging and monitoring", 2)
    entry(
        "SEC-LOG-001",
        "Logging",
        "High",
        "Every service shall send its audit events to the central log pipeline within 5 "
        "minutes of the event.",
    )
    entry(
        "SEC-LOG-002",
        "Logging",
        "High",
        "Audit logs are retained for 13 months, of which the most recent 90 days are "
        "immediately searchable, in storage with object lock enabled.",
    )
    out.idline("SEC-LOG-003", " | Logging | Withdrawn")
    out.note("Withdrawn in revision C. Log immutability is now covered by SEC-LOG-002.")
    entry(
        "SEC-LOG-004",
        "Logging",
        "Medium",
        "The detection platform pages the on-call security engineer for every critical alert, "
        "24 hours a day.",
    )
    verification(
        "Trigger the monthly synthetic critical alert and record the time taken to acknowledge it."
    )

    out.heading("3.4 Network security", 2)
    entry(
        "SEC-NET-001",
        "Network",
        "High",
        "Production networks shall deny all inbound traffic by default; every allowed flow is "
        "defined in infrastructure code and peer-reviewed.",
    )
    entry(
        "SEC-NET-002",
        "Network",
        "Medium",
        "Management interfaces are reachable only from the bastion network.",
    )
    entry(
        "SEC-NET-003",
        "Network",
        "Medium",
        "Do not assign public IP addresses to databases, caches or message brokers.",
    )
    entry(
        "SEC-NET-004",
        "Network",
        "Low",
        "Egress from production subnets should be restricted to an allow-list of destinations.",
    )
    rationale(
        "An egress allow-list stops most data exfiltration and command-and-control traffic, "
        "but some services still need broad outbound access to customer endpoints."
    )

    out.heading("3.5 Vulnerability and patch management", 2)
    entry(
        "SEC-VUL-001",
        "Vulnerability",
        "High",
        "Critical vulnerabilities in internet-facing components shall be remediated within 72 "
        "hours of a fix becoming available.",
    )
    entry(
        "SEC-VUL-002",
        "Vulnerability",
        "High",
        "Container images are rebuilt from patched base images at least weekly.",
    )
    entry(
        "SEC-VUL-003",
        "Vulnerability",
        "Medium",
        "An external penetration test of the platform is performed every year and after any "
        "major change to its architecture.",
    )

    out.heading("3.6 Backup and recovery", 2)
    entry(
        "SEC-BCK-001",
        "Backup",
        "High",
        "Customer databases are backed up continuously, with point-in-time recovery covering "
        "at least the previous 35 days.",
    )
    entry(
        "SEC-BCK-002",
        "Backup",
        "High",
        "Backups shall be copied to a second region and to a separate account in which "
        "deleting a backup requires two approvers.",
    )
    entry(
        "SEC-BCK-003",
        "Backup",
        "Medium",
        "Restore a randomly chosen customer database from backup every month and record the "
        "restore time against the 4-hour recovery time objective.",
    )
    verification("Review the restore records for the last 12 months.")

    out.heading("3.7 Incident response", 2)
    entry(
        "SEC-INC-001",
        "Incident",
        "High",
        "Security incidents shall be triaged by the on-call security engineer within 30 "
        "minutes of detection.",
    )
    entry(
        "SEC-INC-002",
        "Incident",
        "High",
        "Customers affected by a confirmed breach of their data are notified within 48 hours "
        "of the confirmation.",
    )
    entry(
        "SEC-INC-003",
        "Incident",
        "Medium",
        "A post-incident review is completed for every incident of severity 1 or 2, and its "
        "actions are tracked to closure.",
    )

    out.heading("4 Change history", 1)
    out.note(
        "Rev C, 10 February 2026: SEC-CRY-004 and SEC-BCK-003 added; SEC-LOG-003 withdrawn; "
        "the elevation limit in SEC-ACC-003 reduced from 8 hours to 4 hours."
    )
    out.note("Rev B, 2 June 2025: priority of SEC-NET-004 changed from Medium to Low.")
    out.note("Rev A, 14 October 2024: first issue.")

    furniture = ("TC-SRR-001 Rev C", "Company Confidential")
    layout = _Layout(
        tuple(out.blocks),
        header=None,
        footer=(f"{furniture[0]} | {furniture[1]} | Page {{page}} of {{pages}}",),
        step_cm=0.75,
        step_mm=7.0,
    )
    return out.policy("register", furniture, layout)


# --------------------------------------------------------------------------------------
# Word
# --------------------------------------------------------------------------------------


def _shade(paragraph: Paragraph, fill: str, border: str) -> None:
    """Give a paragraph a background colour and a box border, as Word stores them."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    properties = paragraph._p.get_or_add_pPr()
    borders = OxmlElement("w:pBdr")
    for side in ("top", "left", "bottom", "right"):
        line = OxmlElement(f"w:{side}")
        line.set(qn("w:val"), "single")
        line.set(qn("w:sz"), "6")
        line.set(qn("w:space"), "4")
        line.set(qn("w:color"), border)
        borders.append(line)
    properties.append(borders)
    shading = OxmlElement("w:shd")
    shading.set(qn("w:val"), "clear")
    shading.set(qn("w:color"), "auto")
    shading.set(qn("w:fill"), fill)
    properties.append(shading)


def _write_docx(layout: _Layout, out: Path) -> None:
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Cm, Pt, RGBColor

    document = docx.Document()
    if layout.caption_headings:
        for level in (1, 2):
            font = document.styles[f"Heading {level}"].font
            font.size = Pt(11)
            font.bold = True
            font.color.rgb = RGBColor(0, 0, 0)
    section = document.sections[0]
    if layout.header:
        header = section.header.paragraphs[0]
        header.alignment = WD_ALIGN_PARAGRAPH.CENTER
        header.add_run(layout.header).bold = True
    for index, line in enumerate(layout.footer):
        footer = section.footer.paragraphs[0] if index == 0 else section.footer.add_paragraph()
        footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
        _docx_footer(footer, line)

    for block in layout.blocks:
        if block.kind == "title":
            if layout.centred_title:
                paragraph = document.add_paragraph()
                paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
                run = paragraph.add_run(block.text)
                run.bold = True
                run.font.size = Pt(13)
                paragraph.paragraph_format.space_after = Pt(6)
            else:
                document.add_heading(block.text, 0)
        elif block.kind == "meta":
            paragraph = document.add_paragraph()
            if layout.centred_title:
                paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
            run = paragraph.add_run(block.text)
            run.italic = True
            run.font.size = Pt(9)
        elif block.kind == "heading":
            document.add_heading(block.text, block.level)
        elif block.kind == "para":
            paragraph = document.add_paragraph()
            if block.indent:
                paragraph.paragraph_format.left_indent = Cm(block.indent * layout.step_cm)
            size = Pt(9) if block.small else None
            if block.lead:
                lead = paragraph.add_run(block.lead)
                lead.bold = not block.lead_italic
                lead.italic = block.lead_italic
                lead.font.size = size
                if block.text:
                    paragraph.add_run(" " + block.text).font.size = size
            else:
                paragraph.add_run(block.text).font.size = size
        elif block.kind == "item":  # full number, two spaces, text wrapping to the margin
            paragraph = document.add_paragraph()
            if block.level:
                paragraph.paragraph_format.first_line_indent = Cm(block.level * layout.step_cm)
            paragraph.add_run((block.label or "") + "  ")
            if block.caption:
                paragraph.add_run(block.caption).underline = True
                paragraph.add_run(" ")
            paragraph.add_run(block.text)
        elif block.kind == "ref":  # label in a hanging indent
            paragraph = document.add_paragraph()
            fmt = paragraph.paragraph_format
            stop = Cm(block.level * layout.step_cm + 1.0)
            fmt.left_indent = stop
            fmt.first_line_indent = Cm(-1.0)
            fmt.tab_stops.add_tab_stop(stop)
            fmt.space_after = Pt(2)
            paragraph.add_run((block.label or "") + "\t" + block.text)
        elif block.kind == "bullet":
            document.add_paragraph(block.text, style="List Bullet")
        elif block.kind == "box":
            paragraph = document.add_paragraph()
            _shade(paragraph, "EAF2E3", "7A9A5A")
            fmt = paragraph.paragraph_format
            fmt.left_indent = Cm(0.3)
            fmt.right_indent = Cm(0.3)
            fmt.space_before = Pt(6)
            fmt.space_after = Pt(10)
            paragraph.add_run(block.lead or "").bold = True
            paragraph.add_run(" " + block.text)
        elif block.kind == "question":
            paragraph = document.add_paragraph()
            paragraph.paragraph_format.space_before = Pt(8)
            paragraph.paragraph_format.keep_with_next = True
            paragraph.add_run(block.text).bold = True
        elif block.kind == "idline":  # "SEC-ACC-001 | Access | High"
            paragraph = document.add_paragraph()
            fmt = paragraph.paragraph_format
            fmt.space_before = Pt(10)
            fmt.space_after = Pt(2)
            fmt.keep_with_next = True
            paragraph.add_run(block.label or "").bold = True
            paragraph.add_run(block.text)
        else:  # sign
            paragraph = document.add_paragraph(block.text)
            paragraph.paragraph_format.left_indent = Cm(8.0)
            paragraph.paragraph_format.space_after = Pt(0)
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
                self.set_font("helvetica", "B", 10)
                self.cell(0, 5, layout.header, align="C")
                self.ln(10)

        def footer(self) -> None:
            self.set_y(-14 - 4.5 * (len(layout.footer) - 1))
            for line in layout.footer:
                bold = line == layout.header
                self.set_font("helvetica", "B" if bold else "", 10 if bold else 8)
                if bold:
                    self.set_text_color(0, 0, 0)
                else:
                    self.set_text_color(90, 90, 90)
                text = line.replace("{page}", str(self.page_no())).replace("{pages}", "{nb}")
                self.cell(0, 4.5, text, align="C")
                self.ln(4.5)
            self.set_text_color(0, 0, 0)

    pdf = Document(format="A4")
    pdf.core_fonts_encoding = "windows-1252"  # dashes, middle dots, curly quotes
    pdf.set_margins(22, 18, 22)
    pdf.set_auto_page_break(True, 24)
    pdf.set_title(name)
    pdf.add_page()

    for block in layout.blocks:
        if block.kind == "title":
            pdf.set_font("helvetica", "B", 13 if layout.centred_title else 18)
            pdf.multi_cell(
                0,
                7 if layout.centred_title else 8.5,
                block.text,
                align="C" if layout.centred_title else "L",
            )
            pdf.ln(2)
        elif block.kind == "meta":
            pdf.set_font("helvetica", "I", 9)
            pdf.multi_cell(0, 4.5, block.text, align="C" if layout.centred_title else "L")
            pdf.ln(4)
        elif block.kind == "heading":
            if pdf.get_y() > pdf.h - 50:
                pdf.add_page()
            pdf.ln(2 if layout.caption_headings else 3)
            if outline:
                pdf.start_section(block.text, level=block.level - 1)
            if layout.caption_headings:
                pdf.set_font("helvetica", "B", 10.5)
                pdf.multi_cell(0, _LINE, block.text)
            else:
                pdf.set_font("helvetica", "B", 13 if block.level == 1 else 11.5)
                pdf.multi_cell(0, 7, block.text)
            pdf.ln(2)
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
                if block.text:
                    pdf.set_font("helvetica", size=size)
                    pdf.write(line, " " + block.text)
                pdf.ln(line)
                pdf.set_left_margin(margin)
            else:
                pdf.set_font("helvetica", size=size)
                pdf.set_x(x)
                pdf.multi_cell(0, line, block.text, align="L")
            pdf.ln(2)
        elif block.kind == "item":  # full number, two spaces, text wrapping to the margin
            pdf.set_x(pdf.l_margin + block.level * layout.step_mm)
            pdf.set_font("helvetica", size=10.5)
            pdf.write(_LINE, (block.label or "") + "  ")
            if block.caption:
                pdf.set_font("helvetica", "U", 10.5)
                pdf.write(_LINE, block.caption)
                pdf.set_font("helvetica", size=10.5)
                pdf.write(_LINE, " ")
            pdf.write(_LINE, block.text)
            pdf.ln(_LINE)
            pdf.ln(2)
        elif block.kind == "ref":  # label in a hanging indent
            pdf.set_font("helvetica", size=10.5)
            pdf.set_x(pdf.l_margin + block.level * layout.step_mm)
            pdf.cell(10, _LINE, block.label or "")
            pdf.multi_cell(0, _LINE, block.text, align="L")
            pdf.ln(0.8)
        elif block.kind == "bullet":
            pdf.set_font("helvetica", size=10.5)
            pdf.set_x(pdf.l_margin + layout.step_mm)
            pdf.cell(5, _LINE, "\u2022")
            pdf.multi_cell(0, _LINE, block.text, align="L")
            pdf.ln(1.2)
        elif block.kind == "box":
            pdf.ln(1)
            pdf.set_font("helvetica", size=10)
            pdf.set_fill_color(234, 242, 227)
            pdf.set_draw_color(122, 154, 90)
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
        elif block.kind == "question":
            if pdf.get_y() > pdf.page_break_trigger - 20:
                pdf.add_page()
            pdf.ln(2)
            pdf.set_font("helvetica", "B", 10.5)
            pdf.multi_cell(0, _LINE, block.text, align="L")
            pdf.ln(1)
        elif block.kind == "idline":  # "SEC-ACC-001 | Access | High"
            if pdf.get_y() > pdf.page_break_trigger - 20:
                pdf.add_page()
            pdf.ln(2.5)
            pdf.set_font("helvetica", "B", 10)
            pdf.write(_LINE, block.label or "")
            pdf.set_font("helvetica", size=10)
            pdf.write(_LINE, block.text)
            pdf.ln(_LINE)
            pdf.ln(0.8)
        else:  # sign
            if block.text.isupper():  # the first line: keep the block together
                if pdf.get_y() > pdf.page_break_trigger - 40:
                    pdf.add_page()
                pdf.ln(8)
            pdf.set_font("helvetica", size=10.5)
            pdf.set_x(pdf.l_margin + 88)
            pdf.multi_cell(0, _LINE, block.text, align="L")
            if not block.text.isupper():
                pdf.ln(4)
    pdf.output(str(out))


POLICIES: tuple[BlindPolicy, ...] = (_military(), _handbook(), _register())
