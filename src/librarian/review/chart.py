"""A source's evidence as a chart the server draws (SVG, no script, no CDN): each decided
item at its confidence on a labelled axis, right above the line and wrong below it; the
cut its source has now, drawn and labelled; the band the review plan asks its reviewers
to decide, shaded; a legend that says which is which."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

WIDTH, HEIGHT = 560, 150
LEFT, RIGHT_PAD, TOP, AXIS = 14, 14, 26, 112  # AXIS: the y of the confidence axis
MIDDLE = (TOP + AXIS) / 2 + 6  # the line right and wrong items sit either side of
RIGHT, WRONG, CUT, BAND = "#2e7d32", "#c62828", "#1f2937", "#fde68a"
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _x(confidence: float) -> float:
    return LEFT + max(0.0, min(1.0, confidence)) * (WIDTH - LEFT - RIGHT_PAD)


def evidence_chart(
    decided: Sequence[tuple[float, bool]], cut: float | None, band: float | None
) -> Markup:
    """The chart, as inline SVG with a text alternative (its title) for screen readers."""
    parts = [
        (
            f'<svg id="evidence-chart" role="img" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg" '
            'font-family="sans-serif">'
        ),
        f"<title>{_summary(decided, cut, band)}</title>",
        *_legend(cut, band),
    ]
    if band is not None and band < 1.0:
        parts.append(
            f'<rect class="band" x="{_x(band):.1f}" y="{TOP}" width="{_x(1.0) - _x(band):.1f}" '
            f'height="{AXIS - TOP}" fill="{BAND}"/>'
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{MIDDLE}" x2="{WIDTH - RIGHT_PAD}" y2="{MIDDLE}" stroke="#d1d5db"/>'
    )
    parts += _axis()
    for n, (confidence, right) in enumerate(decided):
        lane = (n % 5) * 7 + 6
        y = MIDDLE - lane if right else MIDDLE + lane
        colour, kind = (RIGHT, "right") if right else (WRONG, "wrong")
        parts.append(
            f'<circle class="{kind}" cx="{_x(confidence):.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>'
        )
    if cut is not None and cut < 1.0:
        parts.append(
            f'<line class="cut" x1="{_x(cut):.1f}" y1="{TOP}" x2="{_x(cut):.1f}" '
            f'y2="{AXIS}" stroke="{CUT}" stroke-width="2"/>'
            f'<text class="cut-label" x="{_x(cut) - 3:.1f}" y="{TOP + 10}" font-size="10" '
            f'text-anchor="end">cut {cut:.3f}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _axis() -> list[str]:
    """The confidence axis: its line, its ticks and their values, its name."""
    out = [
        f'<line class="axis" x1="{LEFT}" y1="{AXIS}" x2="{WIDTH - RIGHT_PAD}" y2="{AXIS}" '
        'stroke="#6b7280"/>'
    ]
    for tick in TICKS:
        x = _x(tick)
        out.append(
            f'<line x1="{x:.1f}" y1="{AXIS}" x2="{x:.1f}" y2="{AXIS + 4}" stroke="#6b7280"/>'
            f'<text x="{x:.1f}" y="{AXIS + 15}" font-size="10" text-anchor="middle">'
            f"{tick:.2f}</text>"
        )
    out.append(
        f'<text class="axis-name" x="{WIDTH / 2:.0f}" y="{HEIGHT - 4}" font-size="10" '
        'text-anchor="middle">confidence of the first suggestion when the item was decided</text>'
    )
    return out


def _legend(cut: float | None, band: float | None) -> list[str]:
    """What each mark is, in one line above the chart."""
    keys = [
        f'<circle cx="{LEFT + 4}" cy="10" r="3" fill="{RIGHT}"/>'
        f'<text x="{LEFT + 11}" y="13" font-size="10">decided right</text>',
        f'<circle cx="{LEFT + 94}" cy="10" r="3" fill="{WRONG}"/>'
        f'<text x="{LEFT + 101}" y="13" font-size="10">decided wrong</text>',
    ]
    at = LEFT + 190
    if cut is not None and cut < 1.0:
        keys.append(
            f'<line x1="{at}" y1="4" x2="{at}" y2="16" stroke="{CUT}" stroke-width="2"/>'
            f'<text x="{at + 6}" y="13" font-size="10">the source\'s cut</text>'
        )
        at += 100
    if band is not None and band < 1.0:
        keys.append(
            f'<rect x="{at}" y="5" width="10" height="10" fill="{BAND}"/>'
            f'<text x="{at + 14}" y="13" font-size="10">where more decisions count</text>'
        )
    return [f'<g class="legend">{"".join(keys)}</g>']


def _summary(decided: Sequence[tuple[float, bool]], cut: float | None, band: float | None) -> str:
    right = sum(ok for _, ok in decided)
    said = [f"{len(decided)} decided items: {right} right, {len(decided) - right} wrong"]
    if cut is not None and cut < 1.0:
        said.append(f"cut {cut:.3f}")
    if band is not None and band < 1.0:
        said.append(f"the plan asks for decisions at confidence {band:.2f} and above")
    return "; ".join(said)
