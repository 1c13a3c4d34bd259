"""Runs: every run of the store in one filterable table, refreshing while a run is written.

The first view answers "how did the systems do?": the demo's compared systems first, in the demo's order,
each with accuracy, its 95% CI, cents and seconds per task beside its name; then sweeps (an orchestrator
evaluated under several preferences or budgets) grouped under that orchestrator; then training runs.
Playground rollouts are runs of their own kind, listed only when asked for.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data
from app.navigation import PAGES, page
from app.widgets import SIMULATED_NOTE, run_page, store_or_stop, story_runs
from lab.report.metrics import ci_text

COLUMNS = ["group", "name", "accuracy", "accuracy_ci", "cents_per_task", "seconds_per_task", "trajectories", "kind",
           "status", "orchestrator", "preference", "max_turns", "toolkit", "pricing", "benchmark", "accuracy_exact",
           "accuracy_judge", "errors", "unjudged", "judge_cost_usd", "simulated", "privileged", "run_id", "started_at"]
LINKS = ("rollouts", "steering", "tools", "pareto", "compare", "training")
#: Kinds listed unless the user picks kinds: playground rollouts are not evaluations.
DEFAULT_KINDS = ("eval", "train", "synth")
COMPARED = "1 · compared systems"


def render() -> None:
    st.title("Runs")
    _table()


@st.fragment(run_every=3)
def _table() -> None:
    """Re-read every few seconds: the cache is keyed on the file's mtime, so an idle store costs nothing."""
    path, stamp, runs = store_or_stop()
    left, middle, right = st.columns(3)
    kinds = left.multiselect("Kind", sorted(runs.kind.unique()), key="f-kind",
                             help="Without a choice: evaluations, training and synthesis (playground rollouts "
                                  "are listed when picked here).")
    benchmarks = middle.multiselect("Benchmark", sorted(runs.benchmark.dropna().unique()), key="f-bench")
    text = right.text_input("Search (name, run id, orchestrator, toolkit)", key="f-text")
    shown = runs[runs.kind.isin(kinds or DEFAULT_KINDS)]
    if benchmarks:
        shown = shown[shown.benchmark.isin(benchmarks)]
    if text:
        hay = (shown.name.fillna("") + " " + shown.run_id + " " + shown.orchestrator.fillna("") + " "
               + shown.toolkit.fillna("")).str.lower()
        shown = shown[hay.str.contains(text.lower(), regex=False)]
    evals = tuple(shown[shown.kind == "eval"].run_id)
    shown = ordered(with_per_task(shown, data.accuracy(path, stamp, evals) if evals else None,
                                  data.costs(path, stamp, evals) if evals else None), story_runs(runs))
    if runs.status.eq("running").any():
        st.caption("A run is being written; this table refreshes every 3 s.")
    event = st.dataframe(shown[COLUMNS], hide_index=True, on_select="rerun", selection_mode="single-row",
                         key="runs-table", column_config={
                             "group": st.column_config.TextColumn(help="Compared systems first, then sweeps of one "
                                                                       "orchestrator, other evaluations, training"),
                             "accuracy": st.column_config.NumberColumn(format="%.3f"),
                             "accuracy_ci": st.column_config.TextColumn("95% CI", help="Bootstrap over tasks"),
                             "cents_per_task": st.column_config.NumberColumn("¢/task", format="%.3f"),
                             "seconds_per_task": st.column_config.NumberColumn("s/task", format="%.1f"),
                             "accuracy_exact": st.column_config.NumberColumn("acc. exact", format="%.3f"),
                             "accuracy_judge": st.column_config.NumberColumn(
                                 "acc. judge", format="%.3f", help="With --judge: exact match first, then the judge"),
                             "judge_cost_usd": st.column_config.NumberColumn(
                                 "judge ($)", format="%.4f", help="The judge model's calls; never part of cost"),
                             "simulated": st.column_config.CheckboxColumn(help=SIMULATED_NOTE),
                             "privileged": st.column_config.CheckboxColumn(help="Reads the grader: an upper bound, "
                                                                                "not a system one could deploy")})
    rows = event.selection.rows if event is not None else []
    if rows:
        run_id = shown.iloc[rows[0]].run_id
        st.write(f"**{run_id}**: open in")
        link_row(run_id)


def with_per_task(runs: pd.DataFrame, accuracy: pd.DataFrame | None, costs: pd.DataFrame | None) -> pd.DataFrame:
    """The runs with accuracy's 95% CI as text and cents and seconds per task (evaluations; else empty)."""
    out = runs.assign(accuracy_ci="", cents_per_task=float("nan"), seconds_per_task=float("nan"))
    if accuracy is not None and len(accuracy):
        intervals = {r.run_id: ci_text(r.ci_low, r.ci_high) for r in accuracy.itertuples()}
        out["accuracy_ci"] = out.run_id.map(intervals).fillna("")
    if costs is not None and len(costs):
        per_task = costs.set_index("run_id")
        out["cents_per_task"] = out.run_id.map(per_task.cost_cents_per_task)
        out["seconds_per_task"] = out.run_id.map(per_task.latency_s_per_task)
    return out


def ordered(runs: pd.DataFrame, compared: list[str]) -> pd.DataFrame:
    """Compared systems first (in `compared`'s order), then each sweep (an orchestrator with several other
    evaluations) together, then other evaluations, training and the rest, newest first within a group."""
    evals = runs[(runs.kind == "eval") & ~runs.run_id.isin(compared)]
    swept = evals.groupby("orchestrator").run_id.count()
    swept = set(swept[swept >= 2].index)

    def group(row) -> str:
        if row.run_id in compared:
            return COMPARED
        if row.kind == "eval":
            return f"2 · sweep of {row.orchestrator}" if row.orchestrator in swept else "3 · other evaluations"
        return {"train": "4 · training"}.get(row.kind, f"5 · {row.kind}")

    rank = {run_id: i for i, run_id in enumerate(compared)}
    out = runs.assign(group=[group(r) for r in runs.itertuples()],
                      _rank=runs.run_id.map(rank).fillna(len(rank)),
                      _newest=-pd.to_datetime(runs.started_at).astype("int64"))
    return out.sort_values(["group", "_rank", "_newest", "run_id"]).drop(columns=["_rank", "_newest"])


def link_row(run_id: str) -> None:
    """One link per page, each opening this run there."""
    for column, path in zip(st.columns(len(LINKS)), LINKS):
        column.page_link(page(path), label=PAGES[path], query_params={"run": run_id, "runs": run_id})


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
