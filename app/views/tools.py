"""Tool use: calls per tool per run (paper Fig. 5 / Table 15), delegation bias, tool-share drift in training."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from app import data
from app.widgets import pick_runs, run_page, simulated_badge, store_or_stop
from lab.report.figures import tool_share_figure


def render() -> None:
    st.title("Tool use")
    path, stamp, runs = store_or_stop()
    run_ids = pick_runs(runs)
    if run_ids:
        simulated_badge(runs, run_ids)
        report = data.report(path, stamp, tuple(run_ids))
        st.plotly_chart(tool_share_figure(report.tool_calls, run_ids), key="tool-shares")
        st.dataframe(report.tool_calls, hide_index=True, key="tool-table")
        calls = report.tool_calls.pivot_table(index="run_id", columns="tool_label", values="calls_per_task", fill_value=0)
        if not calls.empty:
            st.plotly_chart(px.imshow(calls, text_auto=".2f", aspect="auto",
                                      title="Calls per task: orchestrator run × tool (delegation)"), key="bias-heat")
        st.subheader("Delegation bias (paper Fig. 3)")
        st.dataframe(report.bias, hide_index=True, key="bias-table")
    trains = runs[runs.kind == "train"]
    if not trains.empty:
        st.subheader("Tool-share drift over training")
        train_id = st.selectbox("Training run", list(trains.run_id), key="drift-run")
        metrics = data.train_metrics(path, stamp, train_id)
        shares = [c for c in metrics.columns if c.startswith("tools/share/")]
        if shares:
            long = metrics.melt(id_vars="step", value_vars=shares, var_name="tool", value_name="share")
            long["tool"] = long.tool.str.removeprefix("tools/share/")
            st.plotly_chart(px.area(long, x="step", y="share", color="tool", title="Share of calls per tool by step"),
                            key="drift")


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
