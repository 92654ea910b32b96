from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from librarian.catalogue.hub import HubError
from librarian.catalogue.teams import (
    MAX_CHILDREN,
    Item,
    load_catalogue,
    merge_catalogues,
    navigation_paths,
)
from librarian.routing.collections import hub_collections
from tests.stubs import small_hub

TOPICS = ["password", "backup", "vendor", "incident", "laptop", "email", "badge", "cloud"]


def policies(namespaces: int = 3, each: int = 15) -> list[Item]:
    out = []
    for space in range(namespaces):
        for n in range(each):
            topic = TOPICS[n % len(TOPICS)]
            out.append(Item(f"{900 + space:03d}-{n:03d}", f"{topic} rule {space}.{n}"))
    return out


def fan_out(paths: dict[str, tuple[str, ...]]) -> int:
    """The most children any node of the navigation tree has (groups and leaves)."""
    edges = {labels[: d + 1] for labels in paths.values() for d in range(len(labels))}
    edges |= {(*labels, c) for c, labels in paths.items()}
    return max(Counter(e[:-1] for e in edges).values())


def test_namespaced_ids_are_grouped_by_namespace_at_most_20_a_node() -> None:
    items = policies(3, 15)
    paths = navigation_paths(items)
    assert {p[0] for p in paths.values()} == {"900-*", "901-*", "902-*"}
    assert fan_out(paths) <= MAX_CHILDREN


def test_the_same_file_in_any_order_gives_the_same_tree() -> None:
    items = policies(2, 40)
    shuffled = list(items)
    random.Random(7).shuffle(shuffled)
    assert navigation_paths(items) == navigation_paths(shuffled)
    assert fan_out(navigation_paths(items)) <= MAX_CHILDREN


def test_one_namespace_falls_back_to_shared_name_tokens() -> None:
    items = policies(1, 45)  # one namespace: grouping by it would not split anything
    paths = navigation_paths(items)
    assert {p[0] for p in paths.values()} <= {*TOPICS, "rule", "other"}
    assert paths["900-000"][0] == "password"
    assert fan_out(paths) <= MAX_CHILDREN


def test_nothing_shared_falls_back_to_alphabetical_groups() -> None:
    words = [f"{chr(97 + i % 26)}{chr(97 + i // 26)}q{i:02d}" for i in range(60)]
    items = [Item(f"900-{i:03d}", w) for i, w in enumerate(words)]
    paths = navigation_paths(items)
    assert all(re.fullmatch(r"[A-Z]-[A-Z]", p[0]) for p in paths.values())
    assert fan_out(paths) <= MAX_CHILDREN


def write_catalogue(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_flat_catalogue_becomes_a_collection_with_navigation_paths(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [{"cre_id": i.cre_id, "name": i.name} for i in policies(3, 10)]
    catalogue = write_catalogue(tmp_path / "team-policies.jsonl", rows)
    nodes = load_catalogue(catalogue)
    assert all(n.hierarchy_path[0] == "team-policies" and n.parent_id is None for n in nodes)
    assert nodes[0].hierarchy_path[-1] == nodes[0].name
    hub = merge_catalogues(small_hub(), [catalogue])
    collections = hub_collections(hub)
    assert collections["team-policies"] == frozenset(i.cre_id for i in policies(3, 10))
    assert collections["technical"] == small_hub().by_id.keys()
    assert hub.content_hash != merge_catalogues(small_hub(), []).content_hash


def test_a_catalogue_with_parents_keeps_its_hierarchy(tmp_path: Path) -> None:
    catalogue = write_catalogue(
        tmp_path / "ours.jsonl",
        [
            {"cre_id": "900-000", "name": "Access"},
            {"cre_id": "900-001", "name": "Badges are worn", "parent_id": "900-000"},
        ],
    )
    nodes = {n.cre_id: n for n in load_catalogue(catalogue)}
    assert nodes["900-001"].hierarchy_path == ("ours", "Access", "Badges are worn")
    assert not nodes["900-000"].is_leaf and nodes["900-001"].depth == 2


def test_a_line_that_is_not_json_is_refused_naming_it(tmp_path: Path) -> None:
    catalogue = tmp_path / "bad.jsonl"
    catalogue.write_text('{"cre_id": "900-000", "name": "Fine"}\n{not json\n')
    with pytest.raises(HubError, match="line 2: invalid JSON"):
        load_catalogue(catalogue)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"cre_id": "100-000", "name": "Clash"}], "in both"),
        ([{"cre_id": "900-000"}], "missing or empty 'name'"),
        ([{"cre_id": "X1", "name": "Bad id"}], "node 'X1'"),
        ([{"cre_id": "900-001", "name": "Orphan", "parent_id": "900-009"}], "not in the catalogue"),
    ],
)
def test_bad_catalogues_are_refused_naming_the_node(
    tmp_path: Path, rows: list[dict[str, object]], message: str
) -> None:
    catalogue = write_catalogue(tmp_path / "bad.jsonl", rows)
    with pytest.raises(HubError, match=message):
        merge_catalogues(small_hub(), [catalogue])
