"""`librarian review qa`: blind second reviews, known-answer items, agreement figures and
rulings on disagreements. Reviewers answer checks in the workbench, among their items."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from librarian.cli.common import database, engine_of, home_of, out
from librarian.cli.options import (
    ByOpt,
    DbOpt,
    DrawSeedOpt,
    HomeOpt,
    HubsOpt,
    JsonOpt,
    RulingLeadOpt,
    ShareOpt,
)
from librarian.errors import UsageError
from librarian.paths import DEFAULT_HUB

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from librarian.review.agreement import AgreementFigures
    from librarian.review.qa import QaReport

app = typer.Typer(
    no_args_is_help=True,
    help="Reviewer QA: blind second reviews, known-answer items, agreement, rulings.",
)
T = TypeVar("T")


@contextmanager
def _session(db: str | None, home: Any, reads_only: bool = False) -> Iterator[Session]:
    from sqlalchemy.orm import Session

    url = database(db, home_of(home), create=False, reads_only=reads_only)
    with engine_of(url) as engine, Session(engine) as session, session.begin():
        yield session


def _in_session(db: str | None, home: Any, work: Callable[[Session], T]) -> T:
    with _session(db, home) as session:
        return work(session)


def _proven(session: Session, by: str) -> str:
    """`--by`: who sets QA up is a registered reviewer and proves it with their key, as
    every command acting for a person (`store.reviewers.proven`): a check names who made
    it, and no one may make one in another's name."""
    from librarian.store.reviewers import KEY_ENV, proven

    return proven(session, by, os.environ.get(KEY_ENV), False)


@app.command("sample")
def qa_sample(
    by: ByOpt,
    share: ShareOpt = 0.1,
    seed: DrawSeedOpt = None,
    db: DbOpt = None,
    home: HomeOpt = None,
) -> None:
    """Put a random share of the decided items to a second reviewer, blind: each meets
    them among their items in the workbench, without the first decision. --by: a reviewer
    the store registers, proven by their key (LIBRARIAN_KEY)."""
    from librarian.store.qa import sample_double, second_reviewers

    by = _in_session(db, home, lambda s: _proven(s, by))
    deciders, registered = _in_session(db, home, second_reviewers)
    others = (registered | {by}) - deciders if len(deciders) == 1 else {"any"}
    if len(deciders) == 1 and not others:
        (alone,) = deciders
        raise UsageError(
            f"only {alone} has decided items here, and nobody else reviews: a blind second "
            "review needs a second reviewer (`librarian review reviewers add NAME`). For a "
            "team of one, QA cannot check your decisions against anyone's; known-answer items "
            "(`review qa known`) are met by every reviewer but their author, so they too "
            "wait for a second person"
        )
    added, eligible = _in_session(
        db, home, lambda s: sample_double(s, share, by, datetime.now(UTC), seed)
    )
    who = "any reviewer but the decider" if others == {"any"} else ", ".join(sorted(others))
    out.print(
        f"{added} of {eligible} decisions not yet checked go to a second reviewer (who may "
        f"answer: {who})",
        markup=False,
    )


@app.command("known")
def qa_known(
    review_ids: Annotated[list[str], typer.Argument(help="decided items' review ids")],
    by: ByOpt,
    db: DbOpt = None,
    home: HomeOpt = None,
) -> None:
    """Make decided items known-answer items: their decision is the trusted answer, and
    every other reviewer meets each once among their items, not told which. --by: a
    reviewer the store registers, proven by their key (LIBRARIAN_KEY)."""
    from librarian.store.qa import add_known

    def known(session: Session) -> int:
        return add_known(session, review_ids, _proven(session, by), datetime.now(UTC))

    added = _in_session(db, home, known)
    out.print(f"{added} known-answer items added ({len(review_ids) - added} were already)")


