"""The dev check that would have caught issue 37's loss: paired per group, one-to-one
frameworks apart, a significant loss named."""

from __future__ import annotations

from librarian.schemas.evaluation import GoldenRow
from librarian.training.paired import one_to_one_frameworks, paired_groups, table


def _row(rid: str, framework: str, section: str, cres: list[str]) -> GoldenRow:
    return GoldenRow.model_validate(
        {
            "id": f"gold:{framework}:{section}:prose",
            "schema_version": "0.1.0",
            "slice": "positive",
            "input": {"text": f"text {rid}", "source_standard": "OTHER"},
            "expected": {"decision": "linked", "cre_ids": cres},
            "provenance": {"ground_truth_source": "test", "section_path": section},
        }
    )


def test_one_to_one_frameworks_are_told_from_shared_ones() -> None:
    rows = [_row(str(i), "std", f"s{i}", [f"100-{i:03d}"]) for i in range(10)]
    rows += [_row(f"n{i}", "nist", f"s{i}", [f"200-{i % 3:03d}"]) for i in range(10)]
    assert one_to_one_frameworks(rows) == {"std"}


def _record(rid: str, group: str, right: bool, first: str) -> dict[str, object]:
    return {"id": rid, "group": group, "ranked": True, "top1": right, "first": first}


def test_a_group_that_loses_is_named_though_the_total_does_not() -> None:
    before = {f"a{i}": _record(f"a{i}", "prose std", True, f"C{i}") for i in range(12)}
    before |= {f"b{i}": _record(f"b{i}", "prose nist", False, "X") for i in range(12)}
    after = {f"a{i}": _record(f"a{i}", "prose std", False, "Y") for i in range(12)}
    after |= {f"b{i}": _record(f"b{i}", "prose nist", True, "C") for i in range(12)}
    groups = {g.name: g for g in paired_groups(before, after, {"std"})}
    assert not groups["(all)"].loses and groups["(all)"].up == groups["(all)"].down == 12
    assert groups["prose std"].loses and groups["(one to one)"].loses
    assert groups["prose std"].changed_first == 12
    assert "LOSES" in table(list(groups.values()))
    same = paired_groups(before, before, {"std"})
    assert not any(g.loses for g in same) and all(g.changed_first == 0 for g in same)
