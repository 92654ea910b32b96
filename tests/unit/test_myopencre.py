"""Issue 30, item 4: `review export --format myopencre`, checked against the rules of
OpenCRE's reader as read in its repository (OWASP/OpenCRE at ed999c53:
`application/utils/spreadsheet_parsers.py` `validate_import_csv_rows` and
`.../parsers/export_format_parser.py` `parse_export_format`), restated here in our own
words; none of their code is copied."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from librarian.catalogue.hub import Hub
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import section_from_text
from librarian.review.bench import Workbench
from librarian.review.myopencre import links_to_export, reads_empty, to_myopencre
from librarian.review.web import create_app
from librarian.schemas.envelopes import Locator, Source
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import StoredBatch, write
from tests.stubs import small_hub, stub_pipeline

CRE_CELL = re.compile(r"^\d{3}-\d{3}\|.+$")
URN = "urn:librarian:plain:abc"
RULES = [
    ("SEC-01", "Session tokens", "rotate session token after login"),
    ("SEC-02", "N/A controls", "sql injection queries must be parameterized"),
    ("SEC-03", "No", "session management cryptography"),
    ("SEC-04", "Marketing", "our newsletter comes out monthly"),
]


def sections(threshold_run: str) -> list:  # type: ignore[type-arg]
    out = []
    for i, (row, title, text) in enumerate(RULES):
        section = section_from_text(text, title)
        out.append(
            section.model_copy(
                update={
                    "chunk_id": f"{threshold_run}-{row}",
                    "line": i + 1,
                    "artifact_id": "plain:Acme Policy",
                    "source": Source(type="url", url=URN, committed_at=section.source.committed_at),
                    "locator": Locator(
                        kind="url", id=f"Acme Policy#{row}", url=f"{URN}:{row}", title=title
                    ),
                }
            )
        )
    return out


def store(engine: Engine, run: str, threshold: float) -> None:
    batch = sections(run)
    result = one_shot.link(stub_pipeline(threshold=threshold, top_k=6, top_n=5), batch, run)
    with Session(engine) as session:
        write(session, StoredBatch.linked(run, result, batch, "t"))
        session.commit()


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'export.db'}")
    upgrade(engine)
    store(engine, "review", threshold=0.99)  # four items for people
    store(engine, "auto", threshold=0.0)  # the same rules elsewhere, linked automatically
    web = TestClient(
        create_app(Workbench(engine, small_hub(), "rita", csrf="c")),
        base_url="http://127.0.0.1:8765",
        follow_redirects=False,
    )
    ids = [
        item.split('"')[0]
        for item in web.get("/", params={"source": "review"}).text.split('data-href="/item/')[1:]
    ]
    decide: list[dict[str, Any]] = [
        {"action": "choose", "cre_ids": ["200-001", "400-000"]},  # two CREs, two depths
        {"action": "choose", "cre_ids": ["300-001"]},
        {"action": "choose", "cre_ids": ["100-000"]},  # the root itself
        {"action": "reject", "rejection": "NOT_SECURITY_KNOWLEDGE"},
    ]
    for review_id, form in zip(ids, decide, strict=True):
        posted: dict[str, Any] = {"csrf": "c", **form}
        assert web.post(f"/item/{review_id}", data=posted).status_code == 303
    return engine


def read_as_opencre(text: str, hub: Hub) -> tuple[set[tuple[str, str, str]], set[tuple[str, str]]]:
    """The file as OpenCRE's reader takes it: the (standard, section id, CRE) links it
    finds, and the hierarchy ("contains") links it infers; asserting its checks."""
    rows = list(csv.DictReader(io.StringIO(text)))
    headers = list(rows[0])
    cre_columns = [h for h in headers if h.startswith("CRE")]
    assert cre_columns == [f"CRE {i}" for i in range(len(cre_columns))]
    assert any(h.endswith("|name") for h in headers) and any(h.endswith("|id") for h in headers)
    standards = {h.split("|")[0] for h in headers if not h.startswith("CRE")}
    links: set[tuple[str, str, str]] = set()
    inferred: set[tuple[str, str]] = set()
    # Its hierarchy inference: going deeper than the row before links that row's CRE to
    # this one (and makes it the current parent); at most as deep, but deeper than the
    # first row, links the current parent to this one.
    parent = previous = None
    first_depth = previous_depth = len(cre_columns) + 1
    for row in rows:
        filled = [i for i, h in enumerate(cre_columns) if not reads_empty(row[h] or "")]
        for i in filled:
            assert CRE_CELL.match(row[cre_columns[i]]), row[cre_columns[i]]
        depth = max(filled)
        ids = [row[cre_columns[i]].split("|")[0] for i in range(depth + 1)]
        cre = ids[-1]
        assert ids == hub_path_ids(hub, cre)  # the cells above the deepest: its path
        if previous_depth < depth:
            parent = previous
            inferred.add((str(parent), cre))
        elif first_depth < depth:
            inferred.add((str(parent), cre))
        elif parent is None:
            parent, first_depth = cre, depth
        previous, previous_depth = cre, depth
        for standard in standards:
            name = row.get(f"{standard}|name") or ""
            if not reads_empty(name):
                links.add((standard, row[f"{standard}|id"], cre))
    return links, inferred


def hub_path_ids(hub: Hub, cre: str) -> list[str]:
    path = [cre]
    while hub.by_id[path[-1]].parent_id:
        path.append(str(hub.by_id[path[-1]].parent_id))
    return path[::-1]


def test_confirmed_links_come_back_from_opencres_reader_as_decided(engine: Engine) -> None:
    hub = small_hub()
    with Session(engine) as session:
        text = to_myopencre(links_to_export(session, with_auto=False), hub)
    links, inferred = read_as_opencre(text, hub)
    assert links == {
        ("Acme Policy", "SEC-01", "200-001"),
        ("Acme Policy", "SEC-01", "400-000"),
        ("Acme Policy", "SEC-02", "300-001"),
        ("Acme Policy", "SEC-03", "100-000"),
    }
    assert inferred == set()  # deepest rows first: it infers no hierarchy at all
    rows = list(csv.DictReader(io.StringIO(text)))
    names = {r["Acme Policy|id"]: r["Acme Policy|name"] for r in rows}
    # Names its reader would take for empty are written so that they are not.
    # A section's name is its id and its title (issue 41, item 7: it was the chapter).
    assert names["SEC-02"] == "SEC-02 N / A controls" and names["SEC-03"] == "SEC-03 No"
    assert names["SEC-01"] == "SEC-01 Session tokens"
    assert rows[0]["CRE 2"] == "200-001|Rotate session token after login"
    assert "Marketing" not in text  # a rejected section is no link


def test_linked_adds_what_was_linked_automatically(engine: Engine) -> None:
    hub = small_hub()
    with Session(engine) as session:
        confirmed = links_to_export(session, with_auto=False)
        everything = links_to_export(session, with_auto=True)
    automatic = [link for link in everything if link.status == "AUTO_MAPPED"]
    assert automatic and len(everything) == len(confirmed) + len(automatic)
    links, inferred = read_as_opencre(to_myopencre(everything, hub), hub)
    assert inferred == set()
    assert {("Acme Policy", a.section_id, a.cre_id) for a in automatic} <= links


def test_the_command_line_writes_it_and_refuses_what_it_cannot_mean(
    engine: Engine, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from librarian.cli import app

    url = str(engine.url)
    out, hub = tmp_path / "opencre.csv", tmp_path / "hub.jsonl"
    hub.write_text("".join(n.model_dump_json() + "\n" for n in small_hub().nodes))
    runner = CliRunner()
    export = ["review", "export", "--db", url, "--format", "myopencre", "--hub", str(hub)]
    done = runner.invoke(app, [*export, "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "links: 4 USER_CONFIRMED" in done.output
    assert out.read_text().startswith("CRE 0,CRE 1,CRE 2,Acme Policy|name")
    wrong = runner.invoke(app, ["review", "export", "--db", url, "--status", "linked"])
    assert wrong.exit_code == 2 and "is for --format myopencre" in wrong.output
    bad = ["review", "export", "--db", url, "--format", "myopencre", "--status", "open"]
    refused = runner.invoke(app, bad)
    assert refused.exit_code == 2 and "confirmed, auto or linked" in refused.output
    # Issue 41, item 7: the automatic links in a file of their own, with a sidecar.
    auto, side = tmp_path / "auto.csv", tmp_path / "auto.json"
    args = ["--status", "auto", "--out", str(auto), "--sidecar", str(side)]
    alone = runner.invoke(app, [*export, *args, "--hyperlink-base", "https://x.example/p"])
    assert alone.exit_code == 0 and "USER_CONFIRMED" not in alone.output, alone.output
    statuses = {x["status"] for x in json.loads(side.read_text())}
    assert statuses == {"AUTO_MAPPED"} and all(
        isinstance(x["confidence"], float) for x in json.loads(side.read_text())
    )
    assert "https://x.example/p#" in auto.read_text()
    # Issue 48, item 5: each CRE's page on opencre.org, and the import steps printed.
    assert all(
        x["cre_url"] == f"https://www.opencre.org/cre/{x['cre_id']}"
        for x in json.loads(side.read_text())
    )
    said = " ".join(done.output.split())
    assert f'/rest/v1/cre_csv_import -F "cre_csv=@{out}"' in said and "CRE_ALLOW_IMPORT" in said
    # Issue 58, item 7: a plain document's rows have no address: the message says how.
    assert "4 with no address of their own link nowhere: --hyperlink-base URL" in said
    assert "link nowhere" not in " ".join(alone.output.split())


def test_a_standards_name_is_neutralised_in_the_header_too() -> None:
    """Issue 38, defect 12: with `--source '=HYPERLINK(…)'` the header cells began `=`."""
    from librarian.review.myopencre import SectionLink

    hostile = '=HYPERLINK("http://evil","x")'
    link = SectionLink(hostile, "SEC-01", "=1+1", "", "", "200-001", "USER_CONFIRMED")
    text = to_myopencre([link], small_hub())
    header, row = list(csv.reader(io.StringIO(text)))[:2]
    assert all(not cell.startswith(("=", "+", "-", "@")) for cell in header + row), header
    assert f"'{hostile}|name" in header


def test_bidi_and_zero_width_characters_are_shown_in_the_export() -> None:
    """Issue 47, item 14: a right-to-left override in a title went raw into the export."""
    from librarian.review.myopencre import SectionLink

    title = "Keys \u202eevil.exe\u202c must \u200bbe rotated"
    link = SectionLink("Acme\u2067", "SEC-01", title, "", title, "200-001", "USER_CONFIRMED")
    text = to_myopencre([link], small_hub())
    assert not any(c in text for c in "\u202e\u202c\u200b\u2067")
    assert "⟨U+202E⟩evil.exe⟨U+202C⟩" in text and "⟨U+200B⟩be" in text


def test_a_rule_is_named_by_its_id_not_its_chapter_and_links_to_its_anchor() -> None:
    """Issue 41, item 7: `|name` was the chapter heading for every rule, `|hyperlink`
    empty on every row; OpenCRE imports every link alike, so the statuses and the
    linker's confidences go to a sidecar."""
    from librarian.review.myopencre import SectionLink, sidecar

    chapter = "1. Authentication"
    links = [
        SectionLink(
            "Acme",
            "AUTH-1",
            chapter,
            "",
            "Rotate the session token after login",
            "200-001",
            "USER_CONFIRMED",
        ),
        SectionLink(
            "Acme",
            "AUTH-2",
            chapter,
            "",
            "Use parameterized queries",
            "300-001",
            "AUTO_MAPPED",
            0.97,
        ),
    ]
    text = to_myopencre(links, small_hub(), "https://intranet.example/policy")
    rows = {r["Acme|id"]: r for r in csv.DictReader(io.StringIO(text))}
    assert rows["AUTH-1"]["Acme|name"] == "AUTH-1 Rotate the session token after login"
    assert rows["AUTH-2"]["Acme|hyperlink"] == "https://intranet.example/policy#AUTH-2"
    templated = to_myopencre(links, small_hub(), "https://x.example/r/{id}.html")
    assert "https://x.example/r/AUTH-1.html" in templated
    assert [(x["section_id"], x["status"], x["confidence"]) for x in sidecar(links)] == [
        ("AUTH-1", "USER_CONFIRMED", None),
        ("AUTH-2", "AUTO_MAPPED", 0.97),
    ]


