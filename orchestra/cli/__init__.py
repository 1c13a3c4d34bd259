"""The `orchestra` command: one thin Typer file per command group, registered here on the root app
(`orchestra.cli.root`).

Every command turns `LabInputError` into one red line on stderr and exit code 2; anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import sys

import click
import typer
from rich.console import Console

from lab.errors import LabInputError
from orchestra.cli.root import app

err_console = Console(stderr=True)

# typer vendors its own click; usage errors are instances of that copy's ClickException.
try:
    from typer._click.exceptions import ClickException as _TyperClickException
except ImportError:  # typer that uses the installed click
    _TyperClickException = None  # type: ignore[assignment,misc]

_USAGE_ERRORS: tuple[type[Exception], ...] = tuple(
    e for e in (click.ClickException, _TyperClickException) if e is not None
)


def _register() -> None:
    # Imported for their side effect of adding commands to `app` (orchestra.cli.root); order is the order in --help.
    from orchestra.cli import calibrate, dashboard, demo, describe, evaluate, report, runs, synth, train  # noqa: F401
    from orchestra.cli.index import index_app
    from orchestra.cli.store import store_app
    from orchestra.cli.world import world_app

    app.add_typer(world_app, name="world")
    app.add_typer(index_app, name="index")
    app.add_typer(store_app, name="store")


def main() -> None:
    """Console-script entry point."""
    _register()
    try:
        code = app(standalone_mode=False)  # without standalone mode click returns a command's typer.Exit code
    except LabInputError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except _USAGE_ERRORS as exc:  # unknown option, missing argument, bad value type
        err_console.print(f"[bold red]error:[/] {exc.format_message()} (see --help)", highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        sys.exit(130)
    if isinstance(code, int) and code:
        sys.exit(code)
