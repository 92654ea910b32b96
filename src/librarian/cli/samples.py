"""`librarian samples`: where the sample inputs shipped inside the package are."""

from __future__ import annotations

from typing import Annotated

import typer

from librarian.cli.common import out
from librarian.errors import UsageError
from librarian.paths import packaged_data


def samples(
    name: Annotated[str | None, typer.Argument(help="one sample's file name")] = None,
) -> None:
    """Print the full path of every packaged sample input (or of the one named).

    For example: librarian run "$(librarian samples queue_sample.jsonl)" --uncalibrated
    """
    folder = packaged_data("samples")
    files = sorted(p for p in folder.iterdir() if p.suffix in (".jsonl", ".csv"))
    if name is None:
        for path in files:
            out.print(str(path), markup=False)
        return
    chosen = folder / name
    if chosen not in files:
        known = ", ".join(p.name for p in files)
        raise UsageError(f"no packaged sample {name!r} (there are: {known})")
    out.print(str(chosen), markup=False)
