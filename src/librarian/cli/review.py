"""`librarian review`: the reviewers' queue: the workbench (`serve`), and files (`export`,
`import`)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

from librarian.cli.common import (
    database,
    engine_of,
    err,
    home_of,
    hub_finder,
    out,
    readable_input,
    redacted,
    writable_file,
)
from librarian.cli.options import (
    REVIEWER_ENV,
    TOKEN_ENV,
    ChangeOpt,
    DbOpt,
    ExportFormatOpt,
    ExportOutOpt,
    ExportStatusOpt,
    HomeOpt,
    HostOpt,
    HubsOpt,
    HyperlinkBaseOpt,
    LeadOpt,
    QaEveryOpt,
    ReasonOpt,
    ReviewerOpt,
    ReviewsFileOpt,
    SheetArg,
    SidecarOpt,
    SinceOpt,
    TokenOpt,
    WorkbenchPortOpt,
)
from librarian.cli.qa import app as qa_app
from librarian.cli.reviewers import app as reviewers_app
from librarian.errors import InputError, UsageError
from librarian.paths import DEFAULT_HUB, Home
from librarian.text import visible

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session

    from librarian.pipeline.pipeline import Pipeline
    from librarian.review.bench import Workbench

app = typer.Typer(no_args_is_help=True, help="The reviewers' queue.")
app.add_typer(qa_app, name="qa")
app.add_typer(reviewers_app, name="reviewers")

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@app.command("serve")
def review_serve(
    db: DbOpt = None,
    reviews: ReviewsFileOpt = None,
    host: HostOpt = "127.0.0.1",
    port: WorkbenchPortOpt = 8765,
    reviewer: ReviewerOpt = None,
    token: TokenOpt = None,
    lead: LeadOpt = None,
    qa_every: QaEveryOpt = 5,
    hub: HubsOpt = None,
    home: HomeOpt = None,
) -> None:
    """Decide the review queue in the browser: http://HOST:PORT/ (Ctrl-C stops)."""
    import uvicorn

    from librarian.review.web import create_app

    token, from_env = access_token(token)
    named = reviewer
    reviewer = served_identity(host, token, reviewer)
    if reviewer and not named:
        err.print(
            visible(
                f"one-person mode: every decision here is recorded as {reviewer}'s, because "
                f"{REVIEWER_ENV} is set; unset it to have reviewers sign in"
            ),
            markup=False,
        )
    if db is not None and reviews is not None:
        raise UsageError("--db or --reviews, not both")
    url = _reviews_database(reviews) if reviews else database(db, home_of(home), create=False)
    with engine_of(url) as engine:
        bench = workbench(engine, catalogue_paths(hub), home_of(home), token, host)
        bench.reviewer = reviewer
        if not reviewer:
            _say_who_signs_in(engine)
        bench.leads = frozenset(name.strip() for name in lead or () if name.strip())
        bench.qa_every = qa_every
        _announce(f"http://{host}:{port}", token, from_env, url)
        uvicorn.run(create_app(bench), host=host, port=port, log_level="warning")


def _refuse(sheet: Path, errors: list[str]) -> NoReturn:
    for problem in errors[:20]:
        err.print(visible(f"error: {sheet} {problem}"), markup=False)
    if len(errors) > 20:
        err.print(f"... and {len(errors) - 20} more", markup=False)
    raise InputError("nothing was recorded")


def acting_for(
    engine: Engine, importer: str | None, leads: list[str]
) -> tuple[str | None, set[str]]:
    """Who an import acts for, from the store: a `--lead` must be a registered lead and
    prove it with their key (LIBRARIAN_KEY); the importer, whose every decision it records
    (a lead's own name when no --reviewer is given), likewise in a store that registers
    reviewers (`store.reviewers.proven`, as every command acting for a person). Only in a
    store nobody signs in to is a --reviewer a label, as the loopback workbench's
    one-person mode is."""
    from sqlalchemy.orm import Session

    from librarian.store.reviewers import KEY_ENV, proven, reviewers

    key = os.environ.get(KEY_ENV)
    if len(set(leads)) > 1:
        raise UsageError("one --lead at a time: each proves who they are with their own key")
    with Session(engine) as session:
        proven_leads = {proven(session, name, key, True) for name in leads}
        if not (importer or "").strip() and proven_leads:
            (importer,) = proven_leads
        if importer and importer.strip() in proven_leads:
            return importer.strip(), proven_leads
        if reviewers(session):
            if not (importer or "").strip():
                raise UsageError(
                    "an import is recorded as the importer's: --reviewer NAME (or "
                    f"{REVIEWER_ENV}), a reviewer registered here, with their key in {KEY_ENV}"
                )
            importer = proven(session, str(importer), key, False)
    return importer, proven_leads


