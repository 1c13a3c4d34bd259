"""Options shared by several commands, defined once so their help text never drifts."""

from __future__ import annotations

import json
from typing import Any, Optional

import typer
from rich.console import Console

DbOption = typer.Option(None, "--db", help="DuckDB file (else $ORCHESTRA_DB, else ./orchestra.duckdb).")
JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables.")

console = Console()


def print_json(payload: Any) -> None:
    """JSON on stdout without rich's wrapping, so pipes get valid JSON."""
    typer.echo(json.dumps(payload, indent=2, default=str))


DbArg = Optional[str]
