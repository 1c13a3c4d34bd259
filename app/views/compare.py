"""Compare: two or more runs on their shared tasks: accuracy with intervals, paired differences,
per-task wins and losses, cost and latency deltas, tool-share differences."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data
from app.navigation import page
from app.widgets import pick_runs, run_page, simulated_badge, store_or_stop
from lab.report.figures import accuracy_figure
from lab.report.metrics import shared_tasks


def render() -> None:
    st.title("Compare runs")
    path, stamp, runs = store_or_stop()
    run_ids = pick_runs(runs, default=2)
    if len(run_ids) < 2:
        st.info("Choose two or more evaluation runs.")
        return
    simulated_badge(runs, run_ids)
    key = tuple(run_ids)
    accuracy = data.accuracy(path, stamp, key)
    st.plotly_chart(accuracy_figure(accuracy), key="accuracy")
    st.dataframe(accuracy.merge(data.costs(path, stamp, key), on="run_id"), hide_index=True, key="acc-table")
    st.subheader("Paired differences (shared tasks)")
    st.dataframe(data.paired(path, stamp, key), hide_index=True, key="paired")
    trajs = data.trajectories(path, stamp, tuple(run_ids))
    wins = task_outcomes(trajs, run_ids[0], run_ids[1])
    st.subheader(f"Per task: {run_ids[0]} against {run_ids[1]}")
    st.caption(f"{(wins.result == 'win').sum()} wins, {(wins.result == 'loss').sum()} losses, "
               f"{(wins.result == 'tie').sum()} ties on {len(wins)} shared tasks")
    event = st.dataframe(wins, hide_index=True, on_select="rerun", selection_mode="single-row", key="wins")
    if event is not None and event.selection.rows:
        task = wins.iloc[event.selection.rows[0]].task_id
        for column, run_id in zip(st.columns(2), run_ids[:2]):
            column.page_link(page("rollouts"), label=f"{task} in {run_id}", query_params={"run": run_id, "task": task})
    shares = data.tool_tables(path, stamp, key)[0].pivot_table(index="tool_label", columns="run_id",
                                                               values="share", fill_value=0.0)
    if set(run_ids[:2]) <= set(shares.columns):
        shares["difference"] = shares[run_ids[0]] - shares[run_ids[1]]
    st.subheader("Tool-share differences")
    st.dataframe(shares, key="share-diff")


def task_outcomes(trajs: pd.DataFrame, run_a: str, run_b: str) -> pd.DataFrame:
    """Per shared task: each run's accuracy, cost and latency, the deltas, and win / loss / tie for A."""
    tasks = shared_tasks(trajs, [run_a, run_b])
    rows = trajs[trajs.task_id.isin(tasks)]
    means = rows.groupby(["run_id", "task_id"]).agg(accuracy=("outcome", "mean"), cost_usd=("cost_usd", "mean"),
                                                     latency_s=("latency_s", "mean"))
    a, b = means.loc[run_a], means.loc[run_b]
    out = pd.DataFrame({"task_id": a.index, "accuracy_a": a.accuracy.values,
                        "accuracy_b": b.accuracy.reindex(a.index).values,
                        "cost_delta_usd": (a.cost_usd - b.cost_usd.reindex(a.index)).values,
                        "latency_delta_s": (a.latency_s - b.latency_s.reindex(a.index)).values})
    out["result"] = ["win" if x > y else "loss" if x < y else "tie" for x, y in zip(out.accuracy_a, out.accuracy_b)]
    return out


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
