"""A PDF page's ruled tables, from the rules drawn around their cells: a table is three or
more horizontal rules over one width (cell rectangles, thin filled rectangles or stroked
lines: Word, LibreOffice and fpdf2 draw them each their own way), its rows the bands
between them, its columns the bands between its vertical rules. Each piece of text inside
is its cell's, whatever the cell's alignment (a cell centred vertically has its id beside
its text's second line). A table without rules is read as lines of text.

Every step sorts, bisects or looks rules up by their place (never every rule against
every other: a 1.5 KB page of 10,000 rule widths took 17 s), and a page is read as
tables only within stated limits (MAX_RULES, MAX_TABLES, MAX_CELLS): past one, its
tables are read as lines of text, and the reader says so (`TooManyRules`)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import Any

GLYPH = 0.5  # an average glyph's width, in ems
THIN = 2.0  # points: a filled rectangle this thin is a rule
MIN_RULE = 20.0  # points: a shorter rule is no table's (an underline, a bullet)
SAME = 1.5  # points: rules this close are one
MAX_ROW = 300.0  # points: a band this tall is no table row (a page frame around a table)
# What one page may draw and still be read as tables (a dense page of real tables draws a
# few hundred rules, a few dozen tables at most, a few thousand cells): past any, its
# tables are read as lines of text, with a warning.
MAX_RULES = 5_000
MAX_TABLES = 200  # groups of two or more rules across over one width
MAX_CELLS = 20_000  # rows times columns, every table of the page together
SAME_WIDTH = 0.8  # rules overlapping this share of the longer one are of one width
FAR = 1e6  # points: a rule further from the origin is on no page (the largest: 14,400)


class TooManyRules(Exception):
    """A page draws more than the table reader takes: why, and the limits, in words."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"{why} (the most a page is read with: {MAX_RULES:,} rules, {MAX_TABLES} "
            f"tables, {MAX_CELLS:,} cells); its text is read as lines"
        )


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
    """The rules a page draws, collected as pypdf walks its content (`visit`); past
    MAX_RULES none more is kept (`over`)."""

    found: list[Rule] = field(default_factory=list)
    point: tuple[float, float] | None = None
    over: bool = False
    # Small squares drawn beside text (a checklist's boxes): (left, bottom, right, top).
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)

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
        except (TypeError, ValueError, OverflowError):
            return  # an operand that is no number: no rule

    def _rectangle(self, x: float, y: float, w: float, h: float, cm: Sequence[float]) -> None:
        (x0, y0), (x1, y1) = _placed(x, y, cm), _placed(x + w, y + h, cm)
        left, right, bottom, top = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        if _a_box(right - left, top - bottom):
            if len(self.boxes) < MAX_RULES and all(abs(v) <= FAR for v in (left, top)):
                self.boxes.append((left, bottom, right, top))
            return
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
        if not all(abs(v) <= FAR for v in (rule.at, rule.start, rule.end)):
            return  # no page's rule (and none past a float's range, or not a number)
        if rule.end - rule.start >= (MIN_RULE if rule.horizontal else THIN):
            if len(self.found) >= MAX_RULES:
                self.over = True
            else:
                self.found.append(rule)


BOX = (2.5, 12.0)  # points: the sides of a checklist's box drawn beside its line


def _a_box(width: float, height: float) -> bool:
    """A small square: a checkbox (or a square bullet) drawn, not typed."""
    low, high = BOX
    return low <= width <= high and low <= height <= high and 0.7 <= width / height <= 1.4


def _placed(x: float, y: float, cm: Sequence[float]) -> tuple[float, float]:
    return x * cm[0] + y * cm[2] + cm[4], x * cm[1] + y * cm[3] + cm[5]


def tables(rules: Rules, fragments: list[Fragment]) -> tuple[list[Table], list[Fragment]]:
    """The page's ruled tables with their cells' text, and the fragments outside them.
    Raises TooManyRules when the page draws more than the limits take."""
    if rules.over:
        raise TooManyRules(f"it draws more than {MAX_RULES:,} rules")
    if not rules.found:
        return [], fragments
    found: list[Table] = []
    taken: set[int] = set()  # fragments inside a table already read
    by_height = sorted(range(len(fragments)), key=lambda i: fragments[i].y)
    heights = [fragments[i].y for i in by_height]
    cells = 0
    for grid in _grids(rules.found):
        low = bisect_left(heights, grid.rows[-1] - SAME)
        high = bisect_right(heights, grid.rows[0] + SAME)
        held = sorted(i for i in by_height[low:high] if i not in taken and grid.holds(fragments[i]))
        if not held:
            continue
        inside = [fragments[i] for i in held]
        if len(grid.columns) == 2:  # rules across only: columns where the text starts
            grid = _Grid(grid.rows, _text_columns(grid, inside))
        cells += (len(grid.rows) - 1) * (len(grid.columns) - 1)
        if cells > MAX_CELLS:
            raise TooManyRules(f"its tables hold more than {MAX_CELLS:,} cells")
        sizes = Counter(round(f.size, 1) for f in inside for _ in f.text)
        size = sizes.most_common(1)[0][0] if sizes else 0.0
        found.append(Table(grid.rows[0], grid.cells(inside), size))
        taken.update(held)
    return found, [f for i, f in enumerate(fragments) if i not in taken]