def test_an_auto_link_says_what_its_cut_was_certified_under(engine: Engine) -> None:
    """Issue 59, item 3: the export says which guarantee holds, in plain words: each
    auto-link in the sidecar says what its source's cut was certified under (before any
    cut is stored: nothing; a person's link: nothing)."""
    from librarian.policy import Certified, DecisionPolicy
    from librarian.review.myopencre import sidecar
    from librarian.store.decisions import LINKED
    from librarian.store.policies import record_cuts, record_policy
    from librarian.store.tables import DecisionRow

    with Session(engine) as session:
        assert {link.certified_under for link in links_to_export(session, True)} == {None}
        keys = session.execute(
            select(DecisionRow.source_key).where(DecisionRow.status == LINKED).distinct()
        ).scalars()
        key = next(iter(keys))
        assert key is not None
        record_policy(session, "auto", DecisionPolicy(risk="links"))
        cut = Certified(0.5, 0.0, 0.03, 60, 0, 4, "reviewed", "links")
        status = {"threshold": 0.5, "says": "", "decisions": 60, "cut": cut.as_json()}
        record_cuts(session, "auto", {key: status})
        session.commit()
        links = links_to_export(session, with_auto=True)
    words = (
        "share wrong of the source's links (reviewed and automatic) <= 3% with probability >= 90%"
    )
    auto = [x for x in sidecar(links) if x["status"] == "AUTO_MAPPED"]
    assert auto and {x["certified_under"] for x in auto} == {words}
    assert {x["certified_under"] for x in sidecar(links) if x["status"] != "AUTO_MAPPED"} == {None}
