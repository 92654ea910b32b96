"""Local Prefect servers: a throwaway one for runs whose tasks leave this process (Dask
workers), and the persistent one schedules need (`librarian server start`).

Prefect's temporary server lives inside one process; workers in other processes would
each start their own and the run's task states would scatter. So such a run starts a
real `prefect server start` on a free port (its own PREFECT_HOME) and stops it at the end.
Schedules need a server that outlives the command that registers them: Prefect refuses
to schedule flows on its temporary server.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from librarian.errors import RunError

STARTUP_TIMEOUT_S = 180.0


class ServerError(RunError):
    """The local Prefect server did not come up; the message carries its log's tail."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def exposure(host: str) -> str | None:
    """What binding `host` exposes, when it is more than this machine."""
    if host in LOOPBACK or host.startswith("127."):
        return None
    return (
        f"the Prefect API and UI on {host} have no authentication: anyone who can reach it "
        "can read every run, its parameters and logs, and start or cancel runs; bind "
        "127.0.0.1 (the default) or put it behind an authenticating proxy"
    )


def check_port_free(host: str, port: int) -> None:
    """Refuse a port another process listens on: its health check would answer for ours."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is no owner
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise ServerError(
                f"cannot bind {host}:{port}: {exc.strerror or exc} (another server on the "
                "port? choose one with --port)"
            ) from exc


@contextmanager
def local_prefect_server() -> Iterator[str]:
    """Start a throwaway server, yield its API URL, stop it afterwards."""
    home = Path(tempfile.mkdtemp(prefix="librarian-prefect-"))
    with prefect_server(home, "127.0.0.1", free_port(), ui=False) as (api, _):
        yield api


@contextmanager
def prefect_server(
    home: Path, host: str, port: int, ui: bool
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`prefect server start` with its database under `home`, analytics off; yields the
    API URL and the process once healthy, and stops it (and its group) afterwards."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "true" if ui else "false",
    }
    env.pop("PREFECT_API_URL", None)
    log_path = home / "server.log"
    prefect = str(Path(sys.executable).with_name("prefect"))
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [prefect, "server", "start", "--host", host, "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # A Dask run killed with SIGKILL left this one running too (issue 47, item 19).
            preexec_fn=dies_with(os.getpid()),
        )
        api = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/api"
        try:
            _wait_healthy(api, server, log_path)
            yield api, server
        finally:
            stop(server)


# Linux's prctl option that signals a child when the process that started it ends.
PR_SET_PDEATHSIG = 1


def dies_with(parent: int) -> Callable[[], None] | None:
    """What a throwaway server's child runs before it starts: on Linux, it is sent SIGTERM
    when `parent` (the `librarian run` that started it) ends, even killed with SIGKILL,
    when no exit handler runs (each killed run left a ~220 MB server behind). None
    elsewhere: there the server is stopped by the run's exit handler alone."""
    if not sys.platform.startswith("linux"):
        return None

    def arm() -> None:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the line above took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


def stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _wait_healthy(api: str, server: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise ServerError(f"prefect server exited: {log_path.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{api}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise ServerError(f"prefect server not healthy after {STARTUP_TIMEOUT_S:.0f} s")


class TemporaryServer:
    """What Prefect's own temporary server is (its API in uvicorn, no UI, the user's
    Prefect home), started by us as soon as a run's arguments are checked, so that it
    boots while the models load; Prefect starts its own only once the flow is called, and
    a small file's run spent ~3 s waiting there. `ready` waits for it and points
    PREFECT_API_URL at it; it stops when this process exits."""

    def __init__(self) -> None:
        import atexit
        import importlib.util

        spec = importlib.util.find_spec("prefect")
        assert spec is not None and spec.origin is not None, "prefect is a dependency"
        self.port = free_port()
        self.api = f"http://127.0.0.1:{self.port}/api"
        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",  # as Prefect's: no scheduler, no services
            "PREFECT__SERVER_FINAL": "1",
        }
        self.log = tempfile.NamedTemporaryFile(prefix="librarian-prefect-", suffix=".log")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--app-dir",
                str(Path(spec.origin).parent.parent),
                "--factory",
                "prefect.server.api.server:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "error",
                "--lifespan",
                "on",
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=dies_with(os.getpid()),  # started before any thread: a fork is safe
        )
        atexit.register(self.stop)

    def ready(self) -> None:
        """Wait until it answers, then make it the API this process's flows use."""
        _wait_healthy(self.api, self.process, Path(self.log.name))
        os.environ["PREFECT_API_URL"] = self.api
        os.environ["PREFECT_UI_URL"] = ""  # it serves no UI: no "View at" link to nowhere

    def stop(self) -> None:
        """Ask it to stop, without waiting for it: it shuts down by itself on SIGTERM, and
        the command's answer need not wait on that."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        self.log.close()
