"""Where batches run on Dask: the task runner for a local cluster or a scheduler's
address, and what the flow process must not keep while it drains one.

Flat memory: the scheduler of a local cluster lives in the flow process, and its batched
stream to each worker keeps its last `distributed.admin.low-level-log-length` messages
(1,000 by default) for debugging. Each "compute-task" message holds its task's
arguments, a whole batch: the flow process grew ~6 KB a row until a thousand messages
were kept (docs/benchmarks.md). The run keeps `MESSAGE_LOG` of them. A remote scheduler
(`--dask-address`) keeps its own: set the same there.
"""

from __future__ import annotations

from typing import Any

# How many messages a local cluster's scheduler keeps per stream (and transitions, and
# events: the same setting): enough to read what just happened, never a file's batches.
MESSAGE_LOG = 16
LOG_SETTING = "distributed.admin.low-level-log-length"


def dask_task_runner(address: str | None, workers: int) -> Any:
    """A Prefect task runner on Dask: the scheduler at `address`, or a local cluster of
    `workers` single-threaded processes whose scheduler keeps `MESSAGE_LOG` messages."""
    import dask
    from prefect_dask.task_runners import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    dask.config.set({LOG_SETTING: MESSAGE_LOG})  # before the cluster starts, in this process
    local = {
        "n_workers": workers,
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
    }
    return DaskTaskRunner(cluster_kwargs=local)


def in_flight(address: str | None, workers: int) -> int:
    """How many batches to keep in flight on Dask: two a local worker (one working, one
    waiting), four for a scheduler whose workers we do not know."""
    return 4 if address else 2 * workers
