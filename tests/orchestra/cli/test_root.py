"""The root `orchestra` app (`orchestra/cli/root.py`, every command registered on it by `orchestra.cli`):
every command's --help reads whole on an 80-column terminal."""

from __future__ import annotations

import typer

from orchestra.cli import _register, app
from tests.conftest import orchestra


def test_help_fits_an_80_column_terminal_without_cutting_anything():
    """Every command's --help, read on an 80-column terminal: no option name or help word cut short."""
    _register()
    root = typer.main.get_command(app)
    commands = [[name] for name in root.commands if not hasattr(root.commands[name], "commands")]
    commands += [[group, sub] for group, command in root.commands.items() for sub in getattr(command, "commands", {})]
    for words in commands:
        result = orchestra(*words, "--help", env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
        assert result.returncode == 0, words
        cut = [line for line in result.stdout.splitlines() if "…" in line]
        assert not cut, (words, cut)
