"""The links, as the CSV OpenCRE imports (its "export format", which MyOpenCRE reads).

One row per link: a section of a standard linked to a CRE, by a person (the decision that
stands on the item: approved or corrected) or, when asked, automatically (a LinkProposal).
`CRE 0` ... `CRE n` hold the hub path from the root down to the linked CRE, each cell
`XXX-XXX|Name`; `<Standard>|name`, `|id`, `|hyperlink` and `|description` the section.

What OpenCRE's reader does with a file, as read in its repository (OWASP/OpenCRE,
`application/utils/spreadsheet_parsers.py` and `.../parsers/export_format_parser.py`),
and what this writer does about it:
- It requires a `CRE` column, a `|name` and a `|id` column, and every CRE cell to match
  `XXX-XXX|Name`: written so.
- The deepest filled `CRE k` of a row is the CRE the row links; the cells above it are
  only its path.
- It infers hub hierarchy ("contains") from how deep a row goes compared with the rows
  before it, and a link it infers twice is an error. The rows are written deepest first:
  no row is deeper than the one before it nor than the first, so it infers none (the hub
  is OpenCRE's own: nothing here adds to it).
- A cell reading "no", "tbd", "0", "nan", "None", or holding "n/a" anywhere, counts as
  empty: a section name that would read so is written with its id in front, or with
  "n/a" spaced out, and a standard name may not start with "CRE" nor hold "|".
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import quote

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from librarian.catalogue.hub import Hub, cre_url
from librarian.errors import InputError
from librarian.review.sheets import neutralise
from librarian.schemas.records import split_plain_locator_id
from librarian.store.decisions import LINKED, REVIEW_REQUIRED
from librarian.store.policies import certified_under
from librarian.store.tables import DecisionRow, HumanDecisionRow

SEPARATOR = "|"
PLAIN_URN = "urn:librarian:"  # the source of a plain input (`pipeline.shapes`)
DESCRIPTION_CHARS = 500
LinkStatus = Literal["USER_CONFIRMED", "AUTO_MAPPED"]
# What OpenCRE's reader takes for an empty cell (its `is_empty`, in our words).
_EMPTY_WORDS = frozenset({"", "none", "nan", "no", "tbd", "0", "see higher level topic"})


class ExportError(InputError):
    """A link cannot be written so that OpenCRE reads it back as it is."""


@dataclass(frozen=True)
class SectionLink:
    """One link to export: a section of a standard, the CRE, and who linked it."""

    standard: str
    section_id: str
    section_name: str
    hyperlink: str
    description: str
    cre_id: str
    status: LinkStatus
    confidence: float | None = None  # the linker's, for a link it made; None: a person's
    # Its section's text changed since it was linked, and the new text waits for review.
    pending_update: bool = False
    # An auto-link: what its source's cut was certified under, in words (None: a person's).
    certified_under: str | None = None


def reads_empty(cell: str) -> bool:
    value = cell.strip()
    return value.lower() in _EMPTY_WORDS or "n/a" in value.lower()


def links_to_export(
    session: Session, with_auto: bool, confirmed_too: bool = True
) -> list[SectionLink]:
    """Every link a person confirmed (the standing approve or correct of an item), and
    with `with_auto` every link made automatically, oldest first (`confirmed_too` False:
    those alone, for a file of their own)."""
    updated = _updates_waiting(session)
    confirmed = session.execute(
        select(
            DecisionRow.id,
            DecisionRow.chunk_id,
            DecisionRow.envelope,
            DecisionRow.text,
            HumanDecisionRow.final_cre_ids,
        )
        .join(HumanDecisionRow, HumanDecisionRow.decision_row_id == DecisionRow.id)
        .where(
            HumanDecisionRow.standing(),
            HumanDecisionRow.action != "reject",
            DecisionRow.withdrawn_at.is_(None),
        )
        .order_by(DecisionRow.id)
    ).all()
    out = [
        replace(
            section_link(envelope, text, cre, "USER_CONFIRMED"),
            pending_update=updated.get(chunk, 0) > row_id,
        )
        for row_id, chunk, envelope, text, cres in confirmed
        for cre in (cres or "").split()
    ]
    if not confirmed_too:
        out = []
    if with_auto:
        automatic = session.execute(
            select(
                DecisionRow.id,
                DecisionRow.chunk_id,
                DecisionRow.envelope,
                DecisionRow.text,
                DecisionRow.source_key,
            )
            .where(DecisionRow.status == LINKED, DecisionRow.withdrawn_at.is_(None))
            .order_by(DecisionRow.id)
        ).all()
        under = {
            key: certified_under(session, key) for key in {row.source_key for row in automatic}
        }
        out += [
            replace(
                section_link(envelope, text, link["cre_id"], "AUTO_MAPPED"),
                confidence=link.get("confidence"),
                pending_update=updated.get(chunk, 0) > row_id,
                certified_under=under[source] or None,
            )
            for row_id, chunk, envelope, text, source in automatic
            for link in envelope.get("links") or []
        ]
    return out


def _updates_waiting(session: Session) -> dict[str, int]:
    """By chunk: its newest open item (a link made before it is of an older text)."""
    rows = session.execute(
        select(DecisionRow.chunk_id, func.max(DecisionRow.id))
        .where(DecisionRow.status == REVIEW_REQUIRED, DecisionRow.consumed_at.is_(None))
        .group_by(DecisionRow.chunk_id)
    ).all()
    return {str(chunk): int(newest) for chunk, newest in rows}


def withdrawn_links(session: Session) -> int:
    """Links left out of the export: their section is no longer in its document."""
    rows = session.execute(
        select(func.count())
        .select_from(DecisionRow)
        .join(HumanDecisionRow, HumanDecisionRow.decision_row_id == DecisionRow.id)
        .where(
            HumanDecisionRow.standing(),
            HumanDecisionRow.action != "reject",
            DecisionRow.withdrawn_at.is_not(None),
        )
    ).scalar_one()
    return int(rows)


def section_link(
    envelope: dict[str, Any], text: str, cre_id: str, status: LinkStatus
) -> SectionLink:
    """The section an envelope is about, as a standard and a section of it."""
    knowledge = envelope.get("knowledge") or {}
    source, locator = knowledge.get("source") or {}, knowledge.get("locator") or {}
    where = str(locator.get("id") or locator.get("path") or envelope.get("chunk_id") or "")
    standard = str(source.get("repo") or source.get("url") or source.get("type") or "")
    plain = split_plain_locator_id(where)
    if str(source.get("url") or "").startswith(PLAIN_URN) and plain:
        standard, where, _ = plain  # a plain input's row: DOCUMENT#ROW (PLACE)
    title = str(locator.get("title") or "")
    hyperlink = str(locator.get("url") or source.get("url") or "")
    if not hyperlink.startswith(("https://", "http://")):
        hyperlink = ""  # a plain row's urn names nothing OpenCRE can open
    if source.get("type") == "github" and source.get("repo") and locator.get("path"):
        ref = source.get("commit_sha") or "HEAD"
        hyperlink = f"https://github.com/{source['repo']}/blob/{ref}/{locator['path']}"
    return SectionLink(
        standard=standard,
        section_id=where,
        section_name=title or where,
        hyperlink=hyperlink,
        description=" ".join(text.split())[:DESCRIPTION_CHARS],
        cre_id=cre_id,
        status=status,
    )


def to_myopencre(links: Sequence[SectionLink], hub: Hub, hyperlink_base: str | None = None) -> str:
    """The CSV, deepest rows first (see the module's notes); ExportError names a link
    OpenCRE could not read back. A section's name is its id and title; a title several
    sections share is their chapter, so those are named by id and the start of their
    text. `hyperlink_base`: a section without a URL of its own links there
    (`{id}` replaced by its id, else `#id` appended)."""
    links = [_placed(link, hyperlink_base) for link in _named(links)]
    paths = {link.cre_id: hub_path(hub, link.cre_id) for link in links}
    width = max((len(p) for p in paths.values()), default=1)
    standards = sorted({standard_name(link.standard) for link in links})
    header = [f"CRE {i}" for i in range(width)] + [
        f"{s}{SEPARATOR}{part}"
        for s in standards
        for part in ("name", "id", "hyperlink", "description")
    ]
    # One row a (section, CRE), the latest: OpenCRE refuses a link it reads twice, and a
    # section is the same to it while its standard, id, name and hyperlink are.
    once = {
        (link.standard, link.section_id, link.section_name, link.hyperlink, link.cre_id): link
        for link in links
    }
    ordered = sorted(
        once.values(),
        key=lambda link: (-len(paths[link.cre_id]), link.standard, link.section_id, link.cre_id),
    )
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_row(link, paths[link.cre_id], hub) for link in ordered)
    return buffer.getvalue()


def _named(links: Sequence[SectionLink]) -> list[SectionLink]:
    sections: dict[tuple[str, str], set[str]] = {}
    for link in links:
        sections.setdefault((link.standard, link.section_name), set()).add(link.section_id)
    out = []
    for link in links:
        shared = len(sections[(link.standard, link.section_name)]) > 1
        if shared or link.section_name == link.section_id:
            words = link.description.split()
            start = " ".join(words[:8]) + ("…" if len(words) > 8 else "")
            name = f"{link.section_id} {start}".strip()
        else:
            name = f"{link.section_id} {link.section_name}"
        out.append(replace(link, section_name=name))
    return out


def _placed(link: SectionLink, base: str | None) -> SectionLink:
    if link.hyperlink or not base:
        return link
    anchor = quote(link.section_id, safe="")
    url = base.replace("{id}", anchor) if "{id}" in base else f"{base}#{anchor}"
    return replace(link, hyperlink=url)


def sidecar(links: Sequence[SectionLink]) -> list[dict[str, Any]]:
    """What OpenCRE's import drops (it imports every link as a plain LinkedTo): each
    link's status (AUTO_MAPPED or USER_CONFIRMED) and the linker's confidence."""
    return [
        {
            "standard": link.standard,
            "section_id": link.section_id,
            "cre_id": link.cre_id,
            "status": link.status,
            "confidence": link.confidence,
            "pending_update": link.pending_update,
            "certified_under": link.certified_under,
            "cre_url": cre_url(link.cre_id),
        }
        for link in links
    ]


def import_steps(path: str) -> list[str]:
    """How the file gets into an OpenCRE instance (its MyOpenCRE import), in steps."""
    return [
        "to import it into OpenCRE: run an instance that allows imports (CRE_ALLOW_IMPORT=1, "
        "as OpenCRE's MyOpenCRE guide starts it locally), then",
        f'  curl -X POST http://localhost:5000/rest/v1/cre_csv_import -F "cre_csv=@{path}"',
        "  (or its MyOpenCRE page's upload); every link imports as a plain LinkedTo: keep the "
        "sidecar (--sidecar) to tell automatic links from confirmed ones",
    ]


def hub_path(hub: Hub, cre_id: str) -> list[str]:
    """The CRE ids from the hub's root down to `cre_id`."""
    if cre_id not in hub.by_id:
        raise ExportError(f"CRE {cre_id} is not in the hub catalogue: export with its hub (--hub)")
    path: list[str] = []
    node: str | None = cre_id
    while node is not None and node not in path:
        path.append(node)
        node = hub.by_id[node].parent_id if node in hub.by_id else None
    return path[::-1]


def standard_name(name: str) -> str:
    """A standard's name as a column prefix OpenCRE reads as a standard."""
    clean = " ".join(name.replace(SEPARATOR, "/").split()) or "standard"
    # A header cell is a cell: the standard's name is the input's, neutralised as every
    # cell we did not write is (`sheets.neutralise`, the sheet export's too).
    return neutralise(f"Standard {clean}" if clean.startswith("CRE") else clean)


def readable(cell: str, prefix: str) -> str:
    """`cell`, written so that OpenCRE does not read it as empty."""
    if not reads_empty(cell):
        return cell
    spaced = re.sub(r"(?i)n/a", lambda m: m.group(0).replace("/", " / "), cell)
    if not reads_empty(spaced):
        return spaced
    return f"{prefix} {spaced}".strip()


def _row(link: SectionLink, path: list[str], hub: Hub) -> dict[str, str]:
    row = {f"CRE {i}": _cre_cell(hub, cre) for i, cre in enumerate(path)}
    standard = standard_name(link.standard)
    section_id = readable(link.section_id, "section")
    row[f"{standard}{SEPARATOR}name"] = neutralise(readable(link.section_name, section_id))
    row[f"{standard}{SEPARATOR}id"] = neutralise(section_id)
    row[f"{standard}{SEPARATOR}hyperlink"] = neutralise(link.hyperlink)
    row[f"{standard}{SEPARATOR}description"] = neutralise(link.description)
    return row


def _cre_cell(hub: Hub, cre_id: str) -> str:
    cell = f"{cre_id}{SEPARATOR}{hub.by_id[cre_id].name.replace(SEPARATOR, '/')}"
    if reads_empty(cell):
        raise ExportError(f"CRE {cre_id}'s name reads as empty to OpenCRE: {cell!r}")
    return cell


def counted(links: Iterable[SectionLink]) -> dict[str, int]:
    out: dict[str, int] = {}
    for link in links:
        out[link.status] = out.get(link.status, 0) + 1
    return out
