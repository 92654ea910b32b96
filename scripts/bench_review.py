"""The workbench over a 10,000-item queue: how long each page takes to serve.

The store is filled with real ReviewItems: the packaged sample queue linked once by the
shipped linker, uncalibrated (so all go to review), then copied under new chunk and
review ids, and with 300 decisions taken. Each page is requested through the application
in-process (FastAPI's TestClient: routing, the queries, rendering; no network), 20 times
after a warm-up; the median and the worst are printed.

Run: python scripts/bench_review.py [--items 10000] [--db PATH]     (~1 minute)
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from librarian.catalogue.hub import load_hub
from librarian.factory import build_pipeline
from librarian.paths import DEFAULT_HUB, packaged_data
from librarian.pipeline import one_shot
from librarian.pipeline.ingest import parse_line
from librarian.review.bench import Workbench
from librarian.review.decisions import DecisionRequest, decide
from librarian.review.web import create_app
from librarian.schemas.envelopes import ReviewItem
from librarian.schemas.records import Section
from librarian.settings import LinkerSettings
from librarian.store.db import make_engine, upgrade
from librarian.store.decisions import load_reviews
from librarian.store.review import review_items


def sample_reviews(cache: Path) -> list[ReviewItem]:
    lines = packaged_data("samples", "queue_sample.jsonl").read_bytes().splitlines()
    parsed = [parse_line(n, raw) for n, raw in enumerate(lines, start=1)]
    sections = [s for s in parsed if isinstance(s, Section)]
    linker = build_pipeline(LinkerSettings(uncalibrated=True, cache_dir=cache, threshold=1.0))
    result = one_shot.link(linker, sections, "bench")
    return [e for e in result.envelopes if isinstance(e, ReviewItem)]


def fill(db: Path, count: int, cache: Path) -> str:
    url = f"sqlite:///{db}"
    engine = make_engine(url)
    upgrade(engine)
    base = sample_reviews(cache)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    copies = []
    for i in range(count):
        e = base[i % len(base)]
        copies.append(
            e.model_copy(
                update={
                    "chunk_id": f"{e.chunk_id}-{i}",
                    "review_id": f"rev-bench-{i:06d}",
                    "artifact_id": f"artifact-{i % 400:03d}",
                    "created_at": start + timedelta(seconds=i),
                    "pipeline_run_id": f"bench-{i // 1000}",
                }
            )
        )
    with Session(engine) as session, session.begin():
        load_reviews(session, copies, "bench")
    hub_ids = set(load_hub(DEFAULT_HUB).ids)
    with Session(engine) as session, session.begin():
        for item in [i for i in review_items(session) if i.suggestions][:300]:
            decide(session, DecisionRequest(item.review_id, "approve", "bench"), hub_ids)
    engine.dispose()
    return url


def timed(client: TestClient, path: str, repeats: int = 20) -> tuple[float, float]:
    client.get(path)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "bench.db"
        started = time.perf_counter()
        url = fill(db, args.items, Path(tmp) / "cache")
        print(
            f"{args.items} items, 300 decided, filled in {time.perf_counter() - started:.0f} s; "
            f"{platform.machine()}, Python {platform.python_version()}"
        )
        engine = make_engine(url)
        client = TestClient(create_app(Workbench(engine, load_hub(DEFAULT_HUB), "bench")))
        middle = f"rev-bench-{args.items // 2:06d}"
        pages = {
            "queue, first page": "/",
            "queue, page 100": "/?page=100",
            "queue, filtered by reason": "/?reason=ADVERSARIAL_FLAG",
            "queue, filtered by source": "/?source=artifact-123",
            "queue, by confidence, page 50": "/?sort=confidence&page=50",
            "queue, decided": "/?status=decided",
            "item page": f"/item/{middle}",
            "hub search": "/api/search?q=session%20token",
        }
        print("| page | median ms | worst ms |\n|---|---:|---:|")
        for name, path in pages.items():
            median, worst = timed(client, path)
            print(f"| {name} | {median:.1f} | {worst:.1f} |")
        engine.dispose()


if __name__ == "__main__":
    main()
