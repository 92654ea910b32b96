"""A team's own catalogue beside OpenCRE: loaded as one more hub collection.

A catalogue file holds one node a line: `cre_id` (`ddd-ddd`, the envelope contract's id
shape) and `name`, optionally `parent_id`. With parents, the hierarchy is the file's. A
flat catalogue (no parents) gets a navigation tree built deterministically, so the path
text each node is retrieved by says where it sits: ids sorted first; then group by id
namespace when most ids have one, else by shared name tokens, else alphabetically; at
most MAX_CHILDREN children a node. Groups are navigation only, never link targets.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from librarian.catalogue.hub import Hub, HubError, build_hub, load_hub
from librarian.jsonl import JsonLineError, json_objects
from librarian.schemas.records import HubNode

MAX_CHILDREN = 20
_STOP = frozenset(
    ("and", "are", "for", "from", "into", "the", "with", "without", "all", "any", "use")
)


@dataclass(frozen=True)
class Item:
    cre_id: str
    name: str


def _tokens(name: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", name.lower()) if t not in _STOP and len(t) > 2]


def _namespace(cre_id: str) -> str | None:
    head, sep, _ = cre_id.rpartition("-")
    return head if sep and head else None


def _by_namespace(items: Sequence[Item]) -> list[tuple[str, list[Item]]] | None:
    spaces = [_namespace(i.cre_id) for i in items]
    if sum(s is not None for s in spaces) * 2 <= len(items):
        return None
    groups: dict[str, list[Item]] = {}
    for item, space in zip(items, spaces, strict=True):
        groups.setdefault(f"{space}-*" if space else "other", []).append(item)
    return list(groups.items()) if 2 <= len(groups) <= MAX_CHILDREN else None


def _by_tokens(items: Sequence[Item]) -> list[tuple[str, list[Item]]] | None:
    frequency = Counter(t for i in items for t in set(_tokens(i.name)))
    # Tokens shared by at least two names and not by (nearly) all: they tell groups apart.
    useful = sorted(
        (t for t, n in frequency.items() if 2 <= n < len(items)), key=lambda t: (-frequency[t], t)
    )[: MAX_CHILDREN - 1]
    if not useful:
        return None
    rank = {t: r for r, t in enumerate(useful)}
    groups: dict[str, list[Item]] = {}
    for item in items:
        shared = sorted((t for t in set(_tokens(item.name)) if t in rank), key=rank.__getitem__)
        groups.setdefault(shared[0] if shared else "other", []).append(item)
    if len(groups) < 2 or max(len(g) for g in groups.values()) == len(items):
        return None
    return sorted(groups.items(), key=lambda kv: (kv[0] == "other", kv[0]))


def _alphabetical(items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    ordered = sorted(items, key=lambda i: (i.name.lower(), i.cre_id))
    size = -(-len(ordered) // MAX_CHILDREN)  # ceil: at most MAX_CHILDREN groups
    size = max(size, 2)
    groups = []
    for start in range(0, len(ordered), size):
        chunk = ordered[start : start + size]
        groups.append((f"{chunk[0].name[:1].upper()}-{chunk[-1].name[:1].upper()}", chunk))
    return groups


def navigation_paths(items: Sequence[Item]) -> dict[str, tuple[str, ...]]:
    """Group labels from the top of the tree down to each item (empty when few enough)."""
    ordered = sorted(items, key=lambda i: i.cre_id)
    if len(ordered) <= MAX_CHILDREN:
        return {i.cre_id: () for i in ordered}
    groups = _by_namespace(ordered) or _by_tokens(ordered) or _alphabetical(ordered)
    paths: dict[str, tuple[str, ...]] = {}
    for label, members in groups:
        below = navigation_paths(members) if len(members) < len(ordered) else {}
        for item in members:
            paths[item.cre_id] = (label, *below.get(item.cre_id, ()))
    return paths


def load_catalogue(path: Path) -> list[HubNode]:
    """A catalogue file as hub nodes whose paths start with the catalogue's name."""
    if not path.is_file():
        raise HubError(f"catalogue {path} does not exist")
    title = path.stem
    try:
        with path.open(encoding="utf-8-sig") as handle:
            raw = list(json_objects(handle))
    except (UnicodeDecodeError, JsonLineError) as exc:
        raise HubError(f"{path}: {exc}") from exc
    for line_no, obj in raw:
        for key in ("cre_id", "name"):
            if not isinstance(obj.get(key), str) or not str(obj[key]).strip():
                raise HubError(f"{path}:{line_no}: missing or empty {key!r}")
    if not raw:
        raise HubError(f"catalogue {path} has no nodes")
    names = {str(o["cre_id"]): str(o["name"]).strip() for _, o in raw}
    parents = {str(o["cre_id"]): o.get("parent_id") for _, o in raw}
    has_children = {p for p in parents.values() if p}
    if any(parents.values()):
        paths = {c: _ancestry(c, names, parents, path) for c in names}
    else:
        nav = navigation_paths([Item(c, n) for c, n in names.items()])
        paths = {c: (*nav[c], names[c]) for c in names}
    nodes = []
    for line_no, obj in raw:
        cre_id = str(obj["cre_id"])
        hierarchy = (title, *paths[cre_id])
        try:
            nodes.append(
                HubNode(
                    cre_id=cre_id,
                    name=names[cre_id],
                    parent_id=str(parents[cre_id]) if parents[cre_id] else None,
                    hierarchy_path=hierarchy,
                    depth=len(hierarchy) - 1,
                    is_leaf=cre_id not in has_children,
                )
            )
        except ValueError as exc:
            raise HubError(f"{path}:{line_no}: node {cre_id!r}: {exc}") from exc
    return nodes


def _ancestry(
    cre_id: str, names: Mapping[str, str], parents: Mapping[str, object], path: Path
) -> tuple[str, ...]:
    chain: list[str] = []
    current: str | None = cre_id
    while current is not None:
        if current not in names:
            raise HubError(f"{path}: node {cre_id}: parent {current} is not in the catalogue")
        chain.append(names[current])
        parent = parents[current]
        current = str(parent) if parent else None
        if len(chain) > len(names):
            raise HubError(f"{path}: node {cre_id}: its parent chain loops")
    return tuple(reversed(chain))


def merge_catalogues(hub: Hub, catalogues: Sequence[Path]) -> Hub:
    """OpenCRE's hub plus each catalogue as a collection named after its file."""
    if not catalogues:
        return hub
    nodes = list(hub.nodes)
    owner = {n.cre_id: hub.source for n in hub.nodes}
    collection_of: dict[str, str] = {}
    for path in catalogues:
        name = path.stem
        for node in load_catalogue(path):
            if node.cre_id in owner:
                raise HubError(f"node {node.cre_id}: in both {owner[node.cre_id]} and {path}")
            owner[node.cre_id] = str(path)
            collection_of[node.cre_id] = name
            nodes.append(node)
    merged = build_hub(nodes, source=" + ".join([hub.source, *map(str, catalogues)]))
    return Hub(nodes=merged.nodes, source=merged.source, collection_of=collection_of)


def load_hubs(primary: Path, catalogues: Sequence[Path] = ()) -> Hub:
    return merge_catalogues(load_hub(primary), catalogues)
