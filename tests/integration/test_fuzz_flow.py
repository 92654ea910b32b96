"""The fuzzed input boundary through the real flow (Prefect, the packaged MiniLM): hostile
lines mixed into good sample rows. Invariants: the run completes, every line is
accounted for (read = linked + review + rejected + skipped), every good row is decided,
and every envelope meets the published RFC schemas. A few examples a `make test`
(FUZZ_FLOW_EXAMPLES, default 3; `make fuzz` runs 25)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from librarian.paths import packaged_data
from librarian.pipeline.sinks import read_jsonl
from librarian.settings import LinkerSettings
from tests.rfc import assert_rfc_valid
from tests.rows import hostile_lines

pytestmark = pytest.mark.integration

GOOD = packaged_data("samples", "queue_sample.jsonl").read_bytes().splitlines()[:8]
EXAMPLES = int(os.environ.get("FUZZ_FLOW_EXAMPLES", "3"))


def blank(index: int, line: bytes) -> bool:
    """As the reader sees it: a BOM opening the file and CR/LF ends are not content."""
    if index == 0 and line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    return not line.rstrip(b"\r\n").strip()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, hub_vectors: Path) -> Path:
    workdir = tmp_path_factory.mktemp("fuzz-flow")
    shutil.copytree(hub_vectors, workdir / "cache")  # the hub, as a second run finds it
    return workdir


@settings(max_examples=EXAMPLES, deadline=None)
@given(hostile=st.lists(hostile_lines(), min_size=1, max_size=24), seed=st.randoms())
def test_the_flow_survives_hostile_lines(workdir: Path, hostile: list[bytes], seed: object) -> None:
    from librarian.flows.link_flow import link_queue
    from librarian.job import LinkJob

    lines = [*GOOD, *hostile]
    seed.shuffle(lines)  # type: ignore[attr-defined]
    run = f"fuzz-{len(list(workdir.glob('run-*')))}"
    queue = workdir / f"{run}.jsonl"
    queue.write_bytes(b"\n".join(lines) + b"\n")
    out = workdir / f"run-{run}"
    settings_ = LinkerSettings(batch_size=5, cache_dir=workdir / "cache", uncalibrated=True)
    summary = link_queue(LinkJob(queue, out, settings_, run)).value
    assert summary.read == summary.linked + summary.review + summary.rejected + summary.skipped
    assert summary.read == sum(1 for n, line in enumerate(lines) if not blank(n, line))
    envelopes = read_jsonl(out / "proposals.jsonl") + read_jsonl(out / "reviews.jsonl")
    decided = {e["chunk_id"] for e in envelopes}
    assert {json.loads(line)["chunk_id"] for line in GOOD} <= decided
    assert_rfc_valid(envelopes)
