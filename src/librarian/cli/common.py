"""What the commands share: consoles, turning options into checked settings before any
model or Prefect starts, the home, the database, Prefect's environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich.console import Console

from librarian.artifacts.card import load_trained, recorded_embedder
from librarian.catalogue.hub import Hub
from librarian.catalogue.teams import load_hubs
from librarian.cli.options import LinkerOptions
from librarian.errors import UsageError
from librarian.paths import DEFAULT_HUB, Home, librarian_home
from librarian.routing.collections import hub_collections
from librarian.routing.router import Router
from librarian.routing.rules import load_rules
from librarian.settings import LinkerSettings

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # a usage error stays one line


def home_of(explicit: Path | None) -> Home:
    return librarian_home(explicit)


def linker_settings(options: LinkerOptions, **extra: Any) -> LinkerSettings:
    """Settings from the shared options, checked as far as can be without loading a model."""
    home = home_of(options.home)
    first, *rest = options.hub or [DEFAULT_HUB]
    settings = LinkerSettings(
        hub_path=first,
        extra_hubs=tuple(rest),
        threshold=options.threshold,
        top_k=options.top_k,
        top_n=options.top_n,
        reranker_model=options.reranker,
        rerank_gap=options.rerank_gap,
        routing=options.routing,
        collections=_pins(options.collections),
        routing_rules=options.routing_rules,
        search=options.search,
        beam_width=options.beam_width,
        embedding_model=options.embedding_model,
        models_dir=None if options.uncalibrated else (options.models or home.models),
        uncalibrated=options.uncalibrated,
        cache_dir=options.cache_dir or home.cache,
        vector_backend=options.vector_backend,
        vector_db=_vector_db(options, home),
        **extra,
    )
    check_settings(settings)
    return settings


def _pins(collections: list[str] | None) -> tuple[str, ...]:
    return tuple(p.strip() for c in collections or () for p in c.split(",") if p.strip())


def _vector_db(options: LinkerOptions, home: Home) -> str | None:
    if options.vector_backend != "pgvector":
        return None
    from librarian.store.db import database_url

    url = database_url(options.db, home.database_url)
    if not url.startswith("postgresql"):
        raise UsageError("--vector-backend pgvector needs a PostgreSQL --db (or LIBRARIAN_DB)")
    return url


def check_settings(settings: LinkerSettings) -> None:
    """Refuse what cannot run before anything slow starts (exit 2, naming the option)."""
    hub = load_hubs(settings.hub_path, settings.extra_hubs)
    check_routing(settings, hub)
    if settings.search == "beam" and settings.vector_backend != "memory":
        raise UsageError("--search beam runs in memory: not with --vector-backend pgvector")
    for what, path, marks in (
        ("--embedding-model", settings.embedding_model, ("config.json", "model.onnx")),
        ("--reranker", settings.reranker_model, ("config.json",)),
    ):
        if path is not None and not any((path / mark).is_file() for mark in marks):
            raise UsageError(f"{what} {path} is not a model directory (no {' or '.join(marks)})")
    if settings.rerank_gap is not None and settings.reranker_model is None:
        raise UsageError("--rerank-gap needs --reranker")
    check_models(settings)


def check_routing(settings: LinkerSettings, hub: Hub) -> None:
    if settings.routing == "off" and (settings.collections or settings.routing_rules):
        raise UsageError("--routing off searches everything: drop --collections/--routing-rules")
    if settings.routing_rules is not None and not settings.routing_rules.is_file():
        raise UsageError(f"--routing-rules {settings.routing_rules} does not exist")
    collections = hub_collections(hub)
    Router(collections, settings.routing, settings.collections).check_pin()
    if settings.routing_rules is not None:
        load_rules(settings.routing_rules, list(collections))


def check_models(settings: LinkerSettings) -> None:
    """The trained models a calibrated run needs, readable and whole, and their embedder."""
    if settings.uncalibrated:
        return
    assert settings.models_dir is not None
    load_trained(settings.models_dir)
    if settings.embedding_model is None:
        recorded_embedder(settings.models_dir)


def database(explicit: str | None, home: Home, create: bool) -> str:
    """The database URL, checked (and migrated when `create`) before any model starts."""
    from librarian.store.db import check_database, database_url, make_engine, upgrade

    url = database_url(explicit, home.database_url)
    check_database(url, create)
    engine = make_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    return url


def redacted(url: str) -> str:
    from librarian.store.db import redacted as hide

    return hide(url)


def prefect_environment() -> None:
    # Nothing may try the network; a cold local Prefect server can take 15-25 s to start.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    # One "Finished in state Completed()" line per task buries the per-batch flow log;
    # task states still reach the API. Set the variable to INFO to see them.
    os.environ.setdefault("PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL", "WARNING")


def readable_input(path: Path, what: str = "input") -> None:
    """Refuse, saying what it is, an input that is not a UTF-8 file: a directory, a FIFO, a
    device, or a file in UTF-16 (every line would be rejected)."""
    if not path.exists():
        raise UsageError(f"{what} {path} does not exist")
    if path.is_dir():
        raise UsageError(f"{what} {path} is a directory, not a file")
    if not path.is_file():
        raise UsageError(f"{what} {path} is not a regular file (a FIFO, socket or device)")
    with path.open("rb") as handle:
        head = handle.read(4096)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        len(head) > 8 and head.count(0) > len(head) // 4
    ):
        raise UsageError(
            f"{what} {path} is UTF-16 (or another wide encoding); the librarian reads UTF-8: "
            f"convert it, e.g. iconv -f UTF-16 -t UTF-8 {path}"
        )


def writable_output(target: Path, what: str = "--out") -> None:
    """Refuse an output path that is a file, or lies under one, before anything starts."""
    if target.exists() and not target.is_dir():
        raise UsageError(f"{what} {target} exists and is not a directory")
    for parent in target.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{what} {target}: {parent} is a file, not a directory")
            break


def unicode_text(text: str, what: str = "TEXT") -> str:
    """`text` as given on the command line, refused when it is not UTF-8 (Python keeps the
    undecodable bytes as lone surrogates, which cannot be written anywhere)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{what} is not UTF-8 (byte {exc.start})") from exc
    return text
