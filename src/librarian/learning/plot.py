"""The reliability diagram `librarian eval --plot` draws."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from librarian.learning.calibrate import ReliabilityBin


def reliability_diagram(bins: Sequence[ReliabilityBin], ece: float, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only; no display on a batch machine
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(5, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
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
        [b.mean_confidence for b in used], [b.accuracy for b in used], "o", color="darkred",
        label="(mean confidence, accuracy) per bin",
    )  # fmt: skip
    top.set_ylabel("accuracy")
    top.set_ylim(0, 1)
    top.set_title(f"{title} (ECE {ece:.3f})")
    top.legend(loc="upper left", fontsize=8)
    bottom.bar([b.lower for b in bins], [b.count for b in bins], width=width, align="edge")
    bottom.set_xlabel("confidence")
    bottom.set_ylabel("rows")
    bottom.set_xlim(0, 1)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
