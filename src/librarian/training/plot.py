"""The reliability diagram `librarian eval --plot` draws: one panel per text style."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from librarian.training.calibrate import ReliabilityBin


def reliability_diagram(
    by_style: Mapping[str, tuple[float, Sequence[ReliabilityBin]]], path: Path, title: str
) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only; no display on a batch machine
    import matplotlib.pyplot as plt

    styles = list(by_style) or ["(no rows)"]
    fig, axes = plt.subplots(
        2,
        len(styles),
        figsize=(5 * len(styles), 6),
        squeeze=False,
        gridspec_kw={"height_ratios": [3, 1]},
    )
    for column, style in enumerate(styles):
        ece, bins = by_style.get(style, (0.0, []))
        _panel(axes[0][column], axes[1][column], bins)
        axes[0][column].set_title(f"{title}: {style} (ECE {ece:.3f})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _panel(top: Any, bottom: Any, bins: Sequence[ReliabilityBin]) -> None:
    used = [b for b in bins if b.count]
    width = (bins[0].upper - bins[0].lower) if bins else 0.1
    top.bar(
        [b.lower for b in used],
        [b.accuracy for b in used],
        width=width,
        align="edge",
        edgecolor="black",
        label="accuracy of first-ranked CRE",
    )
    top.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    top.plot(
        [b.mean_confidence for b in used],
        [b.accuracy for b in used],
        "o",
        color="darkred",
        label="(mean confidence, accuracy) per bin",
    )
    top.set_ylabel("accuracy")
    top.set_ylim(0, 1)
    top.legend(loc="upper left", fontsize=8)
    bottom.bar([b.lower for b in bins], [b.count for b in bins], width=width, align="edge")
    bottom.set_xlabel("confidence")
    bottom.set_ylabel("rows")
    bottom.set_xlim(0, 1)
