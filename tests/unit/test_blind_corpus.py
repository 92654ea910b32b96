"""Issue 58: policies written without sight of the segmenter (`tests/blind_policies.py`,
and a second and a third set each scored before the segmenter was changed for it,
`blind_policies_two.py` and `blind_policies_three.py`; four house styles of the first: a
two-level "IV.a" outline in mixed wording with a running footer that reads as an id, a
government template's "3.2(a)" sub-clauses under lead-ins, an engineering standard's
"R-01" rules and bulleted lists under unlabelled lead-ins, a bank's "Art. 4(1)"
paragraphs under headings set bold by hand), each saved as Word, as a
PDF with bookmarks and as a PDF without, are read item for item: every requirement its own
item under the document's own label, no note sent or glued on, no page furniture read,
the same ids whatever the file was saved as."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from librarian.pipeline.plain import plain_rows
from librarian.pipeline.shapes.clauses import ends_a_lead_in
from librarian.schemas.records import Skip
from tests.blind_policies import POLICIES, BlindPolicy
from tests.blind_policies_five import POLICIES as FIFTH
from tests.blind_policies_four import POLICIES as FOURTH
from tests.blind_policies_three import POLICIES as THIRD
from tests.blind_policies_two import POLICIES as HELD_OUT

KINDS = ("docx", "pdf", "bare.pdf")
EVERY = (*POLICIES, *HELD_OUT, *THIRD, *FOURTH, *FIFTH)
CASES = [(policy, kind) for policy in EVERY for kind in KINDS]
# What is still read wrong, said here so that a change either way fails: each later set
# was scored once before any rule was changed for it (docs/quality.md).
# The third set (`blind_policies_three.py`): the annex's introduction says what its
# control text is "required" to state, so it is read as an item; a PDF without bookmarks
# reads a control's title alone ("A.14.2.7 Outsourced development", whose only text is a
# "Not applicable." note) as a clause of its own.
INTRODUCTION = [
    "no requirement in preamble-1: This annex lists the information security controls",
    "a note in an item: this annex lists the information security controls",
]
TITLE_ALONE = "no requirement in A.14.2.7: Outsourced development"
# The fourth (`blind_policies_four.py`), scored before any rule changed for it: a
# directive's "Policy." paragraph and its signature's title; a register's priority
# conventions and a withdrawn entry's note.
DIRECTIVE = [
    "no requirement in preamble-1: Policy. It is Halberd policy to protect CUI entrus",
    "a note in an item: policy. it is halberd policy to protect cui entrus",
    "a note in an item: chief security officer",
]
REGISTER = [
    "no requirement in conventions-1: High \u2013 must be met before a service goes live.",
    "no requirement in conventions-2: Medium \u2013 must be met within 90 days of go-live. Lo",
    "no requirement in SEC-LOG-003: | Logging | Withdrawn Withdrawn in revision C. Log",
    "a note in an item: high \u2013 must be met before a service goes live.",
    "a note in an item: medium \u2013 must be met within 90 days of go-live.",
    "a note in an item: low \u2013 to be met by the next major release of the s",
    "a note in an item: rationale and verification paragraphs, where prese",
    "a note in an item: withdrawn in revision c. log immutability is now c",
]
# The fifth (`blind_policies_five.py`), scored before any rule changed for it (then 86
# problems in Word, 68 and 87 in the PDFs; docs/quality.md): a works agreement's
# paragraphs that set out principles or disputes ("§ 3(1)", "§ 13") read as items, as
# any labelled clause is; its lead-ins that run on into their points ("(1) Passwords
# must") read with each point, as a lead-in ending in a colon is, and a centred "and"
# between the parties found in any text.
AGREEMENT = [
    "no requirement in \u00a7 3(1): Information security serves to protect the confide",
    "no requirement in \u00a7 13: In the event of disagreement on the interpretation",
    "a note in an item: and",
    "a note in an item: information security serves to protect the confide",
    "a note in an item: passwords must",
    "a note in an item: when working outside the company's premises, emplo",
    "a note in an item: an evaluation of log data relating to individual e",
    "a note in an item: in the event of disagreement on the interpretation",
]
STILL_WRONG = {
    ("agreement", "docx"): AGREEMENT,
    ("agreement", "pdf"): [
        "no requirement in \u00a7 3(1): Principles Information security serves to protect ",
        "no requirement in \u00a7 13: Disputes In the event of disagreement on the inter",
        *AGREEMENT[2:],
    ],
    ("agreement", "bare.pdf"): AGREEMENT,
    **{("register", kind): REGISTER for kind in KINDS},
    ("military", "docx"): DIRECTIVE,
    ("military", "pdf"): DIRECTIVE,
    ("military", "bare.pdf"): [
        *DIRECTIVE[:1],
        "no requirement in preamble-2: Responsibilities.",
        *DIRECTIVE[1:],
    ],
    ("annex", "docx"): INTRODUCTION,
    ("annex", "pdf"): INTRODUCTION,
    ("annex", "bare.pdf"): [*INTRODUCTION[:1], TITLE_ALONE, *INTRODUCTION[1:]],
}


# A handbook in prose (the fourth set): too many to list, so counted by kind. One
# requirement is lost as context ("Wear your ID badge ...": no modal, and the wording
# classifier reads it at 0.43), two or six glued; notes (the chief executive's letter,
# the scope, a "Tell-tale signs ... include:" list) read as items.
PROSE = {
    ("handbook", "docx"): {"glued": 2, "lost": 1, "no requirement": 5, "a note in": 10},
    ("handbook", "pdf"): {"glued": 6, "lost": 1, "no requirement": 5, "a note in": 10},
    ("handbook", "bare.pdf"): {"glued": 6, "lost": 1, "no requirement": 9, "a note in": 14},
    # An SOP's steps, each its own item in every kind, cited as a person cites them
    # ("Procedure B, Step 3"); a duty in the present tense read with the one before; two
    # labelled notes ("7.3", "8.3") and the equality impact assessment read as items.
    ("sop", "docx"): {"glued": 2, "no requirement": 3, "a note in": 4},
    ("sop", "pdf"): {"glued": 2, "no requirement": 3, "a note in": 3},
    ("sop", "bare.pdf"): {"glued": 2, "no requirement": 3, "a note in": 3},
}


def counted(found: list[str]) -> dict[str, int]:
    """Problems by kind: "lost" (a requirement in no item of its own or glued), "glued",
    "no requirement" (an item that is none), "a note in" (a note read into an item)."""
    kinds = {"glued": " glued to ", "lost": " in 0 items", "no requirement": "no requirement"}
    out: dict[str, int] = {}
    for problem in found:
        kind = next((k for k, said in kinds.items() if said in problem), problem[:9])
        out[kind] = out.get(kind, 0) + 1
    return out


def _words(text: str) -> str:
    return " ".join(text.split()).lower()


# A citation's section word is the document's style, not its numbering: "Sec. 4(a)" is
# the "4(a)" the city's code cites, "Article 5" its charter's "Art. 5". So is how its
# counters are set off: "4.3 a)" is the "4.3(a)" it is read as, a statute's "§ 4(2) no. 1"
# its "§ 4(2)(1)". What must match is the counters, in order.
_SECTION_WORD = re.compile(r"^(?:sec\.|section|art\.|article|§)\s*", re.IGNORECASE)
_POINT_WORD = re.compile(r"\bno\.\s*", re.IGNORECASE)


def _cite(label: str) -> str:
    return " ".join(re.findall(r"[A-Za-z]+|\d+", _POINT_WORD.sub("", _SECTION_WORD.sub("", label))))


def items(path: Path) -> list[tuple[str, str]]:
    """(id, text) of every item the document was read into, notes left out."""
    rows = plain_rows(path, "Blind")
    notes = {n for n, r in rows.records.items() if isinstance(r, Skip)}
    return [
        (item["locator"]["id"].split("#", 1)[1].split(" (")[0], item["content"]["text"])
        for line, item in rows.items.items()
        if line not in notes
    ]


def problems(policy: BlindPolicy, read: list[tuple[str, str]]) -> list[str]:
    """What a person would object to in how the policy was read (none: item for item)."""
    texts = [_words(t) for _, t in read]
    wanted = [_words(r.text) for r in policy.requirements]
    found = []
    for requirement, words in zip(policy.requirements, wanted, strict=True):
        holding = [n for n, t in enumerate(texts) if words in t]
        if len(holding) != 1:
            found.append(f"{requirement.label} in {len(holding)} items: {words[:50]}")
            continue
        glued = [w for w in wanted if w != words and w in texts[holding[0]]]
        ids = {_cite(i) for i in (requirement.label, requirement.cite) if i is not None}
        if glued:
            found.append(f"{requirement.label} glued to {glued[0][:40]}")
        elif ids and _cite(read[holding[0]][0]) not in ids:
            found.append(f"{requirement.cite} read as {read[holding[0]][0]}")
    found += [
        f"no requirement in {i}: {t[:50]}"
        for (i, t), w in zip(read, texts, strict=True)
        if not any(r in w for r in wanted)
    ]
    notes = [_words(n) for n in policy.notes if not ends_a_lead_in(n)]  # lead-ins: read
    found += [f"a note in an item: {n[:50]}" for n in notes if any(n in t for t in texts)]
    found += [
        f"page furniture in an item: {f}"
        for f in policy.furniture
        if any(" ".join(f.split()) in " ".join(t.split()) for _, t in read)  # as set
    ]
    return found


@pytest.mark.parametrize(("policy", "kind"), CASES, ids=[f"{p.name}.{k}" for p, k in CASES])
def test_a_policy_written_blind_is_read_item_for_item(
    tmp_path: Path, policy: BlindPolicy, kind: str
) -> None:
    found = problems(policy, items(policy.save(kind, tmp_path)))
    if (policy.name, kind) in PROSE:
        assert counted(found) == PROSE[policy.name, kind]
    else:
        assert found == STILL_WRONG.get((policy.name, kind), [])


@pytest.mark.parametrize("policy", EVERY, ids=[p.name for p in EVERY])
def test_word_and_both_pdfs_give_the_same_ids(tmp_path: Path, policy: BlindPolicy) -> None:
    ids = {kind: [i for i, _ in items(policy.save(kind, tmp_path))] for kind in KINDS}
    if policy.name == "annex":  # TITLE_ALONE: one clause more without bookmarks
        ids["bare.pdf"].remove("A.14.2.7")
    if policy.name == "military":  # a caption read as a clause without bookmarks
        ids["bare.pdf"].remove("preamble-2")
    if policy.name == "handbook":  # PROSE: its PDFs glue and split unlike its Word file
        assert ids["docx"] != ids["pdf"] != ids["bare.pdf"]
        return
    assert ids["docx"] == ids["pdf"] == ids["bare.pdf"]
