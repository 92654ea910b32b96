"""`librarian relink` as a user runs it, on the real MiniLM (raw cosine: no training)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from librarian.cli import app
from librarian.store.db import make_engine, upgrade
from librarian.store.tables import DecisionRow
from tests.seeded import store_texts

pytestmark = pytest.mark.integration


def flow_runs_of(api: str, run_id: str) -> list[Any]:
    """The completed runs of the linking flow on the Prefect server at `api` whose job is
    `run_id` (the 100 newest: other tests' runs report to the same server)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api}), get_client(sync_client=True) as client:
        newest = client.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=100)
    return [
        r
        for r in newest
        if r.state is not None
        and r.state.is_completed()
        and r.parameters.get("job", {}).get("run_id") == run_id
    ]


def test_relink_says_what_it_would_do_then_does_it(tmp_path: Path, prefect_server: str) -> None:
    url = f"sqlite:///{tmp_path / 'relink.db'}"
    engine = make_engine(url)
    upgrade(engine)
    store_texts(engine, "r1")
    with Session(engine) as session:
        source = str(session.execute(select(DecisionRow.source_key)).scalars().first())
    base = ["relink", "--source", source, "--db", url, "--uncalibrated", "--out"]
    dry = CliRunner().invoke(app, [*base, str(tmp_path / "dry")])
    assert dry.exit_code == 0, dry.output
    assert "4 open items; would link" in dry.output and "stored:" not in dry.output
    with Session(engine) as session:
        assert {r.pipeline_run_id for r in session.execute(select(DecisionRow)).scalars()} == {"r1"}
    done = CliRunner().invoke(app, [*base, str(tmp_path / "done"), "--commit"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "stored: 4 decided again, 0 left to the reviewers" in said
    assert "read 4, linked 0, review 4, rejected 0 (every open item accounted for)" in said
    # A relink is a run: its summary and envelopes where --out says (issue 49, item 4).
    summary = json.loads((tmp_path / "done" / "summary.json").read_text())
    assert (summary["mode"], summary["read"], summary["stored"]["redecided"]) == ("commit", 4, 4)
    assert len((tmp_path / "done" / "reviews.jsonl").read_text().splitlines()) == 4
    assert json.loads((tmp_path / "dry" / "summary.json").read_text())["mode"] == "dry-run"
    with Session(engine) as session:
        runs = {r.pipeline_run_id for r in session.execute(select(DecisionRow)).scalars()}
    assert len(runs) == 1 and runs.pop().startswith("relink-")
    # A relink runs through the linking flow, as any run (issue 57): Prefect has it.
    assert len(flow_runs_of(prefect_server, summary["run_id"])) == 1
    engine.dispose()
