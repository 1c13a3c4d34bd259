"""The root `orchestra` Typer app that every command module registers its commands on.

Why a module of its own: the command modules import `app` from here, and `orchestra.cli` imports the
command modules to register them; with `app` in the package's `__init__` the two would import each other.
"""

from __future__ import annotations

import typer

from lab.output import quiet_libraries

app = typer.Typer(
    name="orchestra",
    help="Orchestra Lab: train, evaluate and study tool-orchestrating LLMs (ToolOrchestra, arXiv 2511.21689).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _options(verbose: bool = typer.Option(False, "--verbose",
                                          help="Also show libraries' progress bars, log lines and warnings "
                                               "(hidden by default: lab.output).")) -> None:
    """Orchestra Lab: train, evaluate and study tool-orchestrating LLMs (ToolOrchestra, arXiv 2511.21689)."""
    quiet_libraries(verbose)
