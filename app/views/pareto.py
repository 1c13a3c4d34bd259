"""Pareto: cost against accuracy for runs (turn budgets, preferences, checkpoints), with the frontier;
clicking a point opens that run's trajectories."""

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
    axis = st.radio("Against accuracy", ["cost", "latency"], horizontal=True, key="pareto-axis")
    if axis == "latency":  # the same frontier arithmetic on seconds per task instead of cents
        costs = costs.assign(cost_cents_per_task=costs.latency_s_per_task)
    pareto = pareto_points(accuracy, costs)
    points = pareto.merge(runs[["run_id", "name", "orchestrator", "max_turns",
                                "preference", "train_step"]], on="run_id")
    names = {r.run_id: " · ".join([r.name if isinstance(r.name, str) and r.name else r.orchestrator,
                                   *([f"{int(r.max_turns)} turns"] if pd.notna(r.max_turns) else []),
                                   *([f"step {int(r.train_step)}"] if pd.notna(r.train_step) else [])])
             for r in points.itertuples()}
    figure = cost_accuracy_figure(pareto, names=names)
    if axis == "latency":
        figure.update_layout(title="Latency vs accuracy (filled: on the Pareto frontier)")
        figure.update_xaxes(title_text="mean latency per task (s)")
    event = st.plotly_chart(figure, on_select="rerun", selection_mode="points", key="pareto-chart")
    chosen = clicked_runs(event)
    if chosen:
        st.success(f"Selected {chosen[0]}")
        st.page_link(page("rollouts"), label=f"Open the trajectories of {chosen[0]}", query_params={"run": chosen[0]})
    st.dataframe(points, hide_index=True, key="pareto-table")
    if axis == "cost":
        st.caption(f"Area under the frontier: {frontier_auc(pareto).to_dict('records')}")
    budgets = data.turn_budgets(path, stamp, key)
    if len(budgets):
        st.plotly_chart(turn_budget_figure(budgets), key="turn-budgets")


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
