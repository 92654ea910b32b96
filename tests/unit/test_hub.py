from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from librarian.catalogue.hub import HubError, load_hub
from librarian.paths import DEFAULT_HUB


def node(cre_id: str, parent: str | None, name: str = "n") -> dict[str, Any]:
    return {
        "cre_id": cre_id,
        "name": f"{name} {cre_id}",
        "parent_id": parent,
        "hierarchy_path": ["root", f"{name} {cre_id}"],
        "depth": 1 if parent else 0,
        "is_leaf": False,
        "related_ids": [],
    }


def write(tmp_path: Path, nodes: list[Any]) -> Path:
    path = tmp_path / "hubs.jsonl"
    path.write_text("".join(json.dumps(n) + "\n" for n in nodes))
    return path


def test_default_hub_loads() -> None:
    hub = load_hub(DEFAULT_HUB)
    assert len(hub.nodes) == 522
    assert sum(1 for n in hub.nodes if n.parent_id is None) == 5
    assert hub.by_id["616-305"].name


def test_content_hash_ignores_file_order(tmp_path: Path) -> None:
    nodes = [node("100-000", None), node("100-001", "100-000"), node("100-002", "100-000")]
    a = load_hub(write(tmp_path, nodes))
    b = load_hub(write(tmp_path, list(reversed(nodes))))
    assert a.content_hash == b.content_hash
    changed = [*nodes[:2], node("100-002", "100-000", name="renamed")]
    assert load_hub(write(tmp_path, changed)).content_hash != a.content_hash


@pytest.mark.parametrize(
    ("nodes", "names"),
    [
        ([node("100-000", None), node("100-000", None)], "100-000"),
        ([node("100-000", None), node("100-001", "999-999")], "100-001"),
        ([node("100-000", None), node("1000-01", "100-000")], "1000-01"),
        (
            [node("100-000", None), node("200-000", "200-001"), node("200-001", "200-000")],
            "200-000",
        ),
        ([node("100-001", "100-002"), node("100-002", "100-001")], "100-001"),
        ([], "no nodes"),
    ],
)
def test_bad_catalogue_is_refused_naming_the_node(
    tmp_path: Path, nodes: list[Any], names: str
) -> None:
    with pytest.raises(HubError, match=names):
        load_hub(write(tmp_path, nodes))


def test_bad_json_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "hubs.jsonl"
    path.write_text(json.dumps(node("100-000", None)) + "\n{oops\n")
    with pytest.raises(HubError, match=":2:"):
        load_hub(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(HubError, match="does not exist"):
        load_hub(tmp_path / "nope.jsonl")