@dataclass(frozen=True)
class _Grid:
    rows: tuple[float, ...]  # horizontal rules, top to bottom
    columns: tuple[float, ...]  # vertical rules, left to right (or the table's edges)

    def holds(self, f: Fragment) -> bool:
        return (
            self.rows[-1] - SAME <= f.y <= self.rows[0] + SAME
            and self.columns[0] - SAME <= f.x <= self.columns[-1]
        )

    def row_of(self, f: Fragment, below: Sequence[float]) -> int | None:
        """The band a fragment sits in: the first whose bottom rule it is not below
        (`below`: the rules negated, ascending); None under the last."""
        at = bisect_left(below, -f.y, lo=1)
        return at - 1 if at < len(below) else None

    def cells(self, fragments: list[Fragment]) -> tuple[tuple[str, ...], ...]:
        grid: list[list[list[Fragment]]] = [[[] for _ in self.columns[:-1]] for _ in self.rows[:-1]]
        below = [-y for y in self.rows]
        for f in fragments:
            row = self.row_of(f, below)
            at = bisect_right(self.columns, f.x, lo=1)  # the first column edge right of it
            if row is not None and at < len(self.columns):
                grid[row][at - 1].append(f)
        return tuple(
            tuple(_text(cell) for cell in row) for row in grid if any(cell for cell in row)
        )


def _text_columns(grid: _Grid, inside: list[Fragment]) -> tuple[float, ...]:
    """A table ruled across only: a column starts where text starts in two rows or more
    (text starting within 2 * SAME of a start seen before starts there: the first seen)."""
    rows_at: dict[float, tuple[int, set[int]]] = {}  # a start: (its order, its rows)
    near: dict[int, list[float]] = {}  # the starts by x // (2 * SAME): found without a scan
    below = [-y for y in grid.rows]
    for f in inside:
        row = grid.row_of(f, below)
        key = math.floor(f.x / (2 * SAME))
        close = [
            x for k in (key - 1, key, key + 1) for x in near.get(k, ()) if abs(x - f.x) <= 2 * SAME
        ]
        start = min(close, key=lambda x: rows_at[x][0]) if close else f.x
        if not close:
            near.setdefault(key, []).append(start)
            rows_at[start] = (len(rows_at), set())
        rows_at[start][1].add(0 if row is None else row)
    starts = sorted(x for x, (_, rows) in rows_at.items() if len(rows) >= 2)
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


def _grids(found: list[Rule]) -> Iterator[_Grid]:
    """Groups of three or more horizontal rules over one width, split where a band is too
    tall to be a row; each with the vertical rules inside it (found by bisection among
    the vertical rules sorted by where they stand)."""
    rules = _merged(found)
    groups = _by_width(sorted((r for r in rules if r.horizontal), key=lambda r: -r.at))
    if len(groups) > MAX_TABLES:
        raise TooManyRules(f"it draws rules across for more than {MAX_TABLES} tables")
    downs = sorted((r for r in rules if not r.horizontal), key=lambda r: r.at)
    stands = [d.at for d in downs]
    for group in groups:
        ys = _distinct([r.at for r in group], descending=True)
        left, right = min(r.start for r in group), max(r.end for r in group)
        inside = downs[bisect_left(stands, left - SAME) : bisect_right(stands, right + SAME)]
        runs = _runs(ys, inside)
        for run, crossing in zip(runs, _crossing(runs, inside), strict=True):
            columns = _distinct([left, *crossing, right], descending=False)
            yield _Grid(tuple(run), tuple(columns))


def _by_width(across: list[Rule]) -> list[list[Rule]]:
    """Rules across, top to bottom, grouped by width: each joins the first group still
    open (its last rule within MAX_ROW above) whose first rule it shares a width with,
    else opens one. Groups are looked up by their first rule's length and start
    (`_Widths`), a few a rule, not all of them; a group of one rule is dropped (no
    table has one)."""
    groups: list[list[Rule]] = []
    widths = _Widths()
    for rule in across:
        found = None
        for g in widths.near(rule):
            if groups[g][-1].at - rule.at > MAX_ROW:
                widths.close(g, groups[g][0])  # too far above: no later rule joins it
            elif _same_width(groups[g][0], rule) and (found is None or g < found):
                found = g
        if found is None:
            widths.open(len(groups), rule)
            groups.append([rule])
        else:
            groups[found].append(rule)
    return [g for g in groups if len(g) >= 2]


