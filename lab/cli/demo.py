"""`orchestra demo`: the lab end to end on the offline world, with no key, GPU or network.

Builds (or reuses) the offline world, evaluates four orchestrators on the same test tasks (a cheap
cascade, always-the-strongest-model, an emulation of a prompted Qwen3-8B orchestrator, and the oracle
upper bound), then prints the comparison and writes its figures. The models are simulated stand-ins
for the paper's (`sim:*`, priced at the real models' prices) and every table says so.
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


@app.command("demo")
def demo(
    limit: int = typer.Option(40, help="Test tasks per orchestrator."),
    html: Optional[Path] = typer.Option(Path("orchestra-demo.html"), help="Where to write the figures (offline HTML)."),
    db: Optional[str] = DbOption,
) -> None:
    """Compare four orchestrators on the offline world: accuracy, cost, latency, tool use, Pareto frontier."""
    progress = Console(stderr=True)
    store = Store(resolve_db_path(db))
    progress.print("[bold]Orchestra Lab demo[/]: offline world, simulated models (sim:*) priced at real list prices")
    run_ids = []
    for orchestrator in DEMO_ORCHESTRATORS:
        config = EvalConfig.build(benchmark="world", split="test", orchestrator=orchestrator, limit=limit, run_name=f"demo-{orchestrator.split(':')[1]}")
        (summary,) = run_eval(config, store, progress)
        run_ids.append(summary.run_id)
    report = load_report(store, run_ids)
    print_report(report, console)
    if html is not None:
        write_text(html, figures_html(report.figures(), title="Orchestra Lab demo (simulated models)"), "--html")
        console.print(f"figures: {html.resolve()}")
    console.print(f"store: {store.path}  -  next: orchestra rescore {run_ids[0]} --preference outcome=1,latency=1 "
                  f"| orchestra reprice {run_ids[1]} --pricing deepinfra")
