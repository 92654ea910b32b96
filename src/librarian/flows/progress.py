"""Progress by run id: a callable is no flow parameter (parameters are stored by the
API), so the CLI registers a `Progress` here and the flow reports to it."""

from __future__ import annotations

from dataclasses import dataclass

from librarian.pipeline.run import Progress

_PROGRESS: dict[str, Progress] = {}


def on_progress(run_id: str, progress: Progress | None) -> None:
    if progress is None:
        _PROGRESS.pop(run_id, None)
    else:
        _PROGRESS[run_id] = progress


def phase(run_id: str, name: str) -> None:
    progress = _PROGRESS.get(run_id)
    if progress is not None:
        progress.phase(name)


@dataclass(frozen=True)
class ReportedProgress:
    """The runner's `Progress` for a run: whatever the CLI registered under its id."""

    run_id: str

    def phase(self, name: str) -> None:
        phase(self.run_id, name)

    def advance(self, lines: int) -> None:
        progress = _PROGRESS.get(self.run_id)
        if progress is not None:
            progress.advance(lines)