@dataclass
class _Widths:
    """Open groups by their first rule: its length class (a step of 1.25 times) and its
    start in a span of the class's longest. Two rules of one width (`_same_width`) are
    no more than a class apart and start no further apart than a span, so a rule's
    groups are in the three classes and three spans around it."""

    slots: dict[tuple[int, int], list[int]] = field(default_factory=dict)

    @staticmethod
    def _key(rule: Rule, length_class: int | None = None) -> tuple[int, int]:
        k = _length_class(rule) if length_class is None else length_class
        return k, math.floor(rule.start / 1.25 ** (k + 2))

    def near(self, rule: Rule) -> list[int]:
        k = _length_class(rule)
        found: list[int] = []
        for c in range(k - 2, k + 3):  # two classes each side: rounding at a class's edge
            _, span = self._key(rule, c)
            for s in (span - 1, span, span + 1):
                found.extend(self.slots.get((c, s), ()))
        return found

    def open(self, group: int, first: Rule) -> None:
        self.slots.setdefault(self._key(first), []).append(group)

    def close(self, group: int, first: Rule) -> None:
        slot = self.slots.get(self._key(first), [])
        if group in slot:
            slot.remove(group)


def _length_class(rule: Rule) -> int:
    return math.floor(math.log(max(rule.end - rule.start, MIN_RULE)) / math.log(1.25))


def _runs(ys: list[float], downs: list[Rule]) -> list[list[float]]:
    """The rules of one width, split into tables: where vertical rules are drawn, a band
    none crosses is no row (the heading between two tables of one width); where none
    are, three rules or more make a table. Whether a band is crossed: the longest reach
    of the rules starting below its bottom (sorted by start, a running maximum)."""
    if not downs:
        return [ys] if len(ys) >= 3 else []
    by_start = sorted(downs, key=lambda d: d.start)
    starts = [d.start for d in by_start]
    reach = list(accumulate((d.end for d in by_start), max))
    runs: list[list[float]] = [[ys[0]]]
    for top, bottom in pairwise(ys):
        below = bisect_right(starts, bottom + SAME)
        if below and reach[below - 1] >= top - SAME:
            runs[-1].append(bottom)
        else:
            runs.append([bottom])
    return [run for run in runs if len(run) >= 2]


def _crossing(runs: list[list[float]], downs: list[Rule]) -> list[list[float]]:
    """The vertical rules inside each run: a rule reaching into a run's rows. Runs are
    apart where no rule crosses, so a rule reaches into one run, found by bisection."""
    crossing: list[list[float]] = [[] for _ in runs]
    tops = [-run[0] for run in runs]  # ascending: the runs top to bottom
    bottoms = [-run[-1] for run in runs]
    for d in downs:
        # runs whose top is above its start, and whose bottom is below its end
        first = bisect_right(bottoms, -(d.end - SAME))
        last = bisect_left(tops, -(d.start + SAME))
        for i in range(first, last):
            crossing[i].append(d.at)
    return crossing


def _same_width(a: Rule, b: Rule) -> bool:
    overlap = min(a.end, b.end) - max(a.start, b.start)
    return overlap >= SAME_WIDTH * max(a.end - a.start, b.end - b.start)


def _distinct(values: list[float], descending: bool) -> list[float]:
    out: list[float] = []
    for v in sorted(values, reverse=descending):
        if not out or abs(out[-1] - v) > SAME:
            out.append(v)
    return out


Box = tuple[float, float, float, float]  # left, bottom, right, top
BOX_GAP = 24.0  # points: at most this far left of its line's first character


@dataclass(frozen=True)
class Boxes:
    """A page's boxes, by their bottom: those at a line's height are found by bisection,
    not by trying every box against every line (a page may draw thousands)."""

    boxes: Sequence[Box]  # by their bottom

    @classmethod
    def of(cls, boxes: Sequence[Box]) -> Boxes:
        return cls(sorted(boxes, key=lambda b: b[1]))

    def before(self, row: list[Fragment]) -> bool:
        """Whether a box is drawn just before the line `row`, at its height."""
        if not self.boxes:
            return False
        start, base = min(f.x for f in row), row[0].y
        size = max(f.size for f in row) or 10.0
        low = bisect_left(self.boxes, base - 2.0 - BOX[1], key=lambda b: b[1])
        high = bisect_right(self.boxes, base + size, key=lambda b: b[1])
        return any(
            0.0 <= start - right <= BOX_GAP and top >= base - 2.0
            for _, _, right, top in self.boxes[low:high]
        )
