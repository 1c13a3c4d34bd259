"""Run summary tables printed by `orchestra eval` and `orchestra report`."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
from rich.console import Console
from rich.table import Table

from lab.store import Store, queries


def run_summaries(store: Store, run_ids: Sequence[str]) -> pd.DataFrame:
    """One row per run: trajectories, accuracy, mean cost and latency per task, status."""
    df = queries.runs_summary_df(store)
    df = df[df.run_id.isin(list(run_ids))].set_index("run_id").reindex(list(run_ids)).reset_index()
    return df[["run_id", "orchestrator", "benchmark", "status", "trajectories", "accuracy", "cost_usd", "latency_s"]]


def print_run_summaries(table: pd.DataFrame, summaries: Sequence[Any], console: Console) -> None:
    out = Table(title="evaluation")
    for column, justify in (("run_id", "left"), ("status", "left"), ("trajectories", "right"), ("new", "right"),
                            ("accuracy", "right"), ("cost $/task", "right"), ("latency s/task", "right")):
        out.add_column(column, justify=justify)
    for row, summary in zip(table.itertuples(), summaries):
        n = int(row.trajectories or 0)
        out.add_row(
            row.run_id, str(row.status), str(n), str(summary.trajectories),
            "-" if pd.isna(row.accuracy) else f"{row.accuracy:.3f}",
            "-" if not n else f"{row.cost_usd / n:.5f}",
            "-" if pd.isna(row.latency_s) else f"{row.latency_s:.1f}",
        )
    console.print(out)
    for summary in summaries:
        if summary.failed:
            console.print(f"[red]{summary.run_id}: {summary.failed} rollouts failed (policy unavailable); re-run to retry them[/]")
            for error in summary.errors:
                console.print(f"  {error}")
        if summary.stopped_by_budget:
            console.print(f"[yellow]{summary.run_id}: stopped before the budget cap; re-run with a larger --budget-usd to finish[/]")
