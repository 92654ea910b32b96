"""A PDF page's ruled tables, from the rules drawn around their cells: a table is three or
more horizontal rules over one width (cell rectangles, thin filled rectangles or stroked
lines: Word, LibreOffice and fpdf2 draw them each their own way), its rows the bands
between them, its columns the bands between its vertical rules. Each piece of text inside
is its cell's, whatever the cell's alignment (a cell centred vertically has its id beside
its text's second line). A table without rules is read as lines of text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

GLYPH = 0.5  # an average glyph's width, in ems
THIN = 2.0  # points: a filled rectangle this thin is a rule
MIN_RULE = 20.0  # points: a shorter rule is no table's (an underline, a bullet)
SAME = 1.5  # points: rules this close are one
MAX_ROW = 300.0  # points: a band this tall is no table row (a page frame around a table)


@dataclass(frozen=True)
class Fragment:
    """A piece of text as the page draws it: where it starts, its size, its font."""

    y: float
    x: float
    text: str
    size: float = 0.0
    bold: bool = False

    @property
    def width(self) -> float:
        """Roughly (an average glyph is about half its size wide)."""
        return len(self.text) * max(self.size, 1.0) * GLYPH


@dataclass(frozen=True)
class Rule:
    horizontal: bool
    at: float  # y of a horizontal rule, x of a vertical one
    start: float  # its extent along the other axis
    end: float


@dataclass(frozen=True)
class Table:
    top: float  # y of its top rule
    cells: tuple[tuple[str, ...], ...]
    size: float = 0.0  # the size most of its text is set in


@dataclass
class Rules:
    """The rules a page draws, collected as pypdf walks its content (`visit`)."""

    found: list[Rule] = field(default_factory=list)
    point: tuple[float, float] | None = None

    def visit(self, op: bytes, args: Sequence[Any], cm: Sequence[float], _tm: Any) -> None:
        try:
            if op == b"re" and len(args) == 4:
                x, y, w, h = (float(a) for a in args)
                self._rectangle(x, y, w, h, cm)
            elif op == b"m" and len(args) == 2:
                self.point = _placed(float(args[0]), float(args[1]), cm)
            elif op == b"l" and len(args) == 2 and self.point is not None:
                end = _placed(float(args[0]), float(args[1]), cm)
                self._segment(self.point, end)
                self.point = end
        except (TypeError, ValueError):
            return  # an operand that is no number: no rule

    def _rectangle(self, x: float, y: float, w: float, h: float, cm: Sequence[float]) -> None:
        (x0, y0), (x1, y1) = _placed(x, y, cm), _placed(x + w, y + h, cm)
        left, right, bottom, top = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        if top - bottom < THIN:
            self._add(Rule(True, (top + bottom) / 2, left, right))
        elif right - left < THIN:
            self._add(Rule(False, (left + right) / 2, bottom, top))
        else:  # a cell: its four sides
            self._add(Rule(True, top, left, right))
            self._add(Rule(True, bottom, left, right))
            self._add(Rule(False, left, bottom, top))
            self._add(Rule(False, right, bottom, top))

    def _segment(self, a: tuple[float, float], b: tuple[float, float]) -> None:
        if abs(a[1] - b[1]) < SAME:
            self._add(Rule(True, a[1], min(a[0], b[0]), max(a[0], b[0])))
        elif abs(a[0] - b[0]) < SAME:
            self._add(Rule(False, a[0], min(a[1], b[1]), max(a[1], b[1])))

    def _add(self, rule: Rule) -> None:
        if rule.end - rule.start >= (MIN_RULE if rule.horizontal else THIN):
            self.found.append(rule)


def _placed(x: float, y: float, cm: Sequence[float]) -> tuple[float, float]:
    return x * cm[0] + y * cm[2] + cm[4], x * cm[1] + y * cm[3] + cm[5]


def tables(rules: Rules, fragments: list[Fragment]) -> tuple[list[Table], list[Fragment]]:
    """The page's ruled tables with their cells' text, and the fragments outside them."""
    found, left = [], list(fragments)
    for grid in _grids(rules.found):
        inside = [f for f in left if grid.holds(f)]
        if not inside:
            continue
        if len(grid.columns) == 2:  # rules across only: columns where the text starts
            grid = _Grid(grid.rows, _text_columns(grid, inside))
        sizes = Counter(round(f.size, 1) for f in inside for _ in f.text)
        size = sizes.most_common(1)[0][0] if sizes else 0.0
        found.append(Table(grid.rows[0], grid.cells(inside), size))
        left = [f for f in left if not grid.holds(f)]
    return found, left


@dataclass(frozen=True)
class _Grid:
    rows: tuple[float, ...]  # horizontal rules, top to bottom
    columns: tuple[float, ...]  # vertical rules, left to right (or the table's edges)

    def holds(self, f: Fragment) -> bool:
        return (
            self.rows[-1] - SAME <= f.y <= self.rows[0] + SAME
            and self.columns[0] - SAME <= f.x <= self.columns[-1]
        )

    def cells(self, fragments: list[Fragment]) -> tuple[tuple[str, ...], ...]:
        grid: list[list[list[Fragment]]] = [[[] for _ in self.columns[:-1]] for _ in self.rows[:-1]]
        for f in fragments:
            row = next((i for i in range(len(self.rows) - 1) if f.y >= self.rows[i + 1]), None)
            col = next((j for j in range(len(self.columns) - 1) if f.x < self.columns[j + 1]), None)
            if row is not None and col is not None:
                grid[row][col].append(f)
        return tuple(
            tuple(_text(cell) for cell in row) for row in grid if any(cell for cell in row)
        )


def _text_columns(grid: _Grid, inside: list[Fragment]) -> tuple[float, ...]:
    """A table ruled across only: a column starts where text starts in two rows or more."""
    rows_at: dict[float, set[int]] = {}
    for f in inside:
        row = next((i for i in range(len(grid.rows) - 1) if f.y >= grid.rows[i + 1]), 0)
        start = next((x for x in rows_at if abs(x - f.x) <= 2 * SAME), f.x)
        rows_at.setdefault(start, set()).add(row)
    starts = sorted(x for x, rows in rows_at.items() if len(rows) >= 2)
    inner = [x - SAME for x in starts if x - SAME > grid.columns[0] + SAME]
    return (grid.columns[0], *inner, grid.columns[-1])


def _text(cell: list[Fragment]) -> str:
    ordered = sorted(cell, key=lambda f: (-round(f.y), f.x))
    return " ".join(" ".join(f.text for f in ordered).split())


def _merged(rules: list[Rule]) -> list[Rule]:
    """Rules on one line that touch made one (a row's cells each draw their own side)."""
    out: list[Rule] = []
    for rule in sorted(rules, key=lambda r: (r.horizontal, round(r.at / SAME), r.start)):
        last = out[-1] if out else None
        if (
            last is not None
            and last.horizontal == rule.horizontal
            and abs(last.at - rule.at) <= SAME
            and rule.start <= last.end + 2 * SAME
        ):
            out[-1] = Rule(last.horizontal, last.at, last.start, max(last.end, rule.end))
        else:
            out.append(rule)
    return out


def _grids(found: list[Rule]) -> list[_Grid]:
    """Groups of three or more horizontal rules over one width, split where a band is too
    tall to be a row; each with the vertical rules inside it."""
    rules = _merged(found)
    across = sorted((r for r in rules if r.horizontal), key=lambda r: -r.at)
    groups: list[list[Rule]] = []
    for rule in across:
        group = next((g for g in groups if _same_width(g[0], rule)), None)
        if group is None:
            groups.append([rule])
        elif group[-1].at - rule.at > MAX_ROW:
            groups.append([rule])  # too far below: another table over the same width
        else:
            group.append(rule)
    grids = []
    for group in groups:
        ys = _distinct([r.at for r in group], descending=True)
        left, right = min(r.start for r in group), max(r.end for r in group)
        downs = [r for r in rules if not r.horizontal and left - SAME <= r.at <= right + SAME]
        for run in _runs(ys, downs):
            crossing = [d.at for d in downs if d.start < run[0] - SAME and d.end > run[-1] + SAME]
            columns = _distinct([left, *crossing, right], descending=False)
            grids.append(_Grid(tuple(run), tuple(columns)))
    return grids


def _runs(ys: list[float], downs: list[Rule]) -> list[list[float]]:
    """The rules of one width, split into tables: where vertical rules are drawn, a band
    none crosses is no row (the heading between two tables of one width); where none
    are, three rules or more make a table."""
    if not downs:
        return [ys] if len(ys) >= 3 else []
    runs: list[list[float]] = [[ys[0]]]
    for top, bottom in pairwise(ys):
        crossed = any(d.start <= bottom + SAME and d.end >= top - SAME for d in downs)
        if crossed:
            runs[-1].append(bottom)
        else:
            runs.append([bottom])
    return [run for run in runs if len(run) >= 2]


def _same_width(a: Rule, b: Rule) -> bool:
    overlap = min(a.end, b.end) - max(a.start, b.start)
    return overlap >= 0.8 * max(a.end - a.start, b.end - b.start)


def _distinct(values: list[float], descending: bool) -> list[float]:
    out: list[float] = []
    for v in sorted(values, reverse=descending):
        if not out or abs(out[-1] - v) > SAME:
            out.append(v)
    return out
