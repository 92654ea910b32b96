"""What the flow process keeps per batch on Dask: the mechanism behind issue 39's item 3,
measured without the models (minutes, not the hour `bench_scaleout.py` takes).

    python scripts/bench_dask_memory.py [--tasks 400] [--kb 600]

A Prefect flow on the product's own Dask task runner (`flows.dask.dask_task_runner`: a
local cluster of two worker processes, its scheduler in this process) submits `--tasks`
tasks one after another, each given a batch of about `--kb` KB as the runner gives
`prepare-batch` its sections (a `Parcel`), and waits for each. It prints this process's
resident memory every 50 tasks, then the growth per task and per row (256 rows a batch),
once with the scheduler's message log as the product sets it and once with Dask's
default (1,000 messages), in two child processes.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys

ROWS = 256  # a batch, at the default --batch-size


def child(tasks: int, kb: int, keep: int | None) -> None:
    import dask
    import psutil
    from prefect import flow, task
    from prefect.cache_policies import NONE

    from librarian.flows.dask import LOG_SETTING, dask_task_runner
    from librarian.flows.link_flow import Parcel

    @task(cache_policy=NONE)
    def work(batch: Parcel[list[str]]) -> int:
        return len(batch.value)

    runner = dask_task_runner(None, 2)
    if keep is not None:
        dask.config.set({LOG_SETTING: keep})

    @flow(task_runner=runner)
    def drain() -> None:
        me = psutil.Process()
        size = max(1, kb * 1024 // ROWS)
        for number in range(1, tasks + 1):
            batch = [f"{number}-{row} ".ljust(size, "x") for row in range(ROWS)]
            work.submit(Parcel(batch)).result()
            if number % 50 == 0:
                gc.collect()
                print(number, round(me.memory_info().rss / 2**20, 1), flush=True)

    drain()


def measure(tasks: int, kb: int, keep: int | None) -> list[tuple[int, float]]:
    args = [sys.executable, __file__, "--child", "--tasks", str(tasks), "--kb", str(kb)]
    if keep is not None:
        args += ["--keep", str(keep)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    points = []
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            points.append((int(parts[0]), float(parts[1])))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--kb", type=int, default=600, help="each batch's size")
    parser.add_argument("--keep", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.tasks, args.kb, args.keep)
        return
    print(f"{args.tasks} tasks, each a batch of ~{args.kb} KB ({ROWS} rows), on Dask (2 workers)")
    slopes = {}
    for label, keep in (("as the product sets it", None), ("Dask's default, 1,000", 1000)):
        points = measure(args.tasks, args.kb, keep)
        (first_n, first), (last_n, last) = points[0], points[-1]
        per_task = (last - first) * 1024 / (last_n - first_n)
        slopes[label] = per_task
        trace = ", ".join(f"{n}: {rss:.0f}" for n, rss in points)
        print(f"message log {label}: RSS MiB by tasks {trace}")
        print(f"  growth {per_task:.1f} KB a task, {per_task / ROWS:.2f} KB a row")
    ours, default = slopes.values()
    print(f"growth with Dask's default / with the product's: {default / max(ours, 0.1):.0f}x")


if __name__ == "__main__":
    main()
