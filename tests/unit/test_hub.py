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


# Issue 22, item 3: find a CRE by meaning and words together --------------------------


def test_hub_search_ranks_an_exact_id_first_and_spells_out_abbreviations() -> None:
    from librarian.retrieval.hub_search import HubSearch
    from librarian.retrieval.index import build_index
    from tests.stubs import StubEmbedder, small_hub

    hub = small_hub()
    embedder = StubEmbedder()
    search = HubSearch(hub, embedder, build_index(hub, embedder, None))
    assert search.search("300-001")[0].cre_id == "300-001"
    assert search.search("sqli")[0].cre_id == "300-001"  # "sql injection", spelled out
    rotation = search.search("token rotation")  # "rotation" is in no name: meaning finds it
    assert rotation[0].cre_id == "200-001" and rotation[0].words < 1.0
    words_only = HubSearch(hub, None, None)
    assert words_only.search("token rotation") == []  # every word must be there
    assert [h.cre_id for h in words_only.search("session token")] == ["200-001"]
    assert search.search("   ") == []


def test_a_cre_is_a_leaf_when_no_node_of_the_hub_names_it_its_parent(tmp_path: Path) -> None:
    """Read from the hub's own parents, not a node's `is_leaf` (every node here says
    False): the one map C.5 and training share."""
    nodes = [node("100-000", None), node("100-001", "100-000"), node("100-002", "100-001")]
    hub = load_hub(write(tmp_path, nodes))
    assert hub.is_leaf == {"100-000": False, "100-001": False, "100-002": True}