def served_identity(host: str, token: str | None, reviewer: str | None) -> str | None:
    """--reviewer (or LIBRARIAN_REVIEWER), refused with anything the loopback would not
    keep to this machine's one person."""
    if host not in LOOPBACK and not token:
        raise UsageError(f"--host {host} exposes the queue: give --token (or {TOKEN_ENV})")
    reviewer = reviewer or os.environ.get(REVIEWER_ENV)
    if reviewer and host not in LOOPBACK:
        raise UsageError(
            f"--reviewer makes every request {reviewer}'s: loopback only; on --host {host} "
            "reviewers sign in (`librarian review reviewers add NAME`)"
        )
    return reviewer


def _say_who_signs_in(engine: Engine) -> None:
    from sqlalchemy.orm import Session

    from librarian.store.reviewers import reviewers

    with Session(engine) as session:
        registered = len(reviewers(session))
    hint = "" if registered else ": `librarian review reviewers add NAME [--lead]` first"
    err.print(f"reviewers sign in ({registered} registered{hint})", markup=False)


def _announce(base: str, token: str | None, from_env: bool, url: str) -> None:
    """Where the workbench and its API are. A token the operator typed is printed once, as
    the link to open; one kept in the environment stays there (the terminal, its
    scrollback, a log may be read by others)."""
    shown = f"{base}/" + (
        f"?token={token}" if token and not from_env else f"?token=${TOKEN_ENV}" if token else ""
    )
    err.print(f"review workbench on {shown} over {redacted(url)} (Ctrl-C stops)", markup=False)
    err.print(f"suggest API: POST {base}/api/v1/suggest (docs: {base}/docs)", markup=False)


MIN_TOKEN_CHARS = 16


def workbench(
    engine: Engine,
    hubs: tuple[Path, tuple[Path, ...]],
    where: Home,
    token: str | None,
    host: str,
) -> Workbench:
    """The workbench's parts; nothing read, no model loaded (each at its first use)."""
    from functools import partial

    from librarian.catalogue.teams import load_hubs
    from librarian.review.bench import Workbench

    catalogue = load_hubs(hubs[0], hubs[1])
    finder = partial(hub_finder, catalogue, where)
    bench = Workbench(engine, catalogue, None, token, host, finder)
    from librarian.review.relink import Rescorer

    pipeline = trained_pipeline(hubs, where)
    bench.relinker = Rescorer(engine, pipeline) if pipeline is not None else None
    bench.suggester = pipeline
    bench.exemplar_text = exemplar_texts()
    return bench


def catalogue_paths(hub: list[Path] | None) -> tuple[Path, tuple[Path, ...]]:
    first, *rest = hub or [DEFAULT_HUB]
    return first, tuple(rest)


def trained_pipeline(
    hubs: tuple[Path, tuple[Path, ...]], where: Home
) -> Callable[[], Pipeline] | None:
    """The home's trained pipeline, built once at its first use (re-scoring a source at
    its calibration point and the suggest API share it); None without trained models
    (said at start)."""
    import threading
    from functools import partial

    from librarian.factory import build_pipeline
    from librarian.settings import LinkerSettings

    if not (where.models / "card.json").is_file():
        err.print(
            f"no trained models in {where.models}: a source reaching its calibration point "
            "is re-scored by the next run or `librarian relink`, not by the workbench; "
            "/api/v1/suggest answers 503 until `librarian train`",
            markup=False,
        )
        return None
    settings = LinkerSettings(
        models_dir=where.models, cache_dir=where.cache, hub_path=hubs[0], extra_hubs=hubs[1]
    )
    build = partial(build_pipeline, settings)
    lock = threading.Lock()
    built: list[Pipeline] = []

    def pipeline() -> Pipeline:
        with lock:
            if not built:
                built.append(build())
            return built[0]

    return pipeline


def exemplar_texts() -> Callable[[str], str | None]:
    """The packaged linked sections' texts by rationale label (`framework section
    (style)`), read at the first look-up."""
    texts: dict[str, str] = {}

    def text_of(label: str) -> str | None:
        if not texts:
            from librarian.paths import DEFAULT_LINKS, DEFAULT_SECTION_TEXTS
            from librarian.training.links import load_links, load_section_texts

            for link in load_links(DEFAULT_LINKS):
                texts.setdefault(f"{link.framework_id} {link.section_id} (title)", link.text)
            for (framework, section), prose in load_section_texts(DEFAULT_SECTION_TEXTS).items():
                texts[f"{framework} {section} (prose)"] = prose
        return texts.get(label)

    return text_of


