"""Tool use: calls per tool per run (paper Fig. 5 / Table 15), delegation bias, tool-share drift in training."""

from __future__ import annotations

import json

import streamlit as st

from app import data
from app.widgets import pick_runs, run_page, simulated_badge, store_or_stop
from lab.report.figures import calls_heatmap_figure, calls_per_task_figure, tool_share_drift_figure, tool_share_figure
from lab.report.html import display_names


def render() -> None:
    st.title("Tool use")
    path, stamp, runs = store_or_stop()
    run_ids = pick_runs(runs)
    if run_ids:
        simulated_badge(runs, run_ids)
        table, bias = data.tool_tables(path, stamp, tuple(run_ids))
        names, colors = display_names(runs), data.palette(path, stamp)[1]
        st.plotly_chart(calls_per_task_figure(table, run_ids, colors, names), key="calls-per-task")
        st.plotly_chart(tool_share_figure(table, run_ids, colors, names), key="tool-shares")
        st.dataframe(table.assign(run=table.run_id.map(names)), hide_index=True, key="tool-table")
        _delegation_heat_map(path, stamp, run_ids, names)
        st.subheader("Delegation bias (paper Fig. 3)")
        st.dataframe(bias_table(bias, names), hide_index=True, key="bias-table")
        st.caption("strongest: the model tools with the highest output price in the run's toolkit. The own-family "
                   "share (calls to models of the orchestrator's own family, the paper's self-enhancement bias) "
                   "exists for orchestrators that are LLMs of a known family; it is left out for scripts and "
                   "trained checkpoints.")
    _drift(path, stamp, runs)


def bias_table(bias, names: dict[str, str]):
    """The delegation-bias table by run name, without the own-family columns where no run has a family."""
    table = bias.assign(run=bias.run_id.map(names))
    if table.orchestrator_family.isna().all():
        table = table.drop(columns=["orchestrator_family", "own_family_calls", "own_family_share"])
    return table[["run", *[c for c in table.columns if c not in ("run", "run_id")], "run_id"]]


def _delegation_heat_map(path, stamp, run_ids: list[str], names: dict[str, str]) -> None:
    """Calls per task, run × tool (rows named and ordered as the bars above), for the tasks of one domain
    or difficulty (or all)."""
    trajs = data.trajectories(path, stamp, tuple(run_ids))
    calls = data.tool_calls(path, stamp, tuple(run_ids))
    tasks = data.tasks(path, stamp).drop_duplicates("task_id").set_index("task_id")
    meta = tasks.meta_json.map(lambda text: json.loads(text or "{}"))
    facets = {"domain": tasks.domain, "difficulty": meta.map(lambda m: m.get("difficulty"))}
    by = st.radio("Split the heat map by", ["all tasks", *facets], horizontal=True, key="heat-by")
    label = "all tasks"
    if by != "all tasks":
        values = sorted({str(v) for v in facets[by].dropna()})
        if not values:
            st.caption(f"No task in these runs records a {by}.")
            return
        label = st.selectbox(by, values, key="heat-value")
        chosen = set(facets[by].index[facets[by].astype(str) == label])
        trajs, calls = trajs[trajs.task_id.isin(chosen)], calls[calls.task_id.isin(chosen)]
    if calls.empty:
        st.caption("No tool calls on these tasks.")
        return
    tasks_per_run = trajs.groupby("run_id").task_id.nunique()
    per_run = calls.groupby(["run_id", "tool_name"]).n_calls.sum().div(tasks_per_run, level="run_id").rename("calls")
    per_task = per_run.reset_index().pivot_table(index="run_id", columns="tool_name", values="calls", fill_value=0.0)
    per_task = per_task.reindex([r for r in run_ids if r in per_task.index]).rename(index=names)
    st.plotly_chart(calls_heatmap_figure(per_task, f"Calls per task, run × tool ({label})"), key="bias-heat")


def _drift(path, stamp, runs) -> None:
    trains = runs[runs.kind == "train"]
    if not trains.empty:
        st.subheader("Tool-share drift over training")
        train_id = st.selectbox("Training run", list(trains.run_id), key="drift-run")
        metrics = data.train_metrics(path, stamp, train_id)
        if any(c.startswith("tools/share/") for c in metrics.columns):
            st.plotly_chart(tool_share_drift_figure(metrics, data.palette(path, stamp)[1]), key="drift")


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
