"""Existing section→CRE links: what `train` learns from and the dev golden set is cut from."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from librarian.errors import InputError
from librarian.jsonl import JsonLineError, json_objects

# Held out of a `--holdout-dev` training run and scored by the dev golden set: frameworks
# with enough curated links to measure, four of them with prose (nist_800_53, the cheat
# sheets, the AI Exchange, WSTG) and two with titles only (nist_ssdf's titles are its
# task statements, the nearest thing here to ASVS requirements).
DEV_FRAMEWORKS: tuple[str, ...] = (
    "nist_ssdf",
    "iso_27001",
    "owasp_cheat_sheets",
    "nist_800_53",
    "owasp_ai_exchange",
    "wstg",
)
TextStyle = Literal["prose", "title"]

# A readable word: letters only. Codes such as "AU-12", "WSTG-SESS-02", "C1" or
# "5.1.1.2" are not words.
_WORD = re.compile(r"(?=[A-Za-z-]*[A-Za-z]{3})[A-Za-z]+(-[A-Za-z]+)*[,.:;)]?")


class LinksError(InputError):
    """The links file is missing or a line of it is malformed (the message names the line)."""


@dataclass(frozen=True)
class TrainingLink:
    framework_id: str
    section_id: str
    text: str
    cre_id: str
    curated: bool  # LinkedTo by a person, not AutomaticallyLinkedTo


@dataclass(frozen=True)
class LinkedSection:
    """One section of one framework with every CRE it is linked to: by people (curated),
    else through the CAPEC -> CWE chains. Its text is its title, or its prose."""

    framework_id: str
    section_id: str
    text: str
    cre_ids: frozenset[str]
    style: TextStyle = "title"
    curated: bool = True


def is_bare_id(text: str) -> bool:
    """True when a section's text is only its code ("WSTG-SESS-02", "C1"): nothing to read."""
    return not any(_WORD.fullmatch(token.lstrip("(")) for token in text.split())


def load_links(path: Path) -> list[TrainingLink]:
    if not path.is_file():
        raise LinksError(f"links file {path} does not exist")
    out: list[TrainingLink] = []
    with path.open(encoding="utf-8") as handle:
        try:
            for number, row in json_objects(handle):
                try:
                    out.append(
                        TrainingLink(
                            framework_id=str(row["framework_id"]),
                            section_id=str(row.get("section_id") or row.get("section_name") or ""),
                            text=str(row["text"]),
                            cre_id=str(row["cre_id"]),
                            curated=row.get("link_type", "LinkedTo") == "LinkedTo",
                        )
                    )
                except KeyError as exc:
                    raise LinksError(f"{path} line {number}: not a link row (no {exc})") from exc
        except JsonLineError as exc:
            raise LinksError(f"{path} {exc}") from exc
    return out


def links_digest(links: Iterable[TrainingLink]) -> str:
    """sha256 over the links' content, whichever files or databases they came from."""
    digest = hashlib.sha256()
    for link in links:
        digest.update(
            json.dumps(
                [link.framework_id, link.section_id, link.text, link.cre_id, link.curated]
            ).encode("utf-8")
        )
        digest.update(b"\n")
    return digest.hexdigest()


def curated_sections(
    links: Iterable[TrainingLink], known_cres: Iterable[str] | None = None
) -> list[LinkedSection]:
    """Curated links grouped by section, bare-id texts dropped, in file order.

    Links to CREs the hub does not know are dropped too: no retriever can find them.
    """
    known = set(known_cres) if known_cres is not None else None
    grouped: dict[tuple[str, str], set[str]] = defaultdict(set)
    first_id: dict[tuple[str, str], str] = {}
    for link in links:
        if not link.curated or is_bare_id(link.text):
            continue
        if known is not None and link.cre_id not in known:
            continue
        key = (link.framework_id, link.text.strip())
        grouped[key].add(link.cre_id)
        first_id.setdefault(key, link.section_id)
    return [
        LinkedSection(fw, first_id[(fw, text)], text, frozenset(cres))
        for (fw, text), cres in grouped.items()
    ]


def load_section_texts(path: Path) -> dict[tuple[str, str], str]:
    """The prose of linked sections by (framework, section id): `section_texts.jsonl`."""
    if not path.is_file():
        raise LinksError(f"section texts file {path} does not exist")
    prose: dict[tuple[str, str], str] = {}
    with path.open(encoding="utf-8") as handle:
        try:
            for number, row in json_objects(handle):
                try:
                    key = (str(row["framework_id"]), str(row["section_id"]))
                    prose[key] = str(row["text"])
                except KeyError as exc:
                    raise LinksError(f"{path} line {number}: no {exc}") from exc
        except JsonLineError as exc:
            raise LinksError(f"{path} {exc}") from exc
    return prose


def prose_sections(
    links: Iterable[TrainingLink],
    prose: Mapping[tuple[str, str], str],
    known_cres: Iterable[str] | None = None,
) -> list[LinkedSection]:
    """A section per linked (framework, section id) that has prose, with its curated CREs
    (else the chain-derived ones), in file order."""
    known = set(known_cres) if known_cres is not None else None
    curated: dict[tuple[str, str], set[str]] = defaultdict(set)
    derived: dict[tuple[str, str], set[str]] = defaultdict(set)
    for link in links:
        if known is None or link.cre_id in known:
            key = (link.framework_id, link.section_id)
            (curated if link.curated else derived)[key].add(link.cre_id)
    out = []
    for key in dict.fromkeys([*curated, *derived]):
        if key in prose:
            cres, by_people = (curated[key], True) if curated.get(key) else (derived[key], False)
            out.append(
                LinkedSection(key[0], key[1], prose[key], frozenset(cres), "prose", by_people)
            )
    return out


def linked_sections(
    links: Sequence[TrainingLink],
    prose: Mapping[tuple[str, str], str],
    known_cres: Iterable[str] | None = None,
) -> list[LinkedSection]:
    """Every readable linked section in both styles: titles linked by people, titles linked
    only through the chains (curated False), then prose."""
    by_people = curated_sections(links, known_cres)
    seen = {(s.framework_id, s.text.strip()) for s in by_people}
    chained = [replace(link, curated=True) for link in links if not link.curated]
    derived = [
        replace(s, curated=False)
        for s in curated_sections(chained, known_cres)
        if (s.framework_id, s.text.strip()) not in seen
    ]
    return by_people + derived + prose_sections(links, prose, known_cres)