def access_token(given: str | None) -> tuple[str | None, bool]:
    """The token (--token, else LIBRARIAN_REVIEW_TOKEN), checked; and whether it came
    from the environment (then it is never printed)."""
    from_env = given is None and bool(os.environ.get(TOKEN_ENV))
    token = given if given is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None:
        check_token(token, TOKEN_ENV if from_env else "--token")
    return token, from_env


def check_token(token: str, where: str) -> None:
    """Refuse a token anyone could guess, or one a browser cannot send as it is."""
    if len(token.strip()) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable():
        raise UsageError(
            f"{where}: an access token needs at least {MIN_TOKEN_CHARS} printable ASCII "
            "characters (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(24))'`)"
        )
    if any(c.isspace() for c in token) or any(c in token for c in "&#%?"):
        raise UsageError(f"{where}: an access token may not hold spaces or any of & # % ?")


def _reviews_database(reviews: Path) -> str:
    """A SQLite file beside a dry run's reviews.jsonl, holding its items (added once)."""
    from pydantic import ValidationError
    from sqlalchemy.orm import Session

    from librarian.jsonl import JsonLineError, json_objects
    from librarian.schemas.envelopes import ReviewItem
    from librarian.store.db import upgrade
    from librarian.store.decisions import load_reviews

    readable_input(reviews, "--reviews")
    items: list[ReviewItem] = []
    try:
        with reviews.open(encoding="utf-8") as handle:
            for line, obj in json_objects(handle):
                try:
                    items.append(ReviewItem.model_validate(obj))
                except ValidationError as exc:
                    raise UsageError(
                        f"{reviews}:{line}: not a ReviewItem ({exc.errors()[0]['msg']})"
                    ) from exc
    except (JsonLineError, UnicodeDecodeError) as exc:
        raise UsageError(f"{reviews}: not a reviews.jsonl ({exc})") from exc
    url = f"sqlite:///{reviews.with_name(reviews.name + '.decisions.db').absolute()}"
    with engine_of(url) as engine:
        upgrade(engine)
        with Session(engine) as session, session.begin():
            added = load_reviews(session, items, str(reviews))
    err.print(f"{len(items)} review items in {reviews} ({added} new)", markup=False)
    return url


@app.command("export")
def review_export(
    db: DbOpt = None,
    fmt: ExportFormatOpt = "csv",
    out_file: ExportOutOpt = None,
    hyperlink_base: HyperlinkBaseOpt = None,
    sidecar_file: SidecarOpt = None,
    status: ExportStatusOpt = None,
    since: SinceOpt = None,
    reason: ReasonOpt = None,
    hub: HubsOpt = None,
    home: HomeOpt = None,
) -> None:
    """Export the reviewers' queue, oldest first, the decisions taken on it, or the links
    in the format OpenCRE imports."""
    from sqlalchemy.orm import Session

    if out_file is not None:
        writable_file(out_file)
    picked = _picked(fmt, _export_status(fmt, status), since, reason)
    if (hyperlink_base or sidecar_file) and fmt != "myopencre":
        raise UsageError("--hyperlink-base and --sidecar are for --format myopencre")
    if sidecar_file is not None:
        writable_file(sidecar_file, "--sidecar")
    url = database(db, home_of(home), create=False, reads_only=True)
    with engine_of(url) as engine, Session(engine) as session:
        if fmt == "myopencre":
            text, said = _myopencre(session, picked, hub, hyperlink_base, sidecar_file)
        else:
            text, said = _exported(session, fmt, picked, catalogue_paths(hub))
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text, encoding="utf-8")
    err.print(f"{said} -> {out_file}", markup=False)
    if fmt == "myopencre":
        from librarian.review.myopencre import import_steps

        for line in import_steps(str(out_file)):
            err.print(line, markup=False)


