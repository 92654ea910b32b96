"""Linking a source as a whole through the real flow and the real models: a file's
sources are linked over all its batches (the outcome does not depend on the batch size),
and every model-scored envelope says how its source was linked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from librarian.paths import packaged_data
from librarian.pipeline import components as ids
from librarian.pipeline.components import stage_ids
from librarian.pipeline.sinks import read_jsonl
from librarian.settings import LinkerSettings
from tests.rfc import assert_rfc_valid

pytestmark = pytest.mark.integration

SAMPLE = packaged_data("samples", "queue_sample.jsonl")


def decided(out: Path) -> dict[str, Any]:
    envelopes = read_jsonl(out / "proposals.jsonl") + read_jsonl(out / "reviews.jsonl")
    assert_rfc_valid(envelopes)
    return {
        e["chunk_id"]: (
            e.get("reason_code", "linked"),
            [
                (link["cre_id"], link["confidence"])
                for link in e.get("links") or e.get("suggested_links") or []
            ],
            e["retrieval"]["retriever"],
        )
        for e in envelopes
    }


def test_a_files_sources_are_linked_over_all_its_batches(dev_models: Path, tmp_path: Path) -> None:
    from librarian.flows.link_flow import link_queue
    from librarian.job import LinkJob

    outcomes, summaries = [], []
    for size in (3, 256):
        settings = LinkerSettings(batch_size=size, models_dir=dev_models, cache_dir=tmp_path / "c")
        out = tmp_path / f"out-{size}"
        summaries.append(link_queue(LinkJob(SAMPLE, out, settings, f"whole-{size}")).value)
        outcomes.append(decided(out))
    small, whole = outcomes
    # Ten batches or one: the same decisions, candidates and audit; confidences equal but
    # for the last float digits (a matrix product's rounding depends on its batch shape).
    assert small.keys() == whole.keys()
    for chunk, (reason, links, audit) in whole.items():
        other_reason, other_links, other_audit = small[chunk]
        assert (other_reason, other_audit) == (reason, audit), chunk
        assert [c for c, _ in other_links] == [c for c, _ in links], chunk
        assert [p for _, p in other_links] == pytest.approx([p for _, p in links], abs=1e-5)
    modelled = [v for v in whole.values() if "source=" in v[2]]
    assert len(modelled) >= 20
    for _, _, retriever in modelled:
        assert stage_ids(retriever)["source-level"] == ids.SOURCE_LEVEL_JOINT
    sources = summaries[1].sources
    assert sources == summaries[0].sources
    cheat = sources["github:OWASP/CheatSheetSeries"]
    assert cheat["linked_as_whole"] and cheat["decisions"] == 0
    assert cheat["decisions_needed"] > 0
    said = [v[2] for v in modelled if "CheatSheetSeries" in v[2].split("source=")[1]]
    assert said and all(f"{cheat['items']} items" in s for s in said)


def test_source_level_off_links_each_section_alone(dev_models: Path, tmp_path: Path) -> None:
    from librarian.flows.link_flow import link_queue
    from librarian.job import LinkJob

    settings = LinkerSettings(models_dir=dev_models, cache_dir=tmp_path / "c", source_level="off")
    summary = link_queue(LinkJob(SAMPLE, tmp_path / "out", settings, "alone")).value
    for _, _, retriever in decided(tmp_path / "out").values():
        if "source=" in retriever:
            assert stage_ids(retriever)["source-level"] == ids.SOURCE_LEVEL_NONE
    assert all(not s["linked_as_whole"] for s in summary.sources.values())
    assert json.loads(summary.model_dump_json())["sources"]
