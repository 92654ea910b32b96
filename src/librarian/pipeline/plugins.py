"""Stages from outside the package. An installed distribution that declares an entry
point in the group `librarian.stages`, naming a `PluggedStage`, adds its stage to every
pipeline `factory.assemble` builds, after the stage it names: it runs in that place (the
fold in `Pipeline.prepare` or `Pipeline.complete`), `run --plan` lists it, and a
model-scored row's audit names its component. In a package's `pyproject.toml`:

    [project.entry-points."librarian.stages"]
    my-check = "my_package.stage:PLUGGED"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Literal

from librarian.catalogue.hub import Hub
from librarian.errors import UsageError
from librarian.pipeline.batches import CompleteStage, PrepareStage
from librarian.settings import LinkerSettings

GROUP = "librarian.stages"


@dataclass(frozen=True)
class PluggedStage:
    """A stage from outside: the phase it runs in, the stage it follows (by name), and
    how it is made from the run's settings and hub."""

    phase: Literal["prepare", "complete"]
    after: str
    make: Callable[[LinkerSettings, Hub], PrepareStage | CompleteStage]

    def join(
        self,
        preparing: list[PrepareStage],
        completing: list[CompleteStage],
        settings: LinkerSettings,
        hub: Hub,
    ) -> None:
        """Put the stage in its place, or refuse with the names it could follow."""
        names = [s.name for s in (preparing if self.phase == "prepare" else completing)]
        if self.after not in names:
            raise UsageError(
                f"a plugged {self.phase} stage follows '{self.after}', which is no stage "
                f"there (its stages: {', '.join(names)})"
            )
        stage = self.make(settings, hub)
        if self.phase == "prepare":
            preparing.insert(names.index(self.after) + 1, stage)  # type: ignore[arg-type]
        else:
            completing.insert(names.index(self.after) + 1, stage)  # type: ignore[arg-type]


def plugged_stages() -> list[PluggedStage]:
    """Every installed `librarian.stages` entry point, by name; one that cannot be loaded,
    or names something else than a `PluggedStage`, is refused by name."""
    found: list[PluggedStage] = []
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        try:
            plugged = point.load()
        except Exception as exc:  # a plug-in's own import error, whatever it is
            raise UsageError(f"stage plug-in '{point.name}' ({point.value}): {exc}") from exc
        if not isinstance(plugged, PluggedStage):
            raise UsageError(f"stage plug-in '{point.name}' ({point.value}) is no PluggedStage")
        found.append(plugged)
    return found
