"""Paired comparison of two evals of the same golden rows (`librarian eval --rows FILE`):
per style and framework, rows whose first candidate became right (+) or wrong (-), and
the exact McNemar p-value (a two-sided binomial test on the discordant rows). Rows only
one file scored are left out (a warm eval scores fewer rows).

    python scripts/paired_eval.py BEFORE.jsonl AFTER.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from scipy.stats import binomtest


def load(path: Path) -> dict[str, dict[str, object]]:
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {str(r["id"]): r for r in rows if r["ranked"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    before, after = load(args.before), load(args.after)
    groups: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for rid, row in after.items():
        if rid in before:
            pair = (bool(before[rid]["top1"]), bool(row["top1"]))
            groups[str(row["group"])].append(pair)
            groups["(all)"].append(pair)
    print(f"{'group':30s} {'rows':>5s} {'before':>6s} {'after':>6s} {'+':>4s} {'-':>4s}  p")
    for name, pairs in sorted(groups.items()):
        up = sum(1 for x, y in pairs if y and not x)
        down = sum(1 for x, y in pairs if x and not y)
        p = binomtest(up, up + down).pvalue if up + down else 1.0
        right = (sum(x for x, _ in pairs), sum(y for _, y in pairs))
        print(f"{name:30s} {len(pairs):5d} {right[0]:6d} {right[1]:6d} {up:4d} {down:4d}  {p:.3g}")


if __name__ == "__main__":
    main()
