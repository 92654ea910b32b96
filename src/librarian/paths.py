"""Where things live: data shipped inside the package, and the librarian home for state.

Nothing is read relative to the working directory. The packaged data (hub catalogue,
links, section prose, samples, contract schemas) comes from the installed package; trained
models, caches and the default SQLite database live under one home directory:
an explicit one, else `LIBRARIAN_HOME`, else the platform's user data directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

HOME_ENV = "LIBRARIAN_HOME"
APP_NAME = "librarian"


def packaged(*parts: str) -> Path:
    """A file shipped inside the package (installed as plain files, not zipped)."""
    return Path(str(files("librarian").joinpath(*parts)))


def packaged_data(*parts: str) -> Path:
    return packaged("data", *parts)


DEFAULT_HUB = packaged_data("opencre", "hubs.jsonl")
DEFAULT_LINKS = packaged_data("opencre", "links.jsonl")
DEFAULT_SECTION_TEXTS = packaged_data("opencre", "section_texts.jsonl")
SAMPLE_QUEUE = packaged_data("samples", "queue_sample.jsonl")


@dataclass(frozen=True)
class Home:
    """The librarian's state directory; created on first write, never on a read."""

    root: Path

    @property
    def models(self) -> Path:
        """Trained models; the shipped int8 embedder sits inside, in `embedder-int8/`."""
        return self.root / "models"

    @property
    def embedder_int8(self) -> Path:
        return self.models / "embedder-int8"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.root / 'librarian.db'}"


def librarian_home(explicit: Path | None = None) -> Home:
    """`explicit`, else `LIBRARIAN_HOME`, else the user data directory (platformdirs)."""
    if explicit is not None:
        return Home(explicit.expanduser().resolve())
    from_env = os.environ.get(HOME_ENV)
    if from_env:
        return Home(Path(from_env).expanduser().resolve())
    from platformdirs import user_data_path

    return Home(user_data_path(APP_NAME, appauthor=False))
