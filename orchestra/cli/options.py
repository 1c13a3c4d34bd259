"""Options shared by several commands, defined once so their help text never drifts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from lab.errors import LabInputError

DbOption = typer.Option(None, "--db", help="DuckDB file (else $ORCHESTRA_DB, else ./orchestra.duckdb).")
JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables.")

console = Console()


def write_text(path: Path, text: str, flag: str) -> None:
    """Write an output file the user named; an unwritable path is one line naming the flag."""
    try:
        path.write_text(text)
    except OSError as exc:
        raise LabInputError(f"{flag} {path}: cannot write ({exc.strerror})") from None


def print_json(payload: Any) -> None:
    """JSON on stdout without rich's wrapping, so pipes get valid JSON."""
    typer.echo(json.dumps(payload, indent=2, default=str))

