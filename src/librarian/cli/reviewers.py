"""`librarian review reviewers`: who may sign in to the workbench. Each reviewer gets a
secret, shown once; the store keeps only its scrypt hash."""

from __future__ import annotations

from typing import Annotated

import typer

from librarian.cli.common import out
from librarian.cli.options import DbOpt, HomeOpt, MadeLeadOpt, WorkbenchPortOpt
from librarian.cli.qa import _session
from librarian.errors import UsageError
from librarian.text import visible

app = typer.Typer(
    no_args_is_help=True,
    help="Who may sign in to the workbench (names, leads, secrets).",
)
NameArg = Annotated[str, typer.Argument(help="the reviewer's name, as their decisions show it")]


@app.command("add")
def reviewers_add(
    name: NameArg,
    lead: MadeLeadOpt = False,
    port: WorkbenchPortOpt = 8765,
    db: DbOpt = None,
    home: HomeOpt = None,
) -> None:
    """Register NAME (again: a new secret, the old one ends) and print their secret once,
    with the sign-in link to hand them."""
    from urllib.parse import urlencode

    from librarian.store.reviewers import add_reviewer

    with _session(db, home) as session:
        secret = add_reviewer(session, name, lead)
    role = "lead" if lead else "reviewer"
    link = f"http://127.0.0.1:{port}/signin?" + urlencode({"name": name.strip()})
    out.print(visible(f"{name.strip()} ({role}) may sign in with the key {secret}"), markup=False)
    out.print(visible(f"at {link} (the key is typed there, never put in an address)"), markup=False)
    out.print("the key is shown once; `reviewers add` again gives a new one", markup=False)


@app.command("list")
def reviewers_list(db: DbOpt = None, home: HomeOpt = None) -> None:
    """Every registered reviewer and whether they lead."""
    from librarian.store.reviewers import reviewers

    with _session(db, home, reads_only=True) as session:
        found = reviewers(session)
    if not found:
        out.print("no reviewers: `librarian review reviewers add NAME [--lead]`", markup=False)
    for name, lead in found.items():
        out.print(visible(f"{name}{' (lead)' if lead else ''}"), markup=False)


@app.command("remove")
def reviewers_remove(name: NameArg, db: DbOpt = None, home: HomeOpt = None) -> None:
    """NAME may no longer sign in (signed-in browsers are signed out); their decisions stay."""
    from librarian.store.reviewers import remove_reviewer

    with _session(db, home) as session:
        removed = remove_reviewer(session, name)
    if not removed:
        raise UsageError(f"no reviewer {name!r} (`review reviewers list`)")
    out.print(visible(f"{name} may no longer sign in"), markup=False)
