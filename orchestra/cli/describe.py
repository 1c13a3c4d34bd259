"""`orchestra describe-tools`: LLM-written capability descriptions of a toolkit's model tools (paper §3.1)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from lab.describe import describe_tool
from lab.errors import LabInputError
from lab.graders import grade
from lab.toolkit import build_tools, load_toolkit
from orchestra.cli.options import JsonOption, print_json, write_text
from orchestra.cli.root import app


@app.command("describe-tools")
def describe_tools(
    tools: list[str] = typer.Argument(None, help="Model tools to describe (default: every model tool of the toolkit)."),
    toolkit: str = typer.Option("default", help="Toolkit name or YAML path."),
    describer: str = typer.Option("smollm2", help="Tool (from the toolkit) that writes the descriptions."),
    n_tasks: int = typer.Option(10, "--tasks", help="Tasks sampled per tool (paper: 10)."),
    seed: int = typer.Option(0, help="Sampling seed."),
    out: Path | None = typer.Option(None, help="Write the descriptions as JSON here."),
    as_json: bool = JsonOption,
) -> None:
    """Sample tasks, run each model tool on them, and have a describer LLM write what the tool is good at."""
    from lab.world.build import build_world

    console = Console(stderr=True)
    kit = load_toolkit(toolkit, console=console)
    objects = build_tools(kit)
    if describer not in objects:
        raise LabInputError(f"--describer '{describer}' is not a tool of toolkit '{kit.name}' ({', '.join(objects)})")
    names = list(tools or [s.name for s in kit.tools if s.model])
    for name in names:
        if name not in objects:
            raise LabInputError(f"unknown tool '{name}' in toolkit '{kit.name}' ({', '.join(objects)})")
    tasks = [t for t in build_world(progress=True).select(split="train") if t.family != "tau2"]

    async def graded(task, text, context) -> bool:
        return grade(task, text, context).correct

    async def run_all():
        return [await describe_tool(objects[n], objects[describer], tasks, graded, n_tasks, seed) for n in names]

    results = asyncio.run(run_all())
    payload = [r.model_dump() for r in results]
    if out:
        write_text(out, json.dumps(payload, indent=2), "--out")
    if as_json:
        print_json(payload)
        return
    table = Table(title=f"tool descriptions (written by {describer})")
    for column in ("tool", "accuracy", "description"):
        table.add_column(column, overflow="fold")
    for r in results:
        table.add_row(r.tool, f"{r.accuracy:.2f} on {len(r.samples)}", r.description)
    Console().print(table)
