"""Writes data/golden/dev.json: the dev golden set `librarian eval` scores, in the upstream
harness's format (schemas/rfc/golden-dataset.schema.json).

Positive rows are every section of the dev frameworks (DEV_FRAMEWORKS) that people linked,
in both text styles: its title (`gold:<framework>:<section>:title`) and, where the shared
data has it, its prose (`...:prose`). `librarian train --holdout-dev` leaves those
frameworks out entirely (their links neither describe a hub nor teach the calibrator), so
each row is scored by models that never saw its framework. The explicit, update,
ambiguous and hard-negative rows are written by hand in data/golden/handwritten.json, and
48 sentence-style requirements (one CRE each, `gold:requirements:NN:prose`) in
data/golden/requirements.json: the nearest thing here to a verification standard's
requirements, which no framework in the shared data is written like.
Deterministic: rerunning gives the same file.

    python scripts/make_golden.py [--out data/golden/dev.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from librarian.catalogue.hub import load_hub
from librarian.paths import DEFAULT_HUB, DEFAULT_LINKS, DEFAULT_SECTION_TEXTS
from librarian.training.golden import dump_golden, load_golden, rows_from_links
from librarian.training.links import (
    DEV_FRAMEWORKS,
    linked_sections,
    load_links,
    load_section_texts,
)

GOLDEN_DIR = Path("data") / "golden"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links", type=Path, default=DEFAULT_LINKS)
    parser.add_argument("--section-texts", type=Path, default=DEFAULT_SECTION_TEXTS)
    parser.add_argument("--hub", type=Path, default=DEFAULT_HUB)
    parser.add_argument("--handwritten", type=Path, default=GOLDEN_DIR / "handwritten.json")
    parser.add_argument("--requirements", type=Path, default=GOLDEN_DIR / "requirements.json")
    parser.add_argument("--out", type=Path, default=GOLDEN_DIR / "dev.json")
    args = parser.parse_args()

    hub = load_hub(args.hub)
    linked = linked_sections(
        load_links(args.links), load_section_texts(args.section_texts), known_cres=hub.by_id
    )
    sections = [s for s in linked if s.curated and s.framework_id in DEV_FRAMEWORKS]
    order = sorted(sections, key=lambda s: (s.framework_id, s.style, s.section_id, s.text))
    rows = rows_from_links(order)
    rows += load_golden(args.handwritten) + load_golden(args.requirements)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump_golden(rows))
    print(f"{args.out}: {len(rows)} rows ({len(sections)} from {len(DEV_FRAMEWORKS)} frameworks)")


if __name__ == "__main__":
    main()
