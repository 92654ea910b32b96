"""Collections: the hub's root branches (and each team catalogue), by name."""

from __future__ import annotations

import re

from librarian.catalogue.hub import Hub
from librarian.errors import UsageError


class RoutingError(UsageError):
    """A rules file, a classifier file or a pin cannot be used; the message says which."""


def collection_name(root_name: str) -> str:
    """A root branch's collection name: the first word of its name, lower case."""
    words = re.findall(r"[a-z0-9][a-z0-9-]*", root_name.lower())
    return words[0] if words else "collection"


def hub_collections(hub: Hub) -> dict[str, frozenset[str]]:
    """Collection name -> CRE ids: one per OpenCRE root branch (roots sorted by id), then
    one per team catalogue (`hub.collection_of`)."""
    roots = sorted(
        (n for n in hub.nodes if n.parent_id is None and n.cre_id not in hub.collection_of),
        key=lambda n: n.cre_id,
    )
    names: dict[str, str] = {}
    for root in roots:
        name = collection_name(root.name)
        names[root.cre_id] = name if name not in names.values() else f"{name}-{root.cre_id}"
    members: dict[str, set[str]] = {name: set() for name in names.values()}
    for node in hub.nodes:
        if node.cre_id in hub.collection_of:
            name = hub.collection_of[node.cre_id]
            if name in names.values():
                name = f"{name}-catalogue"
            members.setdefault(name, set()).add(node.cre_id)
            continue
        top = node
        while top.parent_id is not None:
            top = hub.by_id[top.parent_id]
        members[names[top.cre_id]].add(node.cre_id)
    return {name: frozenset(ids) for name, ids in members.items()}