@app.command("rule")
def qa_rule(
    check_id: Annotated[int, typer.Argument(help="the check (`review qa report` lists them)")],
    outcome: Annotated[
        str,
        typer.Argument(
            help="first: the decision stands; second: the second reviewer's answer replaces it"
        ),
    ],
    lead: RulingLeadOpt,
    db: DbOpt = None,
    hub: HubsOpt = None,
    home: HomeOpt = None,
) -> None:
    """Rule on a disagreement between a decision and its second review, as a lead the
    store registers, proven by their key (LIBRARIAN_KEY)."""
    from librarian.catalogue.teams import load_hubs
    from librarian.review.qa import adjudicate
    from librarian.store.reviewers import KEY_ENV, proven

    first, *rest = hub or [DEFAULT_HUB]
    hub_ids = set(load_hubs(first, rest).ids)
    key = os.environ.get(KEY_ENV)

    def rule(session: Session) -> str:
        return adjudicate(session, check_id, proven(session, lead, key, True), outcome, hub_ids)

    said = _in_session(db, home, rule)
    out.print(said, markup=False)


@app.command("report")
def qa_report_command(
    as_json: JsonOpt = False,
    db: DbOpt = None,
    home: HomeOpt = None,
) -> None:
    """Agreement between reviewers (percent, and Krippendorff's alpha over CRE sets) overall,
    per reviewer and per source; known-answer scores; the disagreements to rule on."""
    from librarian.review.qa import qa_report

    with _session(db, home, reads_only=True) as session:
        report = qa_report(session)
    if as_json:
        sys.stdout.write(json.dumps(report_dict(report), indent=1) + "\n")
        return
    for line in report_lines(report):
        out.print(line, markup=False)


def _figures(f: AgreementFigures) -> dict[str, Any]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    return {
        "items": f.items,
        "same": f.same,
        "percent": r(f.percent),
        "alpha_exact": r(f.alpha_exact),
        "alpha_jaccard": r(f.alpha_jaccard),
    }


def report_dict(report: QaReport) -> dict[str, Any]:
    return {
        "overall": _figures(report.overall),
        "by_reviewer": {k: _figures(v) for k, v in report.by_reviewer.items()},
        "by_source": {k: _figures(v) for k, v in report.by_source.items()},
        "known_answers": {
            k: {"answered": v.answered, "right": v.right}
            for k, v in report.known_by_reviewer.items()
        },
        "bulk_approvals_checked": {"items": report.bulk_checked, "same": report.bulk_same},
        "disagreements": [
            {
                "check": i.check_id,
                "review_id": i.review_id,
                "first": {"by": i.first.reviewer, "cre_ids": sorted(i.first.cre_ids)},
                "second": [{"by": a.reviewer, "cre_ids": sorted(a.cre_ids)} for a in i.disagreed],
            }
            for i in report.disagreements
        ],
    }


def _line(name: str, f: AgreementFigures) -> str:
    def a(x: float | None, width: int) -> str:
        return f"{'n/a' if x is None else f'{x:.2f}':>{width}}"

    pct = f"{'n/a' if f.percent is None else f'{f.percent:.1f}%':>6}"
    return f"  {name[:32]:32} {f.items:5} {pct} {a(f.alpha_exact, 11)} {a(f.alpha_jaccard, 13)}"


def report_lines(report: QaReport) -> Iterator[str]:
    if report.overall.items == 0 and not report.known_by_reviewer and not report.bulk_checked:
        yield "no check answered yet (`librarian review qa sample`, then review in the workbench)"
        return
    yield "a decision against its blind second review (alpha: Krippendorff's, over CRE sets)"
    yield f"  {'':32} {'items':>5} {'same':>6} {'alpha exact':>11} {'alpha Jaccard':>13}"
    yield _line("all", report.overall)
    for name, f in report.by_reviewer.items():
        yield _line(f"reviewer {name}", f)
    for name, f in report.by_source.items():
        yield _line(f"source {name}", f)
    if report.bulk_checked:
        yield (
            f"bulk approvals checked, apart from the figures above: {report.bulk_checked}, "
            f"{report.bulk_same} with the same answer"
        )
    for name, k in report.known_by_reviewer.items():
        yield f"known-answer items, {name}: {k.right} of {k.answered} right"
    for i in report.disagreements:
        theirs = "; ".join(
            f"{a.reviewer}: {' '.join(sorted(a.cre_ids)) or 'reject'}" for a in i.disagreed
        )
        first = " ".join(sorted(i.first.cre_ids)) or "reject"
        yield (
            f"disagreement, check {i.check_id} ({i.review_id}): {i.first.reviewer}: {first}; "
            f"{theirs} (rule: librarian review qa rule {i.check_id} first|second --lead NAME)"
        )
