"""Lint: no function or method in the package is longer than MAX_LINES (signature to last
line). Run by `make lint`; prints every offender and exits 1 when there is one."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_LINES = 60
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "librarian"


def long_functions(root: Path, limit: int) -> list[tuple[str, int, str, int]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > limit:
                    found.append(
                        (str(path.relative_to(root.parent)), node.lineno, node.name, length)
                    )
    return found


def main() -> int:
    offenders = long_functions(PACKAGE, MAX_LINES)
    for where, line, name, length in offenders:
        print(f"{where}:{line}: {name} is {length} lines (limit {MAX_LINES})")
    longest = max((o[3] for o in offenders), default=0)
    print(
        f"{len(offenders)} functions over {MAX_LINES} lines"
        + (f" (longest {longest})" if offenders else "")
    )
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
