"""`librarian relink`: decide a source's open items again with the cut its reviewers now
certify (an item a person decided is never touched)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
from librarian.errors import UsageError
from librarian.factory import POLICY_SETTINGS
from librarian.pipeline.sinks import check_out_dir
from librarian.text import visible


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
        built = build_pipeline(linker_settings(linker, vector_db=None))
        given = policy_given(linker)
        done = relink_source(engine, built, source, run_id, commit, given, target)
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
