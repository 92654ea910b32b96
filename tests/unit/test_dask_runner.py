"""Issue 39, item 3: a local Dask cluster's scheduler (in the flow process) keeps a few
messages to its workers, not a thousand batches."""

from __future__ import annotations

import dask
from distributed.batched import BatchedSend

from librarian.flows.dask import LOG_SETTING, MESSAGE_LOG, dask_task_runner, in_flight


def test_a_local_cluster_keeps_few_messages_and_a_remote_one_is_left_as_it_is() -> None:
    before = dask.config.get(LOG_SETTING)
    try:
        assert before == 1000  # Dask's own default: every message holds a whole batch
        remote = dask_task_runner("tcp://10.0.0.1:8786", 2)
        assert remote.address == "tcp://10.0.0.1:8786"
        assert dask.config.get(LOG_SETTING) == before  # another's scheduler: its own setting
        local = dask_task_runner(None, 3)
        assert local.cluster_kwargs["n_workers"] == 3
        assert dask.config.get(LOG_SETTING) == MESSAGE_LOG
        # The holder the leak was found in: the stream's log of its recent messages.
        stream = BatchedSend(interval="5ms")  # type: ignore[no-untyped-call]
        assert stream.recent_message_log.maxlen == MESSAGE_LOG
    finally:
        dask.config.set({LOG_SETTING: before})
    assert (in_flight(None, 3), in_flight("tcp://x:1", 3)) == (6, 4)
