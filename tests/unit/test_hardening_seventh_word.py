"""Issue 56, the Word reader. Small hostile files cost without bound (a list level of
10^8: 100 s and 1.6 GB; an upper-Roman list starting at 10^9: 37 s; 30,000 styles each
based on the one before: 50 s; 3 million empty paragraphs: 4.5 min and 9.4 GB); a DTD
passed in a UTF-16 part or in a main part named `document.dat`; and requirements were
lost without a word, in a text box, in the Title style and in a merged table cell. Each
file here is built with zipfile, part by part."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from librarian.pipeline.plain import PlainInputError, plain_rows
from librarian.pipeline.shapes import word

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MAIN_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
PART_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.{}+xml"
RELATION = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/{}"
# Budgets the Word reader keeps to on a hostile file, measured in a process of its own.
# Memory is the growth of the process's peak resident size: lxml's tree lives outside
# Python's allocator, where tracemalloc cannot see it (and tracing every allocation
# slowed the reading tenfold).
CPU_SECONDS = 5.0  # time.process_time of reading it
MEMORY_BYTES = 200 * 2**20
WALL_SECONDS = 120  # a reading still going by then has failed its budget many times over


def _xml(root: str, inner: str, doctype: str = "") -> str:
    tag = root.split()[0]
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>{doctype}'
        f'<w:{root} xmlns:w="{W_NS}">{inner}</w:{tag}>'
    )


def docx(
    path: Path,
    body: str,
    *,
    styles: str | None = None,
    numbering: str | None = None,
    main: str = "word/document.xml",
    encode: Callable[[str], bytes] = str.encode,
    doctype: str = "",
) -> Path:
    """A .docx whose main part (named `main`) holds `body`, encoded by `encode` (its XML
    declaration's encoding changed to match)."""
    document = _xml("document", f"<w:body>{body}</w:body>", doctype)
    if encode is not str.encode:
        document = document.replace('encoding="UTF-8"', 'encoding="UTF-16"')
    parts = {main: encode(document)}
    kinds = {"/" + main: MAIN_TYPE}
    relations = []
    for name, inner in (("styles", styles), ("numbering", numbering)):
        if inner is not None:
            parts[f"word/{name}.xml"] = _xml(name, inner).encode()
            kinds[f"/word/{name}.xml"] = PART_TYPE.format(name)
            relations.append(
                f'<Relationship Id="r{name}" Type="{RELATION.format(name)}" Target="{name}.xml"/>'
            )
    rels = "http://schemas.openxmlformats.org/package/2006/relationships"
    folder, name = main.rsplit("/", 1)
    parts[f"{folder}/_rels/{name}.rels"] = (
        f'<?xml version="1.0"?><Relationships xmlns="{rels}">{"".join(relations)}</Relationships>'
    ).encode()
    parts["_rels/.rels"] = (
        f'<?xml version="1.0"?><Relationships xmlns="{rels}"><Relationship Id="rId1" '
        f'Type="{RELATION.format("officeDocument")}" Target="{main}"/></Relationships>'
    ).encode()
    overrides = "".join(f'<Override PartName="{p}" ContentType="{t}"/>' for p, t in kinds.items())
    parts["[Content_Types].xml"] = (
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
        'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        f"{overrides}</Types>"
    ).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        for part, data in parts.items():
            package.writestr(part, data)
    return path


def para(text: str, style: str = "", extra: str = "") -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{props}<w:r><w:t>{text}</w:t></w:r>{extra}</w:p>"


def listed(text: str, ilvl: int, num: int = 1) -> str:
    return (
        f'<w:p><w:pPr><w:numPr><w:ilvl w:val="{ilvl}"/><w:numId w:val="{num}"/></w:numPr>'
        f"</w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"
    )


def numbering(fmt: str, start: int) -> str:
    levels = "".join(
        f'<w:lvl w:ilvl="{i}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>'
        f'<w:lvlText w:val="%{i + 1}."/></w:lvl>'
        for i in range(9)
    )
    return (
        f'<w:abstractNum w:abstractNumId="0">{levels}</w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
    )


def style(style_id: str, name: str, based: str = "", outline: int | None = None) -> str:
    inner = f'<w:name w:val="{name}"/>'
    inner += f'<w:basedOn w:val="{based}"/>' if based else ""
    inner += f'<w:pPr><w:outlineLvl w:val="{outline}"/></w:pPr>' if outline is not None else ""
    return f'<w:style w:type="paragraph" w:styleId="{style_id}">{inner}</w:style>'


def items(path: Path) -> list[tuple[str, str]]:
    """(row id, text) of every item read, notes left out."""
    read = plain_rows(path, "Policy")
    return [
        (item["locator"]["id"].split("#", 1)[1].split(" (")[0], item["content"]["text"])
        for line, item in read.items.items()
        if "NOT_A_REQUIREMENT" not in str(read.records.get(line))
    ]


# Item 1: what a small file may cost ------------------------------------------------------


RULES = "".join(listed(f"Rule {n} must hold.", 0) for n in range(3))
CHAIN = 30_000


def _chain_styles() -> str:
    """Each style based on the one before, the first a heading (outline level 0)."""
    first = style("S0", "Chapter", outline=0)
    return first + "".join(style(f"S{n}", f"Kind {n}", f"S{n - 1}") for n in range(1, CHAIN))


HOSTILE: dict[str, Callable[[Path], Path]] = {
    "list level 10^8": lambda p: docx(
        p, listed("Users must sign in.", 10**8), numbering=numbering("decimal", 1)
    ),
    "three paragraphs at level 10^7": lambda p: docx(
        p,
        "".join(listed(f"Rule {n} must hold.", 10**7) for n in range(3)),
        numbering=numbering("decimal", 1),
    ),
    "upper-Roman list starting at 10^9": lambda p: docx(
        p, RULES, numbering=numbering("upperRoman", 10**9)
    ),
    "30,000 styles each based on the one before": lambda p: docx(
        p,
        para("Access", f"S{CHAIN - 1}") + para("Users must sign in."),
        styles=_chain_styles(),
    ),
    "styles based on each other in a ring": lambda p: docx(
        p,
        para("Users must sign in.", "S0"),
        styles="".join(style(f"S{n}", f"Kind {n}", f"S{(n + 1) % CHAIN}") for n in range(CHAIN)),
    ),
    "a merged cell spanning 10^9 columns": lambda p: docx(
        p,
        '<w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val="1000000000"/></w:tcPr>'
        f"{para('SEC-1 Users must sign in.')}</w:tc></w:tr></w:tbl>",
    ),
    "a row of 50,000 cells above 5,000 rows": lambda p: docx(
        p,
        f"<w:tbl><w:tr><w:tc>{para('ID')}</w:tc>"
        + "<w:tc/>" * 50_000
        + "</w:tr>"
        + f"<w:tr><w:tc>{para('SEC-1 Users must sign in.')}</w:tc></w:tr>" * 5_000
        + "</w:tbl>",
    ),
    "5,000 lists over a definition of 100,000 levels": lambda p: docx(
        p,
        RULES,
        numbering='<w:abstractNum w:abstractNumId="0">'
        + "".join(f'<w:lvl w:ilvl="{n}"><w:start w:val="1"/></w:lvl>' for n in range(100_000))
        + "</w:abstractNum>"
        + "".join(
            f'<w:num w:numId="{n}"><w:abstractNumId w:val="0"/></w:num>' for n in range(5_000)
        ),
    ),
    "paragraphs up to the cap": lambda p: docx(
        p,
        para("Users must sign in.")
        + "<w:p><w:r><w:t>a</w:t></w:r></w:p>" * (word.MAX_PARAGRAPHS - 1),
    ),
    "one paragraph of elements up to the cap": lambda p: docx(
        p,
        "<w:p><w:r><w:t>Users must sign in.</w:t></w:r>"
        + "<w:r/>" * (word.MAX_ELEMENTS - 10)
        + "</w:p>",
    ),
}

MEASURE = """
import json, resource, sys, time
from pathlib import Path
from librarian.pipeline.plain import PlainInputError
from librarian.pipeline.shapes import word
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.process_time()
try:
    said = f"{len(list(word.read(Path(sys.argv[1]))))} rows"
except PlainInputError as refused:
    said = f"refused: {refused}"
print(json.dumps({
    "cpu": time.process_time() - started,
    "memory": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024,
    "said": said,
}))
"""


def measured(path: Path) -> dict[str, object]:
    """How the Word reader read `path`, in a process of its own: its CPU seconds, how far
    the process's peak resident memory grew, and the rows it gave or why it refused."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path)],
        capture_output=True,
        text=True,
        timeout=WALL_SECONDS,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_word_file_under_the_limits_is_read_within_budget(
    tmp_path: Path, case: str
) -> None:
    path = HOSTILE[case](tmp_path / "hostile.docx")
    assert path.stat().st_size < 4 * 2**20  # small on disk
    try:
        result = measured(path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: still reading after {WALL_SECONDS} s")
    assert str(result["said"]).endswith("rows"), result  # read, not refused
    assert float(str(result["cpu"])) < CPU_SECONDS, result
    assert int(str(result["memory"])) < MEMORY_BYTES, result


OVER: dict[str, tuple[Callable[[Path], Path], str]] = {
    "3 million empty paragraphs (a 102 MB main part)": (
        lambda p: docx(p, "<w:p><w:r><w:t>a</w:t></w:r></w:p>" * 3_000_000),
        r"too large to read as one document: its main part inflates to 97 MiB, past the 32 MiB",
    ),
    "one paragraph more than the cap": (
        lambda p: docx(p, "<w:p/>" * (word.MAX_PARAGRAPHS + 1)),
        r"holds more than 20,000 paragraphs \(table cells' and text boxes' counted\)",
    ),
    "one element more than the cap": (
        lambda p: docx(p, f"<w:p>{'<w:r/>' * word.MAX_ELEMENTS}</w:p>"),
        r"its part word/document.xml holds more than 1,000,000 XML elements",
    ),
}


@pytest.mark.parametrize("case", list(OVER))
def test_a_word_file_over_the_limits_is_refused_with_its_reason_within_budget(
    tmp_path: Path, case: str
) -> None:
    build, reason = OVER[case]
    result = measured(build(tmp_path / "over.docx"))
    said = str(result["said"])
    assert said.startswith("refused: ") and re.search(reason, said), result
    assert "\n" not in said
    assert float(str(result["cpu"])) < CPU_SECONDS, result
    assert int(str(result["memory"])) < MEMORY_BYTES, result


def test_word_s_own_limits_hold_list_levels_and_start_values() -> None:
    """A level past 8 is read as 8, a start past 32767 as 32767; numerals are built a
    digit at a time."""
    from librarian.pipeline.shapes.word_lists import MAX_START, list_level, roman_numeral

    assert [list_level(v) for v in ("0", "3", "8", "9", "100000000", "-1", None)] == [
        0, 3, 8, 8, 8, 0, 0,
    ]  # fmt: skip
    assert MAX_START == 32767
    assert roman_numeral(1994) == "mcmxciv" and roman_numeral(10**9) == "m" * 10**6


def test_the_lists_of_a_hostile_numbering_part_are_read_at_word_s_limits(
    tmp_path: Path,
) -> None:
    """The numbers Word shows, at its limits: level 10^8 is read as level 8 (its label
    a nine-part number, a requirement's id, each level above it not yet counted), and a
    start of 10^9 as 32767 (its label "32767.1")."""
    levels = "".join(
        f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="decimal"/>'
        f'<w:lvlText w:val="{".".join(f"%{k + 1}" for k in range(i + 1))}"/></w:lvl>'
        for i in range(9)
    )
    parts = (
        f'<w:abstractNum w:abstractNumId="0">{levels}</w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
        '<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:start w:val="1000000000"/>'
        '<w:numFmt w:val="decimal"/><w:lvlText w:val="%1.1"/></w:lvl></w:abstractNum>'
        '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>'
    )
    body = listed("Users must sign in.", 10**8) + listed("Keys must be rotated.", 0, num=2)
    path = docx(tmp_path / "levels.docx", body, numbering=parts)
    assert items(path) == [
        ("0.0.0.0.0.0.0.0.1", "Users must sign in."),
        ("32767.1", "Keys must be rotated."),
    ]


def test_a_long_chain_of_styles_gives_its_heading_level_in_one_walk(tmp_path: Path) -> None:
    """The outline level comes down the whole chain, each style walked once (each was
    walked from every style below it: 50 s)."""
    import time

    path = HOSTILE["30,000 styles each based on the one before"](tmp_path / "chain.docx")
    started = time.process_time()
    assert items(path) == [("access-1", "Users must sign in.")]
    assert time.process_time() - started < CPU_SECONDS


# Item 2: a DTD in any part the reader parses, whatever its encoding or name ------------

ENTITY = '<!DOCTYPE w:document [<!ENTITY secret "kept out">]>'
RULE = para("SEC-01 Passwords must be hashed &secret;.")


def _utf16(text: str) -> bytes:
    return text.encode("utf-16")


@pytest.mark.parametrize(
    ("main", "encode"),
    [("word/document.xml", _utf16), ("word/document.dat", str.encode)],
    ids=["a UTF-16 main part", "a main part named document.dat"],
)
def test_a_dtd_is_refused_whatever_the_part_s_encoding_or_name(
    tmp_path: Path, main: str, encode: Callable[[str], bytes]
) -> None:
    """Both were read, the entity's text dropped: the byte scan for `<!DOCTYPE` looked
    for UTF-8 bytes in parts named .xml. The parser now says whether it met a DTD."""
    path = docx(tmp_path / "dtd.docx", RULE, main=main, encode=encode, doctype=ENTITY)
    with pytest.raises(PlainInputError, match=rf"its part {main} declares a DTD") as refused:
        plain_rows(path)
    assert "\n" not in str(refused.value)
    plain = docx(tmp_path / "plain.docx", para("SEC-01 Passwords must be hashed."), main=main)
    assert items(plain) == [("SEC-01", "Passwords must be hashed.")]  # the part itself is fine


def test_a_dtd_in_a_utf16_styles_part_is_refused(tmp_path: Path) -> None:
    path = docx(tmp_path / "styles.docx", RULE.replace("&secret;", ""), styles="")
    with zipfile.ZipFile(path) as package:
        parts = {name: package.read(name) for name in package.namelist()}
    doctype = ENTITY.replace("w:document", "w:styles")
    styles = _xml("styles", style("Title", "Title"), doctype).replace("UTF-8", "UTF-16")
    parts["word/styles.xml"] = _utf16(styles)
    with zipfile.ZipFile(path, "w") as package:
        for name, data in parts.items():
            package.writestr(name, data)
    with pytest.raises(PlainInputError, match=r"its part word/styles.xml declares a DTD"):
        plain_rows(path)


# Item 3: no requirement lost without a word --------------------------------------------


def _text_box(text: str) -> str:
    """A text box anchored in a paragraph, as Word writes it: for Word and, again, for
    older readers (its VML fallback)."""
    box = f"<w:txbxContent>{para(text)}</w:txbxContent>"
    mc = "http://schemas.openxmlformats.org/markup-compatibility/2006"
    return (
        f'<w:r><mc:AlternateContent xmlns:mc="{mc}"><mc:Choice Requires="wps"><w:drawing>'
        f"{box}</w:drawing></mc:Choice><mc:Fallback><w:pict>{box}</w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r>"
    )


def test_a_text_box_s_requirement_is_an_item_of_its_own(tmp_path: Path) -> None:
    """It was glued into its host paragraph's item (`SEC-01 … SEC-02 …` one item)."""
    body = para("SEC-01 Backups must be encrypted.", extra=_text_box("SEC-02 Logs must be kept."))
    path = docx(tmp_path / "box.docx", body + para("SEC-03 Keys must be rotated."))
    assert items(path) == [
        ("SEC-01", "Backups must be encrypted."),
        ("SEC-02", "Logs must be kept."),
        ("SEC-03", "Keys must be rotated."),
    ]


def test_a_title_that_states_a_requirement_is_read_and_a_plain_title_is_not(
    tmp_path: Path,
) -> None:
    """A paragraph in Word's Title style was dropped, whatever it said."""
    styles = style("Title", "Title") + style("Heading1", "heading 1", outline=0)
    body = (
        para("Acme Security Policy", "Title")
        + para("SEC-01 Passwords must be hashed.", "Title")
        + para("Access", "Heading1")
        + para("Users must sign in.")
    )
    path = docx(tmp_path / "title.docx", body, styles=styles)
    assert items(path) == [
        ("SEC-01", "Passwords must be hashed."),
        ("access-1", "Users must sign in."),
    ]


def _cell(text: str, props: str = "") -> str:
    return f"<w:tc><w:tcPr>{props}</w:tcPr>{para(text) if text else '<w:p/>'}</w:tc>"


SPAN = '<w:gridSpan w:val="2"/>'
RESTART, CONTINUE = '<w:vMerge w:val="restart"/>', "<w:vMerge/>"


def _table(*rows: str) -> str:
    return "<w:tbl>" + "".join(f"<w:tr>{row}</w:tr>" for row in rows) + "</w:tbl>"


@pytest.mark.parametrize(
    "header", ["ID", "id"], ids=["a requirements table", "id and text columns"]
)
def test_merged_table_cells_lose_no_requirement(tmp_path: Path, header: str) -> None:
    """A cell spanning the id and text columns (`w:gridSpan`) shifted the row's cells
    left, its requirement in the id column, and the row was dropped; a vertically merged
    cell (`w:vMerge`) was read in its first row only. 2 requirements of 5 lost, no
    warning."""
    text = "Text" if header == "ID" else "text"
    body = _table(
        _cell(header) + _cell(text) + _cell("Owner"),
        _cell("SEC-01") + _cell("Passwords must be hashed.") + _cell("IT"),
        _cell("SEC-02 Sessions must end after 15 minutes.", SPAN) + _cell("IT"),
        _cell("SEC-03", RESTART) + _cell("Keys must be rotated yearly.") + _cell("Security"),
        _cell("", CONTINUE) + _cell("Each rotation must be logged.") + _cell("Security"),
        _cell("SEC-04") + _cell("Backups must be tested.", RESTART) + _cell("Ops"),
        _cell("SEC-05") + _cell("", CONTINUE) + _cell("Ops"),
    )
    read = items(docx(tmp_path / "merged.docx", body))
    assert read == [
        ("SEC-01", "Passwords must be hashed."),
        ("SEC-02", "Sessions must end after 15 minutes."),
        ("SEC-03", "Keys must be rotated yearly. Each rotation must be logged."),
        ("SEC-04", "Backups must be tested."),
        ("SEC-05", "Backups must be tested."),
    ]
