"""The `librarian` command line: one module per command group, options defined once
(`options.py`), settings assembled once (`common.py`), output in one place (`render.py`),
and one handler mapping the error hierarchy to exit codes: 0 done, 1 the run failed,
2 bad usage, configuration or input."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
import typer.main

# The click typer vendors: its usage errors are what the option parser raises.
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup
from typer.exceptions import Abort

from librarian.errors import LibrarianError

# Each command by name: (its module under librarian.cli, the function or Typer app).
# A command's module is imported when that command runs or the help lists it, so
# `librarian --version` and `librarian hub show` do not pay for numpy, the models or Prefect.
_COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "run"),
    "explain": ("inspect_text", "explain"),
    "route": ("inspect_text", "route"),
    "relink": ("relink", "relink"),
    "train": ("learn", "train"),
    "quantize": ("learn", "quantize"),
    "eval": ("learn", "eval_golden"),
    "serve": ("schedule", "serve"),
    "deploy": ("schedule", "deploy"),
    "samples": ("samples", "samples"),
    "review": ("review", "app"),
    "hub": ("hub", "app"),
    "queue": ("queue", "app"),
    "schema": ("schema", "app"),
    "server": ("server", "app"),
}


def _command(name: str) -> Any:  # a click Command of typer's vendored click
    module, attribute = _COMMANDS[name]
    target = getattr(importlib.import_module(f"librarian.cli.{module}"), attribute)
    command: Any
    if isinstance(target, typer.Typer):
        command = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class _Commands(TyperGroup):
    """Every command's LibrarianError, and every usage error the option parser finds,
    becomes one line on stderr and its exit code: never a traceback, never a panel.
    Commands are built from `_COMMANDS` when first asked for."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            self.commands[cmd_name] = _command(cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in _COMMANDS and not args[0].startswith("-"):
            for name in _COMMANDS:  # a typo: typer suggests from the commands it holds
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

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


def main() -> None:
    app()
