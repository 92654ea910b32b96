"""What the commands share: consoles, turning options into settings, the home, the
database, Prefect's environment."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from librarian.cli.options import LinkerOptions
from librarian.errors import UsageError
from librarian.paths import DEFAULT_HUB, Home, librarian_home
from librarian.settings import LinkerSettings

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from librarian.catalogue.hub import Hub
    from librarian.retrieval.hub_search import HubSearch

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # a usage error stays one line


def home_of(explicit: Path | None) -> Home:
    return librarian_home(explicit)


def hub_finder(hub: Hub, where: Home) -> HubSearch:
    """Search of `hub` with the embedder the home's trained models record (the int8 build),
    else the packaged MiniLM. Imports only what search needs: `hub search` answers in
    about half a second once the hub's vectors are cached."""
    from librarian.artifacts.card import CARD_NAME, recorded_embedder
    from librarian.retrieval.hub_search import open_hub_search

    trained = (where.models / CARD_NAME).is_file()
    return open_hub_search(hub, recorded_embedder(where.models) if trained else None, where.cache)


def linker_settings(options: LinkerOptions, **extra: Any) -> LinkerSettings:
    """Settings from the shared options (as given, then the home's defaults); checking and
    loading them is the factory's."""
    home = home_of(options.home)
    values = dict(options.values)
    first, *rest = options.hub or [DEFAULT_HUB]
    values.update(hub_path=first, extra_hubs=tuple(rest), **extra)
    pins = values.get("collections") or ()
    values["collections"] = tuple(p.strip() for c in pins for p in c.split(",") if p.strip())
    if not values.get("uncalibrated"):
        values["models_dir"] = values.get("models_dir") or home.models
    if values.get("cache_dir"):
        writable_output(Path(values["cache_dir"]), "--cache-dir")
    values["cache_dir"] = values.get("cache_dir") or home.cache
    if "vector_db" not in extra:
        values["vector_db"] = _vector_reference(options)
    return LinkerSettings(**values)


def _vector_reference(options: LinkerOptions) -> str | None:
    """Settings travel as flow parameters: never with the password (`linker_urls`)."""
    url = vector_url(options)
    if url is None:
        return None
    from librarian.store.db import reference

    return reference(url)


def vector_url(options: LinkerOptions) -> str | None:
    """The pgvector backend's database URL, whole (None: another backend)."""
    if options.vector_backend != "pgvector":
        return None
    from librarian.store.db import database_url

    url = database_url(options.db, home_of(options.home).database_url)
    if not url.startswith("postgresql"):
        raise UsageError("--vector-backend pgvector needs a PostgreSQL --db (or LIBRARIAN_DB)")
    return url


def linker_urls(options: LinkerOptions, *more: str | None) -> dict[str, str]:
    """The database URLs a command holds (its pgvector backend's, and `more`), by the
    reference its settings carry: what it hands to `build_pipeline` and to the flow."""
    from librarian.store.db import known_urls

    return known_urls(vector_url(options), *more)


def database(explicit: str | None, home: Home, create: bool, reads_only: bool = False) -> str:
    """The database URL, checked and migrated before any model starts. A command that
    `reads_only` never writes: a current schema is used as it is (a SQLite file this user
    may not write is opened read-only), an older one refused, saying how to migrate it."""
    from librarian.store.db import (
        check_current,
        check_database,
        database_url,
        read_only,
        upgrade,
    )

    url = database_url(explicit, home.database_url)
    check_database(url, create)
    if reads_only:
        url = read_only(url)
        check_current(url)
        return url
    with engine_of(url) as engine:
        upgrade(engine)
    return url


@contextmanager
def engine_of(url: str) -> Iterator[Engine]:
    """The one way a command opens its database: an engine on `url` (checked and migrated
    by `database`), disposed when the command is done with it."""
    from librarian.store.db import make_engine

    engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()


def redacted(url: str) -> str:
    from librarian.store.db import redacted as hide

    return hide(url)


def readable_input(path: Path, what: str = "input", binary: bool = False) -> None:
    """Refuse, saying what it is, an input that is not a UTF-8 file: a directory, a FIFO, a
    device, or a file in UTF-16 (every line would be rejected). `binary`: a Word or PDF
    file, which its own reader checks (no text sniff)."""
    if not path.exists():
        raise UsageError(f"{what} {path} does not exist")
    if path.is_dir():
        raise UsageError(f"{what} {path} is a directory, not a file")
    if not path.is_file():
        raise UsageError(f"{what} {path} is not a regular file (a FIFO, socket or device)")
    if binary:
        return
    with path.open("rb") as handle:
        head = handle.read(4096)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        len(head) > 8 and head.count(0) > len(head) // 4
    ):
        raise UsageError(
            f"{what} {path} is UTF-16 (or another wide encoding); the librarian reads UTF-8: "
            f"convert it, e.g. iconv -f UTF-16 -t UTF-8 {path}"
        )


def writable_output(target: Path, what: str = "--out") -> Path:
    """`target`, or the refusal of an output directory that is a file, lies under one, or
    where nothing can be written (a read-only filesystem), before anything starts."""
    if target.exists() and not target.is_dir():
        raise UsageError(f"{what} {target} exists and is not a directory")
    _writable_under(target, what)
    return target


def writable_file(target: Path, what: str = "--out") -> None:
    """Refuse an output file that is a directory, lies under a file, or cannot be written."""
    if target.is_dir():
        raise UsageError(f"{what} {target} is a directory; name the file to write")
    _writable_under(target, what)


def _writable_under(target: Path, what: str) -> None:
    import tempfile

    for parent in target.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{what} {target}: {parent} is a file, not a directory")
            try:
                with tempfile.TemporaryFile(dir=parent):
                    pass
            except OSError as exc:
                why = f"{what} {target}: cannot write in {parent} ({exc.strerror})"
                raise UsageError(why) from exc
            return


def unicode_text(text: str, what: str = "TEXT") -> str:
    """`text` as given on the command line, refused when it is not UTF-8 (Python keeps the
    undecodable bytes as lone surrogates, which cannot be written anywhere)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{what} is not UTF-8 (byte {exc.start})") from exc
    return text
