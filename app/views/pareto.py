"""Pareto: cost (or latency) against accuracy for runs, each labelled with its 95% CI, and the frontier of the
runs one could deploy: a privileged run (the oracle reads the grader) is drawn as a diamond but left out of
the frontier unless asked. Clicking a point opens that run's trajectories."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data
from app.navigation import page
from app.selection import clicked_runs
from app.widgets import pick_runs, run_page, simulated_badge, store_or_stop
from lab.report.figures import cost_accuracy_figure, turn_budget_figure
from lab.report.metrics import frontier_auc, pareto_points


def render() -> None:
    st.title("Pareto")
    path, stamp, runs = store_or_stop()
    run_ids = pick_runs(runs, default=20)
    if not run_ids:
        st.info("Choose at least one evaluation run.")
        return
    simulated_badge(runs, run_ids)
    key = tuple(run_ids)
    accuracy, costs = data.accuracy(path, stamp, key), data.costs(path, stamp, key)
    left, right = st.columns(2)
    axis = left.radio("Against accuracy", ["cost", "latency"], horizontal=True, key="pareto-axis")
    privileged = set(runs[runs.privileged].run_id) & set(run_ids)
    include = right.toggle("Privileged runs count for the frontier", key="pareto-privileged",
                           help="The oracle reads the grader: an upper bound no deployed orchestrator reaches.")
    if axis == "latency":  # the same frontier arithmetic on seconds per task instead of cents
        costs = costs.assign(cost_cents_per_task=costs.latency_s_per_task)
    points = frontier_points(accuracy, costs, set() if include else privileged)
    names = point_names(points.merge(runs[["run_id", "name", "orchestrator", "max_turns", "train_step"]],
                                     on="run_id"))
    figure = cost_accuracy_figure(points, colors=data.palette(path, stamp)[0], names=names)
    if axis == "latency":
        figure.update_layout(title="Latency vs accuracy (filled: on the Pareto frontier)")
        figure.update_xaxes(title_text="mean latency per task (s, log scale)")
    event = st.plotly_chart(figure, on_select="rerun", selection_mode="points", key="pareto-chart")
    chosen = clicked_runs(event)
    if chosen:
        st.success(f"Selected {chosen[0]}")
        st.page_link(page("rollouts"), label=f"Open the trajectories of {chosen[0]}", query_params={"run": chosen[0]})
    if axis == "cost":
        st.caption(area_sentence(frontier_auc(points[~points.privileged]), include or not privileged))
    st.dataframe(points.assign(name=points.run_id.map(names)), hide_index=True, key="pareto-table",
                 column_config={"accuracy": st.column_config.NumberColumn(format="%.3f"),
                                "cost_cents_per_task": st.column_config.NumberColumn(
                                    "¢/task" if axis == "cost" else "s/task", format="%.3f")})
    budgets = data.turn_budgets(path, stamp, key)
    if len(budgets):
        st.plotly_chart(turn_budget_figure(budgets), key="turn-budgets")


def frontier_points(accuracy: pd.DataFrame, costs: pd.DataFrame, privileged: set[str]) -> pd.DataFrame:
    """Every run's point with its CI; `on_frontier` among the runs not in `privileged` (theirs is False)."""
    fair = pareto_points(accuracy[~accuracy.run_id.isin(privileged)], costs)
    every = pareto_points(accuracy, costs).drop(columns="on_frontier")
    every = every.merge(fair[["run_id", "on_frontier"]], on="run_id", how="left")
    every["on_frontier"] = every.on_frontier.fillna(False).astype(bool)
    every["privileged"] = every.run_id.isin(privileged)
    return every.merge(accuracy[["run_id", "ci_low", "ci_high", "n_tasks"]], on="run_id")


def point_names(points: pd.DataFrame) -> dict[str, str]:
    """A point's label: the run's name (else its orchestrator), its turn budget and training step when set."""
    return {r.run_id: " · ".join([r.name if isinstance(r.name, str) and r.name else r.orchestrator,
                                  *([f"{int(r.max_turns)} turns"] if pd.notna(r.max_turns) else []),
                                  *([f"step {int(r.train_step)}"] if pd.notna(r.train_step) else [])])
            for r in points.itertuples()}


def area_sentence(area: pd.DataFrame, with_privileged: bool) -> str:
    """The frontier's area as a sentence, not a dict."""
    row = area.iloc[0]
    if not row.n_runs:
        return "No run has a cost to place on the frontier."
    which = "" if with_privileged else " non-privileged"
    return (f"Area under the{which} frontier: {row.auc:.3f}, the mean best accuracy reachable between "
            f"{row.cost_min_cents:.3g}¢ and {row.cost_max_cents:.3g}¢ per task (log scale); "
            f"{int(row.n_frontier)} of {int(row.n_runs)} runs on the frontier.")


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
