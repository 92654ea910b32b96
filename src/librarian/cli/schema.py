"""`librarian schema export`: the JSON Schemas of the contracts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from librarian.cli.common import out, writable_output

app = typer.Typer(no_args_is_help=True, help="JSON Schemas of the contracts.")


@app.command("export")
def schema_export(out_dir: Annotated[Path, typer.Argument(help="directory to write")]) -> None:
    """Write the JSON Schema of every contract into OUT_DIR."""
    from librarian.schemas.export import export_schemas

    writable_output(out_dir, "OUT_DIR")
    for path in export_schemas(out_dir):
        out.print(str(path), markup=False)
