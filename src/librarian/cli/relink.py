"""`librarian relink`: decide a source's open items again with the cut its reviewers now
certify (an item a person decided is never touched), through the linking flow as any run
(its Prefect server booting while the models load)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from librarian.cli.common import (
    database,
    engine_of,
    home_of,
    linker_settings,
    out,
    redacted,
    writable_output,
)
from librarian.cli.options import (
    CommitOpt,
    LinkerOptions,
    OutOpt,
    SourceKeyOpt,
    with_linker_options,
)
from librarian.cli.run import quiet_prefect
from librarian.errors import RunError, UsageError
from librarian.factory import POLICY_SETTINGS
from librarian.flows.launch import early_prefect_server, launch
from librarian.pipeline.sinks import check_out_dir
from librarian.text import visible

if TYPE_CHECKING:
    from collections.abc import Callable

    from librarian.job import HandOff, LinkJob
    from librarian.review.relink import Relinked
    from librarian.schemas.records import RunSummary


def policy_given(linker: LinkerOptions) -> dict[str, Any]:
    """The policy fields set on the command line or in the environment (a default is no
    choice: the stored policy stands). A risk given without --threshold asks for a cut
    chosen under it: a cut the stored policy set by hand is dropped."""
    given = {
        field: linker.values[option]
        for option, field in POLICY_SETTINGS.items()
        if option in linker.given and option in linker.values
    }
    if given and "fixed_cut" not in given:
        given["fixed_cut"] = None
    return given


@with_linker_options
def relink(
    source: SourceKeyOpt,
    commit: CommitOpt = False,
    out_dir: OutOpt = None,
    *,
    linker: LinkerOptions,
) -> None:
    """Link SOURCE's open review items again, with what its reviewers have decided since;
    without --commit, only say what would change. Its files (summary.json, the envelopes)
    go to --out, as a run's do."""
    from sqlalchemy.orm import Session

    from librarian.factory import build_pipeline
    from librarian.review.relink import relink as relink_source
    from librarian.store.open_items import open_sources

    run_id = "relink-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = check_out_dir(writable_output(out_dir or Path("out") / run_id), what="--out")

    url = database(linker.db, home_of(linker.home), create=False, reads_only=not commit)
    with engine_of(url) as engine:
        with Session(engine) as session:
            known = open_sources(session)
        if source not in known:
            listed = ", ".join(known[:20]) or "none"
            raise UsageError(
                f"no open items of source {source!r} in {redacted(url)} (open: {listed})"
            )
        quiet_prefect(False)
        server_ready = early_prefect_server(False)
        built = build_pipeline(linker_settings(linker, vector_db=None))
        given = policy_given(linker)
        start = through_the_flow(url, server_ready)
        done = relink_source(engine, built, source, run_id, commit, given, target, start)
    say_relinked(done, commit, target)


def say_relinked(done: Relinked, commit: bool, target: Path) -> None:
    """What a relink did (or, without --commit, would do), in the command's lines."""
    source = done.source
    verb = "linked" if commit else "would link"
    if done.policy_changed and done.policy is not None:
        kept = "stored as its policy from now on" if commit else "stored so with --commit"
        out.print(
            f"{source}: decided under the policy given ({done.policy.guarantee()}), not the "
            f"one stored; {kept}",
            markup=False,
        )
    out.print(
        visible(
            f"{source}: {done.open_items} open items; {verb} {done.linked} automatically; "
            f"{done.status.get('says', '')}"
        ),
        markup=False,
    )
    if done.summary is not None:
        s = done.summary
        out.print(
            f"run {s.run_id}: read {s.read}, linked {s.linked}, review {s.review}, "
            f"rejected {s.rejected} (every open item accounted for) -> {target}",
            markup=False,
        )
    if commit:
        out.print(
            f"stored: {done.redecided} decided again, {done.left_to_reviewers} left to the "
            "reviewers who decided them meanwhile",
            markup=False,
        )


def through_the_flow(
    url: str, server_ready: Callable[[], None]
) -> Callable[[LinkJob, HandOff], RunSummary]:
    """A relink's job started as `librarian run` starts one (`flows.launch`): the linking
    flow, its database by reference, the URL held here; a failure is the run's (exit 1)."""
    from librarian.store.db import known_urls

    def start(job: LinkJob, hand_off: HandOff) -> RunSummary:
        server_ready()
        try:
            return launch(replace(job, database=url), replace(hand_off, urls=known_urls(url)), None)
        except Exception as exc:
            raise RunError(f"relink {job.run_id} failed: {type(exc).__name__}: {exc}") from exc

    return start
