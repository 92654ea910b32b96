"""How fast the command line answers, against the floor of importing what every command
needs (typer, rich, pydantic).

    python scripts/bench_cli_start.py [--repeat 7]

Each command runs as a user runs it (a new process, the installed `librarian`), once to
warm the caches and the hub's vectors, then `--repeat` times; the median is printed with
its ratio to the floor. `hub search` uses the home's trained models (`librarian train`).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import typer, rich, pydantic (the floor)": [
        sys.executable,
        "-c",
        "import typer, rich, pydantic",
    ],
    "librarian --version": ["librarian", "--version"],
    "librarian hub show 616-305": ["librarian", "hub", "show", "616-305"],
    "librarian hub search 'denial of service'": ["librarian", "hub", "search", "denial of service"],
    "librarian --help": ["librarian", "--help"],
}


def seconds(command: list[str], repeat: int) -> float:
    subprocess.run(command, capture_output=True, check=True)  # warm: page cache, hub vectors
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if shutil.which("librarian") is None:
        sys.exit("no `librarian` on PATH: activate the project's .venv")
    floor = None
    print(f"{'command':45} {'median s':>9} {'x floor':>8}")
    for name, command in COMMANDS.items():
        median = seconds(command, args.repeat)
        floor = floor or median
        print(f"{name:45} {median:9.3f} {median / floor:8.2f}")


if __name__ == "__main__":
    main()
