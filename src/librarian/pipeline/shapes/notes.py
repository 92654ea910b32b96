"""Paragraphs and headings that explain a document rather than require anything of it,
whatever they say: a note, guidance, a recital, a savings clause, a history note; a
document's purpose, scope, definitions or sign-off. Read by the segmenter and by a PDF's
line reader alike."""

from __future__ import annotations

import re

# A paragraph that explains rather than requires, whatever it says (a recital, "Whereas
# ...", gives a charter's or a regulation's reasons; a savings clause, "Nothing in this
# section limits ...", what a code leaves untouched; a history note in brackets, "(Res.
# No. 2019-14, § 4)", where a clause came from; a handbook's "Did you know? ..." box).
NOTE_PREFIX = re.compile(
    r"^\s*(?:whereas\s|nothing in this\s|did you know\?\s|\((?!\w{1,4}\))[^()]*\)\s*$|"
    r"(?:(?:explanatory |informative |editor'?s? )?notes?|background|rationale|why|"
    r"explanation|cross[- ]references?|examples?|cancellation|applicability|consequences|"
    r"effective date|forms|distribution|enclosures?|verification|"
    r"(?:implementation |additional |supplementary )?guidance|"
    r"comments?|commentary|remarks?|discussion|informative|context|scope|purpose|"
    r"definitions?|see also|references?|related (?:policies|documents|standards)|"
    r"responsibilit(?:y|ies)|exceptions?|tip|hint|illustration|objectives?|not applicable)"
    r"\s*(?:\d+\s*)?"
    r"(?:[:.\u2013\u2014-]\s|:$))",
    re.IGNORECASE,
)
# A heading whose text explains the document rather than requires anything of it.
NOTE_HEADING = re.compile(
    r"^(?:(?:part|section|sec\.|chapter|article|art\.|clause|§)\s*[\dIVXivx]+[.:]?\s*"
    r"[-\u2013\u2014:]?\s*)?(?:penalties|sanctions|effective date|"
    r"(?:scope|purpose|subject matter|applicability)(?: and "
    r"(?:scope|purpose|objectives?|applicability|application|authority))?|"
    r"entry into force(?: and (?:termination|duration))?|"
    r"final provisions|commencement|acknowledge?ments?|declaration|sign-?off|signatures?|"
    r"approvals?|background|introduction|foreword|preface|preamble|overview|definitions|"
    r"terms and definitions|glossary|abbreviations|references|normative references|"
    r"related (?:documents|policies|standards)|document (?:control|history|"
    r"information)|revision history|version history|change (?:log|history)|changelog|about this "
    r"(?:policy|document|standard)|audience|contacts?|frequently asked questions|faqs?|"
    r"questions and answers)\.?$",
    re.IGNORECASE,
)


# What follows a breach of the document, when the text obliges no one: a sanctions clause
# ("Breaches of this policy may be dealt with under ...", "Failure to comply with this
# standard may result in ..."). "Breaches of this policy must be reported ..." is a rule.
SANCTION = re.compile(
    r"^\s*(?:any\s+)?(?:breach(?:es)?|violations?|failure\s+to\s+comply\s+with|"
    r"non-?compliance\s+with)\s+(?:of\s+)?this\s",
    re.IGNORECASE,
)
# A standard's notes and examples as ISO and IEC set them: the word in capitals, a number
# perhaps, then the text with no colon ("NOTE 2 The list is not exhaustive.", "EXAMPLE A
# supplier's engineer ..."). In capitals only: "Note that users must ..." is a sentence.
ISO_NOTE = re.compile(r"^\s*(?:NOTE|EXAMPLE)(?:\s+\d+)?(?:\s+to entry)?\s+(?=\S)")
OBLIGES = re.compile(r"\b(?:must|shall|should|is required|are required)\b", re.IGNORECASE)


def is_note(text: str) -> bool:
    sanction = bool(SANCTION.match(text)) and not OBLIGES.search(text)
    return sanction or bool(NOTE_PREFIX.match(text) or ISO_NOTE.match(text))
