"""Runs: every run of the store in one filterable table, refreshing while a run is written."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data
from app.navigation import PAGES, page
from app.widgets import SIMULATED_NOTE, run_page, store_or_stop

COLUMNS = ["run_id", "kind", "status", "benchmark", "orchestrator", "toolkit", "pricing", "preference", "max_turns",
           "trajectories", "accuracy", "accuracy_ci", "accuracy_exact", "accuracy_judge", "cost_usd", "judge_cost_usd",
           "latency_s", "errors", "unjudged", "simulated", "started_at"]
LINKS = ("rollouts", "steering", "tools", "pareto", "compare", "training")


def render() -> None:
    st.title("Runs")
    _table()


@st.fragment(run_every=3)
def _table() -> None:
    """Re-read every few seconds: the cache is keyed on the file's mtime, so an idle store costs nothing."""
    path, stamp, runs = store_or_stop()
    left, middle, right = st.columns(3)
    kinds = left.multiselect("Kind", sorted(runs.kind.unique()), key="f-kind")
    benchmarks = middle.multiselect("Benchmark", sorted(runs.benchmark.dropna().unique()), key="f-bench")
    text = right.text_input("Search (run id, orchestrator, toolkit)", key="f-text")
    shown = runs
    if kinds:
        shown = shown[shown.kind.isin(kinds)]
    if benchmarks:
        shown = shown[shown.benchmark.isin(benchmarks)]
    if text:
        hay = (shown.run_id + " " + shown.orchestrator.fillna("") + " " + shown.toolkit.fillna("")).str.lower()
        shown = shown[hay.str.contains(text.lower(), regex=False)]
    shown = shown.assign(accuracy_ci=_intervals(path, stamp, list(shown[shown.kind == "eval"].run_id)).reindex(
        shown.run_id).to_numpy())
    if runs.status.eq("running").any():
        st.caption("A run is being written; this table refreshes every 3 s.")
    event = st.dataframe(shown[COLUMNS], hide_index=True, on_select="rerun", selection_mode="single-row",
                         key="runs-table", column_config={"accuracy": st.column_config.NumberColumn(format="%.3f"),
                                        "accuracy_exact": st.column_config.NumberColumn("acc. exact", format="%.3f"),
                                        "accuracy_judge": st.column_config.NumberColumn(
                                            "acc. judge", format="%.3f",
                                            help="With --judge: exact match first, then the judge model"),
                                        "cost_usd": st.column_config.NumberColumn("cost ($)", format="%.4f"),
                                        "judge_cost_usd": st.column_config.NumberColumn(
                                            "judge ($)", format="%.4f",
                                            help="The judge model's calls; never part of cost"),
                                        "latency_s": st.column_config.NumberColumn("latency (s)", format="%.2f"),
                                        "simulated": st.column_config.CheckboxColumn(help=SIMULATED_NOTE)})
    rows = event.selection.rows if event is not None else []
    if rows:
        run_id = shown.iloc[rows[0]].run_id
        st.write(f"**{run_id}**: open in")
        link_row(run_id)


def link_row(run_id: str) -> None:
    """One link per page, each opening this run there."""
    for column, path in zip(st.columns(len(LINKS)), LINKS):
        column.page_link(page(path), label=PAGES[path], query_params={"run": run_id, "runs": run_id})


def _intervals(path, stamp, run_ids: list[str]) -> pd.Series:
    """Accuracy's bootstrap interval over tasks per eval run, as text (the report's `accuracy_table`)."""
    if not run_ids:
        return pd.Series(dtype=object)
    accuracy = data.accuracy(path, stamp, tuple(run_ids)).set_index("run_id")
    return accuracy.apply(lambda r: f"[{r.ci_low:.2f}, {r.ci_high:.2f}]", axis=1)


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
