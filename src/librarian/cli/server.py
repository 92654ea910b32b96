"""`librarian server start`: the persistent local Prefect server that schedules need."""

from __future__ import annotations

import signal
from contextlib import suppress

import typer

from librarian.cli.common import err, home_of, out
from librarian.cli.options import HomeOpt, HostOpt, ServerPortOpt

app = typer.Typer(no_args_is_help=True, help="The local Prefect server schedules run on.")


@app.command("start")
def server_start(
    port: ServerPortOpt = 4200,
    host: HostOpt = "127.0.0.1",
    home: HomeOpt = None,
) -> None:
    """Run a persistent Prefect server (its database in the librarian home, the UI on,
    analytics off) until stopped; print the PREFECT_API_URL that `serve`, `deploy` and
    workers use."""
    from librarian.flows.server import ServerError, check_port_free, exposure, prefect_server

    prefect_home = home_of(home).root / "prefect"
    check_port_free(host, port)
    warning = exposure(host)
    if warning is not None:
        err.print(f"warning: {warning}", markup=False)
    # SIGTERM (systemctl stop, docker stop) unwinds like Ctrl-C: the server is stopped on
    # the way out. Stopping it inside the handler would wait on the process the main
    # thread is already waiting on, for ever.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with prefect_server(prefect_home, host, port, ui=True) as (api, process):
            out.print(f"export PREFECT_API_URL={api}", markup=False)
            err.print(
                f"Prefect server on {api} (UI: {api.removesuffix('/api')}), its database in "
                f"{prefect_home}; Ctrl-C stops it",
                markup=False,
            )
            with suppress(KeyboardInterrupt):
                process.wait()
    except ServerError as exc:
        raise ServerError(f"{exc} (is port {port} in use? try --port)") from exc
