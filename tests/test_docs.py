"""The README and docs say what the code does: every `orchestra` command they show parses (known command,
known options, valid values), every page they link exists, and the README's example toolkit loads."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import typer

from orchestra.cli import _USAGE_ERRORS as USAGE_ERRORS
from tests.conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def code_lines(page: Path) -> list[str]:
    """The lines inside the page's fenced code blocks."""
    inside, lines = False, []
    for line in page.read_text().splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line)
    return lines


def commands(page: Path) -> list[str]:
    """`orchestra ...` commands in the page's code blocks, comments and shell plumbing removed."""
    found = []
    for line in code_lines(page):
        for part in re.split(r"&&|\|(?!\|)|;", line.split("  #")[0].split(" # ")[0]):
            part = re.sub(r"^\s*(\$ )?(\w+=\S+\s+)*", "", part).split(" > ")[0].strip()
            if part.startswith("orchestra "):
                found.append(part)
    return found


@pytest.fixture(scope="module")
def cli() -> click.Command:
    from orchestra.cli import _register, app

    _register()
    return typer.main.get_command(app)


def parse(cli: click.Command, args: list[str]) -> None:
    """Parse like the shell would run it, down to the leaf command, without running anything. (typer
    vendors its own click: groups are found by what they do, not by click's classes.)"""
    command, ctx = cli, None
    while True:
        ctx = command.make_context(command.name or "orchestra", list(args), parent=ctx, resilient_parsing=False)
        if not hasattr(command, "resolve_command"):
            return
        protected = getattr(ctx, "protected_args", None) or getattr(ctx, "_protected_args", None) or []
        rest = [*protected, *ctx.args]
        if not rest:
            return
        _, command, args = command.resolve_command(ctx, rest)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_command_shown_parses(page: Path, cli):
    shown = commands(page)
    for line in shown:
        try:
            parse(cli, shlex.split(line)[1:])
        except USAGE_ERRORS as exc:
            pytest.fail(f"{page.name}: `{line}`: {exc.format_message()}")
    if page.name in ("README.md", "cli.md"):
        assert len(shown) >= 10


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_linked_page_exists(page: Path):
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
        assert (page.parent / target).exists(), f"{page.name} links to a missing {target}"


def test_the_readme_toolkit_loads_with_every_model_priced(tmp_path):
    from lab.toolkit import load_toolkit

    text = (REPO / "README.md").read_text()
    block = re.search(r"```yaml\n(# my-endpoints\.yaml.*?)```", text, re.S).group(1)
    (tmp_path / "my-endpoints.yaml").write_text(block)
    toolkit = load_toolkit(str(tmp_path / "my-endpoints.yaml"))
    models = [t for t in toolkit.tools if t.model]
    assert len(models) == 3 and all(t.input_per_mtok > 0 and t.output_per_mtok > 0 for t in models)


def fidelity_rows() -> list[list[str]]:
    """The rows of docs/reproduce.md's fidelity table: element, released file, verdict, test."""
    page = (REPO / "docs" / "reproduce.md").read_text()
    table = page.split("## Fidelity")[1].split("\n## ")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| element")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def test_the_fidelity_table_leaves_nothing_unknown_and_each_row_names_a_test_that_exists():
    rows = fidelity_rows()
    assert len(rows) >= 30
    for element, released, verdict, test in rows:
        assert "unknown" not in verdict.lower(), element
        assert verdict.startswith(("same", "deliberate difference, because")), element
        assert "deliberate difference" not in verdict or "because" in verdict, element
        assert released, element
        path, _, name = test.strip("`").partition("::")
        assert (REPO / path).is_file() and f"def {name}(" in (REPO / path).read_text(), (element, test)
