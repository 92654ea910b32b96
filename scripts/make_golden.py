"""Writes data/golden/dev.json: the dev golden set `librarian eval` scores.

Positive rows are every curated, readable link of the dev frameworks (DEV_FRAMEWORKS),
which the default training run leaves out, so each is scored by models that never saw
its framework. The explicit, update, ambiguous and hard-negative rows are written by
hand in data/golden/handwritten.json. Deterministic: rerunning gives the same file.

    python scripts/make_golden.py [--links data/opencre/links.jsonl] [--out data/golden/dev.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from librarian.catalogue.hub import load_hub
from librarian.learning.golden import dump_golden, load_golden, rows_from_links
from librarian.learning.links import (
    DEV_FRAMEWORKS,
    curated_sections,
    load_links,
)
from librarian.paths import DEFAULT_HUB, DEFAULT_LINKS

GOLDEN_DIR = Path("data") / "golden"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links", type=Path, default=DEFAULT_LINKS)
    parser.add_argument("--hub", type=Path, default=DEFAULT_HUB)
    parser.add_argument("--handwritten", type=Path, default=GOLDEN_DIR / "handwritten.json")
    parser.add_argument("--out", type=Path, default=GOLDEN_DIR / "dev.json")
    args = parser.parse_args()

    hub = load_hub(args.hub)
    sections = [
        s
        for s in curated_sections(load_links(args.links), known_cres=hub.by_id)
        if s.framework_id in DEV_FRAMEWORKS
    ]
    rows = rows_from_links(sorted(sections, key=lambda s: (s.framework_id, s.section_id)))
    rows += load_golden(args.handwritten)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump_golden(rows))
    print(f"{args.out}: {len(rows)} rows ({len(sections)} from {len(DEV_FRAMEWORKS)} frameworks)")


if __name__ == "__main__":
    main()
