"""`orchestra runs`, `rescore` and `reprice`: look at logged runs and re-derive their numbers.

rescore and reprice never touch what was logged: rescoring stores a new scoring beside the run, and
repricing only prints. Both work from logged features because `lab.reward` is pure.
"""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.table import Table

from lab.cli import app
from lab.cli.options import DbOption, JsonOption, console, print_json
from lab.errors import LabInputError
from lab.pricing import PriceTable
from lab.reward import STD_THRESHOLD
from lab.rescoring import reprice_steps, rescore_run, with_orchestrator_steps
from lab.store import Store, queries, resolve_db_path


@app.command("runs")
def runs(db: Optional[str] = DbOption, as_json: bool = JsonOption) -> None:
    """List the runs in the store with their accuracy, cost and status."""
    store = Store(resolve_db_path(db))
    df = queries.runs_summary_df(store)
    if as_json:
        print_json(json.loads(df.to_json(orient="records", date_format="iso")))
        return
    if df.empty:
        console.print(f"no runs in {store.path}")
        return
    table = Table(title=f"runs in {store.path}")
    for column in ("run_id", "kind", "name", "orchestrator", "benchmark", "status", "trajectories", "accuracy", "cost_usd", "started_at"):
        table.add_column(column, justify="right" if column in ("trajectories", "accuracy", "cost_usd") else "left")
    for row in df.itertuples():
        table.add_row(
            row.run_id, row.kind, row.name, row.orchestrator, row.benchmark, row.status,
            str(row.trajectories), _fmt(row.accuracy, "{:.3f}"), _fmt(row.cost_usd, "${:.4f}"),
            str(row.started_at)[:19],
        )
    console.print(table)


@app.command("rescore")
def rescore(
    run_id: str = typer.Argument(..., help="Run to rescore."),
    preference: str = typer.Option(..., "--preference", "-p", help="P as NAME=VALUE pairs, e.g. outcome=1,compute=1,gpt-5=0."),
    std_threshold: float = typer.Option(STD_THRESHOLD, help="Groups whose reward std is below this are filtered (paper: 0.1)."),
    db: Optional[str] = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Rewards of a logged run under another preference vector, stored as a new scoring (nothing overwritten)."""
    store = Store(resolve_db_path(db))
    if std_threshold < 0:
        raise LabInputError(f"--std-threshold must be >= 0, got {std_threshold}")
    result = rescore_run(store, run_id, preference, std_threshold=std_threshold)
    if as_json:
        print_json(result.summary())
        return
    s = result.summary()
    table = Table(title=f"scoring {s['scoring_id']} of {run_id}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key in ("preference", "trajectories", "groups", "groups_kept", "reward_mean", "reward_mean_logged", "solved"):
        value = s[key]
        table.add_row(key, json.dumps(value) if isinstance(value, dict) else _fmt(value, "{:.4f}"))
    console.print(table)


@app.command("reprice")
def reprice(
    run_id: str = typer.Argument(..., help="Run to reprice."),
    pricing: str = typer.Option(..., "--pricing", help="Provider whose price table to apply (e.g. deepinfra)."),
    db: Optional[str] = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Every step's cost recomputed from its logged tokens under another provider's prices (prints only)."""
    store = Store(resolve_db_path(db))
    run = queries.run(store, run_id)  # unknown run ids fail before any work
    steps = with_orchestrator_steps(queries.steps_df(store, run_id), queries.trajectories_df(store, [run_id]), run.orchestrator)
    by_model = reprice_steps(steps, PriceTable.load(pricing))
    if as_json:
        print_json({"run_id": run_id, "pricing": pricing, "models": by_model.to_dict(orient="records"),
                    "old_total_usd": float(by_model.old_cost_usd.sum()), "new_total_usd": float(by_model.new_cost_usd.sum())})
        return
    table = Table(title=f"{run_id} repriced under '{pricing}'")
    for column in ("model", "calls", "input_tokens", "output_tokens", "old_cost_usd", "new_cost_usd", "priced_by"):
        table.add_column(column, justify="left" if column in ("model", "priced_by") else "right")
    for row in by_model.itertuples():
        table.add_row(row.model, str(row.calls), str(row.input_tokens), str(row.output_tokens),
                      f"${row.old_cost_usd:.4f}", f"${row.new_cost_usd:.4f}", row.priced_by)
    table.add_row("total", str(by_model.calls.sum()), str(by_model.input_tokens.sum()), str(by_model.output_tokens.sum()),
                  f"${by_model.old_cost_usd.sum():.4f}", f"${by_model.new_cost_usd.sum():.4f}", "", style="bold")
    console.print(table)


def _fmt(value: object, pattern: str) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, (int, float)):
        return pattern.format(value)
    return str(value)

