"""NEGATION_MISMATCH before and after the same-thing rule (issue 22, item 6): how often it
fires on the packaged demo queue, on sentence-style requirements and on the dev set's
linked sections (text against its first candidate's name, and, for true links, against
the right CRE's name: any flag there is a false one), and whether every hand-written
hard negative stays flagged.

    python scripts/negation_flags.py [--models DIR]

The "before" rule is the one this change replaced (any negation on one side, none on the
other), kept here only to measure against.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from librarian.catalogue.hub import load_hub
from librarian.factory import pipeline_for
from librarian.paths import DEFAULT_HUB, librarian_home, packaged_data
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import parse_line, section_from_text
from librarian.pipeline.negation import negation_differs
from librarian.schemas.records import Section
from librarian.settings import LinkerSettings

ROOT = Path(__file__).resolve().parents[1]
_BEFORE = re.compile(
    r"\b(not|never|no|none|nor|cannot|without|neither|needn't|"
    r"[a-z]+n't|no longer|optional|unnecessary|prohibited from|exempt)\b",
    re.IGNORECASE,
)


def before(one: str, other: str) -> bool:
    def negated(text: str) -> bool:
        return bool(_BEFORE.search(text.replace("\u2019", "'")))

    return negated(one) != negated(other)


def first_names(sections: list[Section], settings: LinkerSettings) -> list[str | None]:
    """Each section's first candidate's name, linked one at a time (as `explain` does)."""
    pipeline = pipeline_for(settings)
    names: list[str | None] = []
    for section in sections:
        (envelope,) = one_shot.link(pipeline, [section], "negation-flags").envelopes
        candidates = envelope.retrieval.candidates
        names.append(candidates[0].cre_name if candidates else None)
    return names


def count(pairs: list[tuple[str, str | None]]) -> dict[str, int]:
    scored = [(t, n) for t, n in pairs if n]
    return {
        "pairs": len(scored),
        "before": sum(before(t, n) for t, n in scored),
        "after": sum(negation_differs(t, n) for t, n in scored),
    }


# Issue 48, item 4: a prohibition that agrees, and permission-style contradictions ("need
# not", "should not be required to", "is not necessary"), each beside the obligation it
# agrees with or lifts, with whether it must flag.
STATED = [
    (
        "Only approved cryptographic algorithms may be used; home-grown cryptography is "
        "prohibited.",
        "Use approved cryptographic algorithms",
        False,
    ),
    (
        "Users should not be required to authenticate before accessing administrative functions.",
        "Authenticate users before administrative access",
        True,
    ),
    (
        "Multi-factor authentication need not be used for remote access.",
        "Use MFA for remote access",
        True,
    ),
    ("Encryption of backups is not necessary.", "Encrypt backups", True),
    ("There is no need to rotate session tokens after login.", "Rotate session tokens", True),
    ("Session tokens are not required to be rotated after login.", "Rotate session tokens", True),
    ("Backups are not mandatory for test systems.", "Back up systems", True),
    ("Users are prohibited from sharing accounts.", "Do not share accounts", False),
]


def stated() -> dict[str, int]:
    right = sum(negation_differs(text, name) is flag for text, name, flag in STATED)
    return {"pairs": len(STATED), "right": right}


def golden(name: str) -> list[dict[str, Any]]:
    return list(json.loads((ROOT / "data" / "golden" / f"{name}.json").read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=Path, default=librarian_home(None).models)
    args = parser.parse_args()
    settings = LinkerSettings(models_dir=args.models, hub_path=DEFAULT_HUB)
    hub = load_hub(DEFAULT_HUB)
    sample = packaged_data("samples", "queue_sample.jsonl").read_bytes().splitlines()
    demo = [s for n, raw in enumerate(sample, 1) if isinstance(s := parse_line(n, raw), Section)]
    hard = [r["input"]["text"] for r in golden("handwritten") if r["slice"] == "hard_negative"]
    requirements = [r for r in golden("requirements")]
    dev = [r for r in golden("dev") if r["slice"] == "positive"]
    report = {
        "demo queue, first candidate": count(
            list(zip([s.text for s in demo], first_names(demo, settings), strict=True))
        ),
        "requirements, first candidate": count(
            list(
                zip(
                    [r["input"]["text"] for r in requirements],
                    first_names(
                        [section_from_text(r["input"]["text"]) for r in requirements], settings
                    ),
                    strict=True,
                )
            )
        ),
        "requirements, the right CRE (false flags)": count(
            [
                (r["input"]["text"], hub.by_id[r["expected"]["cre_ids"][0]].name)
                for r in requirements
            ]
        ),
        "dev linked sections, the right CRE (false flags)": count(
            [
                (r["input"]["text"], hub.by_id[c].name)
                for r in dev
                for c in r["expected"]["cre_ids"][:1]
                if c in hub.by_id
            ]
        ),
        "hard negatives, first candidate (true flags)": count(
            list(
                zip(hard, first_names([section_from_text(t) for t in hard], settings), strict=True)
            )
        ),
        "issue 48 pairs, each as it must flag (right of pairs)": stated(),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
