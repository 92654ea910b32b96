"""A source's evidence as a small chart the server draws (SVG, no script, no CDN): each
decided item at its confidence, right above the axis and wrong below it; the cut its
source has now; the band the review plan asks its reviewers to decide."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

WIDTH, HEIGHT, PAD = 420, 90, 10
RIGHT, WRONG, CUT, BAND = "#2e7d32", "#c62828", "#1f2937", "#fde68a"


def _x(confidence: float) -> float:
    return PAD + max(0.0, min(1.0, confidence)) * (WIDTH - 2 * PAD)


def evidence_chart(
    decided: Sequence[tuple[float, bool]], cut: float | None, band: float | None
) -> Markup:
    """The chart, as inline SVG with a text alternative (its title) for screen readers."""
    middle = HEIGHT / 2
    parts = [
        f'<svg id="evidence-chart" role="img" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{_summary(decided, cut, band)}</title>",
    ]
    if band is not None and band < 1.0:
        parts.append(
            f'<rect class="band" x="{_x(band):.1f}" y="{PAD}" width="{_x(1.0) - _x(band):.1f}" '
            f'height="{HEIGHT - 2 * PAD}" fill="{BAND}"/>'
        )
    parts.append(
        f'<line x1="{PAD}" y1="{middle}" x2="{WIDTH - PAD}" y2="{middle}" stroke="#9ca3af"/>'
    )
    for tick in (0.0, 0.5, 1.0):
        parts.append(
            f'<text x="{_x(tick):.1f}" y="{HEIGHT - 1}" font-size="9" text-anchor="middle">'
            f"{tick:.1f}</text>"
        )
    for n, (confidence, right) in enumerate(decided):
        lane = (n % 4) * 6 + 5
        y = middle - lane if right else middle + lane
        colour, kind = (RIGHT, "right") if right else (WRONG, "wrong")
        parts.append(
            f'<circle class="{kind}" cx="{_x(confidence):.1f}" cy="{y:.1f}" r="2.5" '
            f'fill="{colour}"/>'
        )
    if cut is not None and cut < 1.0:
        parts.append(
            f'<line class="cut" x1="{_x(cut):.1f}" y1="{PAD}" x2="{_x(cut):.1f}" '
            f'y2="{HEIGHT - PAD}" stroke="{CUT}" stroke-width="2"/>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _summary(decided: Sequence[tuple[float, bool]], cut: float | None, band: float | None) -> str:
    right = sum(ok for _, ok in decided)
    said = [f"{len(decided)} decided items: {right} right, {len(decided) - right} wrong"]
    if cut is not None and cut < 1.0:
        said.append(f"cut {cut:.3f}")
    if band is not None and band < 1.0:
        said.append(f"the plan asks for decisions at confidence {band:.2f} and above")
    return "; ".join(said)
