"""Compare: runs on their shared tasks: accuracy with intervals, cost and latency per task, paired differences
(each called significant or not), and for the two runs a user picks, per-task wins and losses (filterable,
each row opening both rollouts side by side) and tool-share differences."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data
from app.navigation import page
from app.widgets import pick_runs, run_label, run_page, simulated_badge, store_or_stop
from lab.report.figures import accuracy_figure
from lab.report.html import display_names
from lab.report.metrics import shared_tasks, with_verdicts


def render() -> None:
    st.title("Compare runs")
    path, stamp, runs = store_or_stop()
    run_ids = pick_runs(runs, default=2)
    if len(run_ids) < 2:
        st.info("Choose two or more evaluation runs.")
        return
    simulated_badge(runs, run_ids)
    key = tuple(run_ids)
    names = display_names(runs)
    accuracy = data.accuracy(path, stamp, key)
    st.plotly_chart(accuracy_figure(accuracy.assign(run_id=accuracy.run_id.map(names)),
                                    colors={names[r]: c for r, c in data.palette(path, stamp)[0].items()}),
                    key="accuracy")
    st.dataframe(accuracy_and_costs(accuracy, data.costs(path, stamp, key), names), hide_index=True, key="acc-table")
    st.subheader("Paired differences (shared tasks)")
    st.dataframe(with_verdicts(data.paired(path, stamp, key), names), hide_index=True, key="paired")
    st.caption("diff = accuracy of A − accuracy of B on the tasks both ran; 95% paired bootstrap CI over tasks. "
               "\"not significant\": the CI includes 0.")
    labels = {r.run_id: run_label(r) for r in runs.itertuples()}
    left, right = st.columns(2)
    run_a = left.selectbox("A", run_ids, index=0, format_func=labels.get, key="compare-a")
    run_b = right.selectbox("B", [r for r in run_ids if r != run_a], index=0, format_func=labels.get, key="compare-b")
    trajs = data.trajectories(path, stamp, key)
    wins = task_outcomes(trajs, run_a, run_b)
    st.subheader(f"Per task: {names[run_a]} (A) against {names[run_b]} (B)")
    st.caption(f"{(wins.result == 'win').sum()} wins, {(wins.result == 'loss').sum()} losses, "
               f"{(wins.result == 'tie').sum()} ties for A on {len(wins)} shared tasks. Pick a row to open both "
               "rollouts side by side.")
    shown = st.segmented_control("Show", ["all", "win", "loss", "tie"], default="all", key="compare-filter")
    if shown and shown != "all":
        wins = wins[wins.result == shown]
    event = st.dataframe(wins, hide_index=True, on_select="rerun", selection_mode="single-row", key="wins")
    if event is not None and event.selection.rows:
        task = wins.iloc[event.selection.rows[0]].task_id
        st.page_link(page("rollouts"), label=f"Open {task}: {names[run_a]} and {names[run_b]} side by side",
                     query_params={"run": run_a, "run2": run_b, "task": task})
    st.subheader("Tool-share differences")
    st.dataframe(share_differences(data.tool_tables(path, stamp, key)[0], run_a, run_b, names), key="share-diff")


def accuracy_and_costs(accuracy: pd.DataFrame, costs: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """One row per run: accuracy with its CI and n, cents and seconds per task (no columns left over from the join)."""
    table = accuracy.merge(costs.drop(columns="n_tasks"), on="run_id")
    table.insert(0, "run", table.run_id.map(names))
    return table


def share_differences(tools: pd.DataFrame, run_a: str, run_b: str, names: dict[str, str]) -> pd.DataFrame:
    """Each tool's share of the calls in A and in B, and A − B, in columns ordered A | B | A − B."""
    shares = tools.pivot_table(index="tool_label", columns="run_id", values="share", fill_value=0.0)
    shares = shares.reindex(columns=[run_a, run_b], fill_value=0.0)
    out = pd.DataFrame({f"A: {names[run_a]}": shares[run_a], f"B: {names[run_b]}": shares[run_b],
                        "A − B": shares[run_a] - shares[run_b]})
    return out.rename_axis("tool")


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