def _myopencre(
    session: Session,
    picked: _Picked,
    hub: list[Path] | None,
    base: str | None,
    sidecar_file: Path | None,
) -> tuple[str, str]:
    """The links as OpenCRE imports them, what they hold in words; the sidecar written."""
    import json

    from librarian.catalogue.teams import load_hubs
    from librarian.review.myopencre import (
        counted,
        links_to_export,
        sidecar,
        to_myopencre,
        withdrawn_links,
    )

    with_auto, confirmed = picked.status in ("linked", "auto"), picked.status != "auto"
    links = links_to_export(session, with_auto, confirmed)
    by = counted(links)
    said = ", ".join(f"{n} {kind}" for kind, n in sorted(by.items())) or "0"
    if waiting := sum(link.pending_update for link in links):
        said += f"; {waiting} of a text changed since, its update waiting for review (the "
        said += "sidecar marks them: pending_update)"
    if gone := withdrawn_links(session):
        said += f"; {gone} confirmed links left out: their section left its document"
    if base is None and (nowhere := sum(not link.hyperlink for link in links)):
        said += (
            f"; {nowhere} with no address of their own link nowhere: --hyperlink-base URL "
            "gives them the document's (with {id} in it, each rule's own)"
        )
    under = Counter(link.certified_under for link in links if link.certified_under)
    for words, n in sorted(under.items()):
        said += f"; {n} auto-links certified under '{words}'"
    hubs = catalogue_paths(hub)
    text = to_myopencre(links, load_hubs(hubs[0], hubs[1]), base)
    if sidecar_file is not None:
        sidecar_file.write_text(json.dumps(sidecar(links), indent=1) + "\n", encoding="utf-8")
    return text, f"links: {said}"


def _export_status(fmt: str, status: str | None) -> str:
    links = ("confirmed", "linked", "auto")
    if fmt == "myopencre":
        if status is not None and status not in links:
            raise UsageError(
                f"--status {status}: myopencre exports links: confirmed, auto or linked"
            )
        return status or "confirmed"
    if status in links:
        raise UsageError(f"--status {status} is for --format myopencre; items: open, decided, all")
    return status or "open"


@dataclass(frozen=True)
class _Picked:
    status: str
    since: datetime | None = None
    reason: str | None = None


def _picked(fmt: str, status: str, since: datetime | None, reason: str | None) -> _Picked:
    if (since is not None or reason is not None) and fmt in ("human-decision", "myopencre"):
        picks = "--since and --reason pick review items"
        raise UsageError(f"{picks}; --format {fmt} exports every one")
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return _Picked(status, since, reason)


def _exported(
    session: Session, fmt: str, picked: _Picked, hubs: tuple[Path, tuple[Path, ...]]
) -> tuple[str, str]:
    """The export's text, and what it holds in words."""
    from librarian.review.sheets import to_csv, to_html, to_human_decisions, to_jsonl
    from librarian.store.human import standing_decisions
    from librarian.store.review import review_items

    if fmt == "human-decision":
        decisions = standing_decisions(session)
        return to_human_decisions(decisions), f"{len(decisions)} decisions"
    items = review_items(session, picked.status, picked.since, picked.reason)  # type: ignore[arg-type]
    render = {"csv": to_csv, "jsonl": to_jsonl}.get(fmt, to_html)
    return render(items), f"{len(items)} review items"


@app.command("import")
def review_import(
    sheet: SheetArg,
    db: DbOpt = None,
    reviewer: ReviewerOpt = None,
    change: ChangeOpt = False,
    lead: LeadOpt = None,
    hub: HubsOpt = None,
    home: HomeOpt = None,
) -> None:
    """Record reviewers' decisions: accept the first suggestion, choose CREs, or reject.

    Every row is checked first; any bad row refuses the whole file (exit 2), naming it.
    A decision identical to the one stored changes nothing; a conflicting one is refused,
    or with --change supersedes it. Each decision is recorded as the importer's (proven by
    LIBRARIAN_KEY where reviewers are registered); a file that approves every row is
    recorded as bulk approvals, which certify no cut.
    """
    from librarian.catalogue.teams import load_hubs
    from librarian.review.decisions import import_decisions
    from librarian.review.sheets import read_decisions

    readable_input(sheet, "sheet")
    importer = reviewer or os.environ.get(REVIEWER_ENV)
    first, *rest = hub or [DEFAULT_HUB]
    hub_ids = set(load_hubs(first, rest).ids)
    with engine_of(database(db, home_of(home), create=False)) as engine:
        importer, leads = acting_for(engine, importer, lead or [])
        read = read_decisions(sheet, importer)
        result = (
            import_decisions(
                engine, read.incoming, hub_ids, str(sheet), leads if change else None, importer
            )
            if not read.errors
            else None
        )
    errors = read.errors + (result.errors if result else [])
    if errors or result is None:
        _refuse(sheet, errors)
    out.print(
        f"recorded: approved {result.approved}, corrected {result.corrected}, rejected "
        f"{result.rejected}; unchanged {result.unchanged}; left open {read.left_open}"
        + (f"; {result.changed} of them changed a standing decision" if change else ""),
        markup=False,
    )
    if result.bulk:
        out.print(
            f"every row approved its first suggestion: the {result.bulk} approvals are recorded "
            "as bulk approvals (as the workbench's approve-all), which certify no cut and count "
            "in no agreement figure",
            markup=False,
        )
