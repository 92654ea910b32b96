"""Paired comparison of two evals of the same golden rows (`librarian eval --rows FILE`):
per style and framework, rows whose first candidate became right (up) or wrong (down),
how many rows' first suggestion changed, and the exact McNemar p-value. The frameworks
whose sections map (nearly) one to one are marked [1:1] and totalled apart. Rows only one
file scored are left out (a warm eval scores fewer rows).

Exits 1 when any group (the total, the one-to-one groups, or one style and framework)
loses significantly (more rows down than up, McNemar p < 0.05): `make dev-eval` runs it
against the committed rows of 8a42df9's models and code.

    python scripts/paired_eval.py BEFORE.jsonl AFTER.jsonl [--golden data/golden/dev.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from librarian.training.golden import load_golden
from librarian.training.paired import one_to_one_frameworks, paired_groups, table


def load(path: Path) -> dict[str, dict[str, object]]:
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {str(r["id"]): r for r in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--golden", type=Path, help="the golden set: marks one-to-one groups")
    args = parser.parse_args()
    one_to_one = one_to_one_frameworks(load_golden(args.golden)) if args.golden else set()
    groups = paired_groups(load(args.before), load(args.after), one_to_one)
    print(f"paired: {args.before} -> {args.after}")
    print(table(groups))
    losing = [g.name for g in groups if g.loses]
    if losing:
        print(f"significant loss in: {', '.join(losing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
