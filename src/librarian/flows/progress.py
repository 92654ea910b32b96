"""Progress callbacks by run id: a callable is no flow parameter (parameters are stored by
the API), so the CLI registers one here and the flow reports to it."""

from __future__ import annotations

from typing import Protocol


class RunProgress(Protocol):
    """Told what a run is doing: its phase, and lines done as batches finish."""

    def phase(self, name: str) -> None: ...

    def advance(self, lines: int) -> None: ...


_PROGRESS: dict[str, RunProgress] = {}


def on_progress(run_id: str, progress: RunProgress | None) -> None:
    if progress is None:
        _PROGRESS.pop(run_id, None)
    else:
        _PROGRESS[run_id] = progress


def phase(run_id: str, name: str) -> None:
    progress = _PROGRESS.get(run_id)
    if progress is not None:
        progress.phase(name)


def report_lines(run_id: str, lines: int) -> None:
    progress = _PROGRESS.get(run_id)
    if progress is not None:
        progress.advance(lines)
