"""`orchestra demo`: the lab end to end on the offline world, with no key, GPU or network.

Builds (or reuses) the offline world, evaluates four orchestrators on the same test tasks on both
toolkit shapes (the free-form toolkit, where the orchestrator writes every prompt, and the paper's
`search` / `enhance_reasoning` / `answer` with model slots): a cheap cascade, always-the-strongest
model, an emulation of a prompted Qwen3-8B orchestrator, and the oracle, a privileged upper bound
that reads the grader. Then it prints the comparison, writes its figures and the commands to try
next. The models are simulated stand-ins for the paper's (`sim:*`, priced at the real models' prices)
and every table says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from lab.cli import app
from lab.cli.options import DbOption, console, write_text
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.report.api import load_report
from lab.report.figures import figures_html
from lab.report.tables import print_report
from lab.store import Store, resolve_db_path

DEMO_ORCHESTRATORS = ("scripted:cheapest-first", "scripted:always-strongest", "scripted:qwen3-8b-prompted", "scripted:oracle")
#: The free-form toolkit and the paper's slot toolkit (configs/toolkits/).
DEMO_TOOLKITS = ("default", "paper")


@app.command("demo")
def demo(
    limit: int = typer.Option(40, help="Test tasks per orchestrator."),
    html: Optional[Path] = typer.Option(Path("orchestra-demo.html"), help="Where to write the figures (offline HTML)."),
    db: Optional[str] = DbOption,
) -> None:
    """Compare four orchestrators on both toolkit shapes: accuracy, cost, latency, tool use, Pareto frontier."""
    progress = Console(stderr=True)
    store = Store(resolve_db_path(db))
    progress.print("[bold]Orchestra Lab demo[/]: offline world, simulated models (sim:*) priced at real list prices")
    runs: dict[tuple[str, str], str] = {}
    for toolkit in DEMO_TOOLKITS:
        for orchestrator in DEMO_ORCHESTRATORS:
            name = orchestrator.split(":")[1]
            config = EvalConfig.build(benchmark="world", split="test", orchestrator=orchestrator, toolkit=toolkit,
                                      limit=limit, run_name=f"demo-{toolkit}-{name}")
            (summary,) = run_eval(config, store, progress)
            runs[toolkit, name] = summary.run_id
    report = load_report(store, list(runs.values()))
    print_report(report, console)
    if html is not None:
        write_text(html, figures_html(report.figures(), title="Orchestra Lab demo (simulated models)"), "--html")
        console.print(f"figures: {html.resolve()}")
    where = f" --db {store.path}" if db else ""
    cascade, strongest = runs["default", "cheapest-first"], runs["default", "always-strongest"]
    console.print(f"store: {store.path}")
    for hint in (
        # one sample per task: rescoring normalises each task across runs (the preference score)
        f"orchestra rescore {cascade} --preference outcome=1,latency=1 --across {strongest}{where}",
        f"orchestra reprice {strongest} --pricing deepinfra{where}",
        f"orchestra report {runs['paper', 'cheapest-first']} {runs['paper', 'always-strongest']} --pricing deepinfra{where}",
    ):
        console.print(f"next: {hint}", soft_wrap=True, highlight=False)
