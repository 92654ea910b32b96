"""Stage 2: the hub catalogue, validated on load.

A bad catalogue is refused with an error naming the node: ids unique and
well-formed, every parent present, no cycles, every node reachable from a root.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError

from librarian.errors import InputError
from librarian.jsonl import JsonLineError, json_objects
from librarian.schemas.records import HubNode


class HubError(InputError):
    """The hub catalogue cannot be used; the message names the node or line."""


@dataclass(frozen=True)
class Hub:
    nodes: tuple[HubNode, ...]
    source: str
    # Nodes of a team's own catalogue -> its collection name (pipeline/catalogue.py);
    # OpenCRE's nodes are not listed: their collection is their root branch.
    collection_of: Mapping[str, str] = field(default_factory=dict)
    by_id: dict[str, HubNode] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {n.cre_id: n for n in self.nodes})

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(n.cre_id for n in self.nodes)

    @property
    def content_hash(self) -> str:
        """sha256 over the nodes' canonical JSON, independent of file order and whitespace."""
        digest = hashlib.sha256()
        for node in self.nodes:
            digest.update(node.model_dump_json().encode("utf-8"))
            digest.update(b"\n")
        if self.collection_of:
            digest.update(json.dumps(dict(sorted(self.collection_of.items()))).encode("utf-8"))
        return digest.hexdigest()

    @cached_property
    def is_leaf(self) -> Mapping[str, bool]:
        """Whether each CRE has no child in this hub (a team's catalogue may give a node
        children the node itself does not know of, so its own `is_leaf` is not read)."""
        parents = {n.parent_id for n in self.nodes if n.parent_id is not None}
        return {n.cre_id: n.cre_id not in parents for n in self.nodes}

    def name_texts(self) -> list[str]:
        return [n.name for n in self.nodes]

    def path_texts(self) -> list[str]:
        return [path_text(n) for n in self.nodes]

    def children_texts(self) -> list[str]:
        """A node's name followed by its children's names: what a broad CRE is about.

        Broad CREs ("Configuration Management") are named in a word or two; their
        children say what they cover. A leaf's text is its name.
        """
        children: dict[str, list[str]] = {}
        for node in self.nodes:
            if node.parent_id is not None:
                children.setdefault(node.parent_id, []).append(node.name)
        return [
            f"{n.name}: {'; '.join(sorted(children[n.cre_id]))}" if n.cre_id in children else n.name
            for n in self.nodes
        ]


def path_text(node: HubNode) -> str:
    return " > ".join(node.hierarchy_path)


def load_hub(path: Path) -> Hub:
    if not path.is_file():
        raise HubError(f"hub catalogue {path} does not exist")
    nodes: list[HubNode] = []
    try:
        with path.open(encoding="utf-8-sig") as handle:
            for line_no, obj in json_objects(handle):
                nodes.append(_node(path, line_no, obj))
    except JsonLineError as exc:
        raise HubError(f"{path}:{exc.line}: not a JSON-lines catalogue: {exc.reason}") from exc
    except UnicodeDecodeError as exc:
        raise HubError(f"{path}: not a UTF-8 JSON-lines catalogue ({exc.reason})") from exc
    return build_hub(nodes, source=str(path))


def _node(path: Path, line_no: int, obj: dict[str, Any]) -> HubNode:
    try:
        return HubNode.model_validate(obj)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise HubError(
            f"{path}:{line_no}: node {obj.get('cre_id')!r}: {where}: {err['msg']}"
        ) from exc


def build_hub(nodes: Iterable[HubNode], source: str = "<memory>") -> Hub:
    ordered = sorted(nodes, key=lambda n: n.cre_id)
    if not ordered:
        raise HubError(f"hub catalogue {source} has no nodes")
    by_id: dict[str, HubNode] = {}
    for node in ordered:
        if node.cre_id in by_id:
            raise HubError(f"node {node.cre_id}: id appears more than once")
        by_id[node.cre_id] = node
    for node in ordered:
        if node.parent_id is not None and node.parent_id not in by_id:
            raise HubError(f"node {node.cre_id}: parent {node.parent_id} is not in the hub")
    for node in ordered:
        _check_no_cycle(node, by_id)
    roots = [n.cre_id for n in ordered if n.parent_id is None]
    if not roots:
        raise HubError("hub has no root (every node has a parent)")
    children: dict[str, list[str]] = {}
    for node in ordered:
        if node.parent_id is not None:
            children.setdefault(node.parent_id, []).append(node.cre_id)
    reached: set[str] = set()
    stack = list(roots)
    while stack:
        current = stack.pop()
        if current not in reached:
            reached.add(current)
            stack.extend(children.get(current, []))
    for node in ordered:
        if node.cre_id not in reached:
            raise HubError(f"node {node.cre_id}: not reachable from any root")
    return Hub(nodes=tuple(ordered), source=source)


def _check_no_cycle(node: HubNode, by_id: dict[str, HubNode]) -> None:
    seen = {node.cre_id}
    parent = node.parent_id
    while parent is not None:
        if parent in seen:
            raise HubError(f"node {node.cre_id}: its parent chain loops back through {parent}")
        seen.add(parent)
        parent = by_id[parent].parent_id


OPENCRE_CRE = "https://www.opencre.org/cre/"


def cre_url(cre_id: str) -> str:
    """A CRE's page on opencre.org."""
    return OPENCRE_CRE + quote(cre_id, safe="")
