"""The unmappable gate, learnt leave-one-framework-out: a section whose best hub cosine
(the dense score of its first candidate, the hub's name, path and children; no linked
section in it, so nothing of the held-out framework leaks in) is below the gate's cut is
sent to review as unmappable. The cut is a low percentile of that score over linked
sections: for each framework, learnt on the other frameworks' linked sections and scored
on its own (the false-alarm rate: linked sections it would call unmappable); on all
linked sections for the shipped cut, scored on the 468 unlinked controls and on off-topic
texts (the detection rate).

    python scripts/ood_gate.py [--models DIR] [--percentiles 1 2.5 5 10]

Writes nothing; docs/quality.md records what it printed.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from librarian.factory import build_pipeline
from librarian.paths import librarian_home, packaged_data
from librarian.pipeline import one_shot
from librarian.pipeline.pipeline import Pipeline
from librarian.settings import LinkerSettings

# Text no CRE covers: everyday prose, and business text that sounds like a policy.
OFF_TOPIC = [
    "Preheat the oven to 180 degrees and grease a round cake tin with butter.",
    "Whisk the eggs with the sugar until pale, then fold in the sifted flour.",
    "The home team scored twice in the second half and won the league.",
    "Employees may carry over up to five days of annual leave into the next year.",
    "Travel expenses must be submitted within thirty days with the original receipts.",
    "The cafeteria is open from eight in the morning until three in the afternoon.",
    "Water the tomato plants every evening during the summer months.",
    "The quarterly sales report shows revenue growth of twelve percent in Europe.",
    "Meeting rooms must be booked through the facilities calendar in advance.",
    "New hires attend an orientation session on their first Monday.",
    "The company picnic will take place in the park near the river in June.",
    "Invoices are payable within forty-five days of the invoice date.",
    "The museum exhibition features paintings from the Dutch golden age.",
    "Replace the printer toner when the warning light starts blinking.",
    "Our marketing team will launch the spring campaign on social media.",
    "Dogs must be kept on a leash in the public gardens at all times.",
    "The train to the airport leaves every twenty minutes from platform four.",
    "Customers can return unused items within fourteen days for a full refund.",
    "The choir rehearses on Thursday evenings in the community hall.",
    "Parental leave is sixteen weeks at full pay for all permanent staff.",
    "Please recycle paper, glass and plastic in the separate bins provided.",
    "The annual budget must be approved by the board before the fiscal year starts.",
    "Office plants are watered by the cleaning staff on Fridays.",
    "The novel tells the story of three sisters growing up by the sea.",
    "Stretch for ten minutes before running to avoid muscle injuries.",
    "The hotel offers breakfast between seven and ten in the morning.",
    "Dress code for client meetings is business casual unless stated otherwise.",
    "Our bakery uses organic flour from a mill in the next village.",
    "The bicycle lane on Main Street will be closed for repairs next week.",
    "Employees celebrate their work anniversaries with a team lunch.",
    "The recipe serves four people and takes forty minutes to prepare.",
    "Mountain weather can change quickly, so bring a waterproof jacket.",
    "The library extends its opening hours during the examination period.",
    "Sales targets are reviewed with each regional manager every quarter.",
    "The orchestra performs Beethoven's ninth symphony on New Year's Eve.",
    "Company cars must be refuelled before they are returned to the pool.",
    "Children under twelve travel free when accompanied by an adult.",
    "The garden centre sells seeds, bulbs and young fruit trees.",
    "Our newsletter is published on the first working day of every month.",
    "Holiday requests should be agreed with your line manager in advance.",
]


def scores(pipeline: Pipeline, rows: list[tuple[str, str | None]]) -> np.ndarray:
    out = []
    for text, title in rows:
        envelope = one_shot.explain(pipeline, text, title)
        candidates = envelope.retrieval.candidates
        out.append(max((c.score_vector for c in candidates), default=0.0))
    return np.array(out)


def jsonl(name: str) -> list[dict[str, str]]:
    path = packaged_data("opencre") / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--percentiles", type=float, nargs="+", default=[1, 2.5, 5, 10])
    args = parser.parse_args()
    home = librarian_home(None)
    models = args.models or home.models
    pipeline = build_pipeline(LinkerSettings(models_dir=models, cache_dir=home.cache))
    linked = jsonl("section_texts.jsonl")
    unlinked = jsonl("unlinked_controls.jsonl")
    linked_scores = scores(pipeline, [(r["text"], r.get("section_name")) for r in linked])
    unlinked_scores = scores(pipeline, [(r["text"], r.get("title")) for r in unlinked])
    off_scores = scores(pipeline, [(t, None) for t in OFF_TOPIC])
    frameworks = np.array([r["framework_id"] for r in linked])
    print(
        f"best hub cosine: linked median {np.median(linked_scores):.3f}, unlinked "
        f"{np.median(unlinked_scores):.3f}, off-topic {np.median(off_scores):.3f}"
    )
    print(
        f"{'percentile':>10} {'cut (all)':>9} {'false alarms LOFO':>18} "
        f"{'unlinked caught':>15} {'off-topic caught':>16}"
    )
    for pct in args.percentiles:
        alarms, held = 0, 0
        per: dict[str, str] = defaultdict(str)
        for framework in sorted(set(frameworks)):
            own = frameworks == framework
            cut = float(np.percentile(linked_scores[~own], pct))
            flagged = int((linked_scores[own] < cut).sum())
            alarms, held = alarms + flagged, held + int(own.sum())
            per[framework] = f"{flagged}/{int(own.sum())}"
        cut = float(np.percentile(linked_scores, pct))
        caught = float((unlinked_scores < cut).mean())
        off = float((off_scores < cut).mean())
        print(
            f"{pct:10.1f} {cut:9.3f} {alarms:6d}/{held} {alarms / held:7.1%} "
            f"{caught:15.1%} {off:16.1%}"
        )
        print("           per framework: " + ", ".join(f"{k} {v}" for k, v in per.items()))


if __name__ == "__main__":
    main()
