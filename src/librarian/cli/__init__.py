"""The `librarian` command line: one module per command group, options defined once
(`options.py`), settings assembled once (`common.py`), output in one place (`render.py`),
and one handler mapping the error hierarchy to exit codes: 0 done, 1 the run failed,
2 bad usage, configuration or input."""

from __future__ import annotations

import sys
from typing import Any

import typer

# The click typer vendors: its usage errors are what the option parser raises.
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup
from typer.exceptions import Abort

from librarian.errors import LibrarianError


class _Commands(TyperGroup):
    """Every command's LibrarianError, and every usage error the option parser finds,
    becomes one line on stderr and its exit code: never a traceback, never a panel."""

    def invoke(self, ctx: Any) -> Any:  # typer's own (vendored) click Context
        try:
            return super().invoke(ctx)
        except LibrarianError as exc:
            from librarian.cli.errors import report

            raise typer.Exit(report(exc)) from exc
        except Exception as exc:  # only the known ones become a line; a bug still shows as one
            from librarian.cli.errors import known_failure, report

            failure = known_failure(exc)
            if failure is None:
                raise
            raise typer.Exit(report(failure)) from exc

    def main(self, *args: Any, **kwargs: Any) -> Any:
        standalone = kwargs.pop("standalone_mode", True)
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except NoArgsIsHelpError as exc:
            if not standalone:
                raise
            exc.show()  # the help, as asked for by giving no arguments
            sys.exit(exc.exit_code)
        except ClickException as exc:
            if not standalone:
                raise
            from librarian.cli.errors import report_usage

            sys.exit(report_usage(exc.format_message(), exc.exit_code))
        except Abort:
            if not standalone:
                raise
            sys.exit(130)
        if standalone:
            sys.exit(code if isinstance(code, int) else 0)
        return code


def _version(value: bool) -> None:
    if value:
        from librarian import __version__

        typer.echo(f"librarian {__version__}")
        raise typer.Exit()


app = typer.Typer(
    cls=_Commands,
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Link security-knowledge sections to OpenCRE hubs, or route them to a person.",
)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    """Link security-knowledge sections to OpenCRE hubs, or route them to a person."""


def _register() -> None:
    from librarian.cli import (
        hub,
        inspect_text,
        learn,
        queue,
        relink,
        review,
        run,
        samples,
        schedule,
        schema,
        server,
    )

    app.command()(run.run)
    app.command()(inspect_text.explain)
    app.command()(inspect_text.route)
    app.command()(relink.relink)
    app.command()(learn.train)
    app.command()(learn.quantize)
    app.command("eval")(learn.eval_golden)
    app.command()(schedule.serve)
    app.command()(schedule.deploy)
    app.command()(samples.samples)
    app.add_typer(review.app, name="review")
    app.add_typer(hub.app, name="hub")
    app.add_typer(queue.app, name="queue")
    app.add_typer(schema.app, name="schema")
    app.add_typer(server.app, name="server")


_register()


def main() -> None:
    app()
