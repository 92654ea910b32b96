"""Static routing rules (YAML): keywords or a regex on text, title or source -> boost or
exclude collections; exclude wins."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from librarian.routing.collections import RoutingError
from librarian.schemas.records import Section


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    fields: tuple[str, ...]
    boost: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def matches(self, section: Section) -> bool:
        values = {
            "text": section.text,
            "title": section.title_hint or "",
            "source": " ".join(
                v for v in (section.source.repo, section.source.url, section.locator.path) if v
            ),
        }
        return any(self.pattern.search(values[f]) for f in self.fields)


RULE_FIELDS = ("text", "title", "source")


def load_rules(path: Path, known: Sequence[str]) -> tuple[Rule, ...]:
    """Rules from YAML: `rules: [{name, keywords | regex, fields?, boost?, exclude?}]`."""
    import yaml

    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise RoutingError(f"routing rules {path}: cannot read: {exc}") from exc
    items = raw.get("rules") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise RoutingError(f"routing rules {path}: expected a mapping with a list `rules`")
    rules: list[Rule] = []
    for number, item in enumerate(items, start=1):
        where = f"routing rules {path}: rule {number}"
        if not isinstance(item, dict):
            raise RoutingError(f"{where}: not a mapping")
        name = str(item.get("name") or f"rule-{number}")
        keywords, regex = item.get("keywords"), item.get("regex")
        if (keywords is None) == (regex is None):
            raise RoutingError(f"{where} ({name}): give exactly one of `keywords` or `regex`")
        try:
            if keywords is not None:
                words = [keywords] if isinstance(keywords, str) else list(keywords)
                if not words:
                    raise RoutingError(f"{where} ({name}): `keywords` is empty")
                alternatives = "|".join(re.escape(str(w)) for w in words)
                pattern = re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)
            else:
                pattern = re.compile(str(regex), re.IGNORECASE)
        except re.error as exc:
            raise RoutingError(f"{where} ({name}): bad regex: {exc}") from exc
        fields = tuple(item.get("fields") or RULE_FIELDS)
        if unknown := [f for f in fields if f not in RULE_FIELDS]:
            raise RoutingError(f"{where} ({name}): unknown field {unknown[0]!r}")
        boost = tuple(str(c) for c in item.get("boost") or ())
        exclude = tuple(str(c) for c in item.get("exclude") or ())
        if not boost and not exclude:
            raise RoutingError(f"{where} ({name}): needs `boost` or `exclude`")
        if unknown := [c for c in (*boost, *exclude) if c not in known]:
            raise RoutingError(
                f"{where} ({name}): unknown collection {unknown[0]!r} (known: {', '.join(known)})"
            )
        rules.append(Rule(name, pattern, fields, boost, exclude))
    return tuple(rules)
