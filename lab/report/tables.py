"""Run summary tables printed by `orchestra eval` and `orchestra report`."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from lab.report.metrics import orchestrator_label, tool_label
from lab.store import Store, queries


def run_summaries(store: Store, run_ids: Sequence[str]) -> pd.DataFrame:
    """One row per run: finished trajectories, errors, cut ones, mean outcome, accuracy by exact match and
    by judge, cost (the judge's apart) and latency, status."""
    df = queries.runs_summary_df(store)
    df = df[df.run_id.isin(list(run_ids))].set_index("run_id").reindex(list(run_ids)).reset_index()
    return df[["run_id", "orchestrator", "benchmark", "status", "trajectories", "errors", "cut", "accuracy",
               "accuracy_exact", "accuracy_judge", "cost_usd", "judge_cost_usd", "latency_s", "unjudged"]]


def print_run_summaries(table: pd.DataFrame, summaries: Sequence[Any], console: Console) -> None:
    """The `orchestra eval` table: accuracy (the outcome: the judge's when there is one) beside accuracy by
    exact match and by judge, and the judge's cost in a column of its own, never in the rollouts' cost."""
    out = Table(title="evaluation")
    for column, justify in (("run_id", "left"), ("orchestrator", "left"), ("status", "left"), ("trajectories", "right"),
                            ("new", "right"), ("errors", "right"), ("accuracy", "right"), ("acc. exact", "right"),
                            ("acc. judge", "right"), ("cost $/rollout", "right"), ("judge $/rollout", "right"),
                            ("latency s/rollout", "right")):
        out.add_column(column, justify=justify)
    for row, summary in zip(table.itertuples(), summaries):
        n = int(row.trajectories or 0)
        out.add_row(
            row.run_id, orchestrator_label(str(row.orchestrator)), str(row.status), str(n), str(summary.trajectories),
            str(int(row.errors or 0)), _num(row.accuracy, "{:.3f}"), _num(row.accuracy_exact, "{:.3f}"),
            _num(row.accuracy_judge, "{:.3f}"), "-" if not n else f"{row.cost_usd / n:.5f}",
            "-" if not (n and summary.judge) else f"{row.judge_cost_usd / n:.5f}",
            "-" if pd.isna(row.latency_s) else f"{row.latency_s:.1f}",
        )
    console.print(out)
    for summary in summaries:
        if summary.judge:
            console.print(f"{summary.run_id}: judged by {summary.judge}: exact match first, then the judge (the "
                          "accuracy column follows it); the judge's cost is apart from the rollouts' cost")
    for row in table.itertuples():
        if row.unjudged:
            console.print(f"[yellow]{row.run_id}: {int(row.unjudged)} of {int(row.trajectories)} rollouts have "
                          "criteria nobody judged (null in criteria_json, e.g. NL assertions without --judge); their "
                          "outcome counts the judged criteria only[/]")
    for summary in summaries:
        if summary.unavailable:
            console.print(f"[red]{summary.run_id}: {summary.unavailable} rollouts not run (endpoint unavailable); "
                          "not stored, re-run the same command to retry them[/]")
        if summary.judge_failed:
            console.print(f"[red]{summary.run_id}: {summary.judge_failed} rollouts got no verdict from the judge "
                          "(unreachable, failed, or not exactly one verdict tag); not stored, not counted as wrong: "
                          "re-run the same command to retry them[/]")
        if summary.failed:
            console.print(f"[red]{summary.run_id}: {summary.failed} rollouts failed with an error; stored with it "
                          "(status 'error', counted as wrong)[/]")
        for error in summary.errors:
            console.print(f"  {error}")
        for line in summary.failed_endpoints:
            console.print(f"[red]{summary.run_id}: failed: {line}[/]", soft_wrap=True)
        if summary.cut:
            console.print(f"[yellow]{summary.run_id}: {summary.cut} rollouts cut by --budget-usd (stored as 'cut', not "
                          "as wrong answers); re-run with a larger --budget-usd to finish them[/]")
        elif summary.stopped_by_budget:
            console.print(f"[yellow]{summary.run_id}: stopped before the budget cap; re-run with a larger "
                          "--budget-usd to finish[/]")


# ---------------------------------------------------------------- `orchestra report`


def print_report(report: Any, console: Console) -> None:
    """Every table of a `lab.report.api.Report`, in the order a reader asks: how good, how costly,
    how different, how it routed, and at what preference, frontier and price."""
    name = run_labels(report.run_ids)  # short names in tables; the full ids are listed at the end
    acc, costs = report.accuracy.set_index("run_id"), report.costs.set_index("run_id")
    pref = report.preference.set_index("run_id")
    out = _table("runs: accuracy (95% bootstrap CI over tasks), cost and latency",
                 "run", "orchestrator", "tasks", "errors", "accuracy", "95% CI", "acc. exact", "acc. judge",
                 "cost ¢/task", "judge ¢/task", "latency s/task", "total $", "pref. score")
    runs = report.runs.set_index("run_id")
    for run_id in report.run_ids:
        a, c = acc.loc[run_id], costs.loc[run_id]
        judged = isinstance(runs.judge.get(run_id), str)
        out.add_row(name[run_id], orchestrator_label(str(runs.orchestrator.get(run_id, ""))), str(int(a.n_tasks)),
                    str(int(a.n_errors)), _num(a.accuracy, "{:.3f}"),
                    f"[{_num(a.ci_low, '{:.3f}')}, {_num(a.ci_high, '{:.3f}')}]", _num(a.accuracy_exact, "{:.3f}"),
                    _num(a.accuracy_judge, "{:.3f}"), _num(c.cost_cents_per_task, "{:.3f}"),
                    _num(c.judge_cents_per_task, "{:.3f}") if judged else "-",
                    _num(c.latency_s_per_task, "{:.1f}"), _num(c.total_cost_usd, "{:.4f}"),
                    _num(pref.preference_score.get(run_id), "{:.3f}"))
    console.print(out)
    for run_id in report.run_ids:
        if isinstance(runs.judge.get(run_id), str):
            console.print(f"{name[run_id]}: judged by {runs.judge[run_id]} (exact match first, then the judge; "
                          "accuracy follows it); its cost is the judge ¢/task column, never part "
                          "of cost ¢/task or total $")
    console.print(f"preference score P = {report.settings.get('preference')} "
                  f"({report.settings.get('preference_source')}), on "
                  f"{int(report.preference.n_tasks.max()) if len(report.preference) else 0} shared tasks")
    if len(report.paired):
        out = _table("paired comparisons on shared tasks (diff = acc A - acc B)",
                     "run A", "run B", "shared", "diff", "95% CI", "p (sign-flip)", "A only / B only", "p (McNemar)")
        for row in report.paired.itertuples():
            discordant = "-" if pd.isna(row.a_only) else f"{int(row.a_only)} / {int(row.b_only)}"
            out.add_row(name.get(row.run_a, row.run_a), name.get(row.run_b, row.run_b), str(int(row.n_shared)),
                        _num(row.diff, "{:+.3f}"), f"[{_num(row.ci_low, '{:+.3f}')}, {_num(row.ci_high, '{:+.3f}')}]",
                        _num(row.p_value, "{:.4f}"),
                        discordant, _num(row.mcnemar_p, "{:.4f}"))
        console.print(out)
    if len(report.tool_calls):
        out = _table("tool calls per task (share of the run's calls)", "tool", *(name[r] for r in report.run_ids))
        calls = report.tool_calls.set_index(["tool_label", "run_id"])
        for label in dict.fromkeys(report.tool_calls.sort_values("tool_name").tool_label):
            cells = []
            for run_id in report.run_ids:
                hit = (label, run_id) in calls.index
                cells.append(f"{calls.loc[(label, run_id), 'calls_per_task']:.2f} "
                             f"({calls.loc[(label, run_id), 'share']:.0%})" if hit else "-")
            out.add_row(label, *cells)
        console.print(out)
    out = _table("delegation and routing", "run", "model calls", "strongest", "to strongest", "own family",
                 "to own family", "PGR")
    router = report.router.set_index("run_id")
    for row in report.bias.itertuples():
        strongest = ", ".join(tool_label(t) for t in row.strongest.split(", ")) if row.strongest else "-"
        out.add_row(name.get(row.run_id, row.run_id), str(row.model_calls), strongest,
                    _num(row.strongest_share, "{:.1%}"),
                    "-" if pd.isna(row.orchestrator_family) else row.orchestrator_family,
                    _num(row.own_family_share, "{:.1%}"), _num(router.pgr.get(row.run_id), "{:.2f}"))
    console.print(out)
    if len(report.router):
        weak, strong = report.router.weak_run.iloc[0], report.router.strong_run.iloc[0]
        console.print(f"PGR references: weak {name.get(weak, weak)}, strong {name.get(strong, strong)}")
    frontier = report.pareto[report.pareto.on_frontier].sort_values("cost_cents_per_task")
    auc = report.pareto_auc.iloc[0]
    console.print("Pareto frontier (cost ¢/task, accuracy): "
                  + ", ".join(f"{name.get(r.run_id, r.run_id)} ({r.cost_cents_per_task:.3f}, {r.accuracy:.3f})"
                              for r in frontier.itertuples())
                  + f"; area under it over log10 cost {_num(auc.cost_min_cents, '{:.3g}')}-"
                  f"{_num(auc.cost_max_cents, '{:.3g}')}¢: {_num(auc.auc, '{:.3f}')}")
    if len(report.turn_budgets):
        out = _table("turn budgets", "curve", "max turns", "run", "accuracy", "cost ¢/task")
        for row in report.turn_budgets.itertuples():
            out.add_row(row.curve, str(row.max_turns), name.get(row.run_id, row.run_id), _num(row.accuracy, "{:.3f}"),
                        _num(row.cost_cents_per_task, "{:.3f}"))
        console.print(out)
    if len(report.reprice):
        out = _table(f"re-priced under '{report.settings.get('pricing')}'", "run", "logged ¢/task", "repriced ¢/task",
                     "logged $", "repriced $", "change")
        for row in report.reprice.itertuples():
            out.add_row(name.get(row.run_id, row.run_id), _num(row.logged_cents_per_task, "{:.3f}"),
                        _num(row.repriced_cents_per_task, "{:.3f}"), _num(row.logged_total_usd, "{:.4f}"),
                        _num(row.repriced_total_usd, "{:.4f}"), _num(row.change_pct, "{:+.1f}%"))
        console.print(out)
    if any(label != run_id for run_id, label in name.items()):
        console.print("run ids: " + "; ".join(f"{label} = {run_id}" for run_id, label in name.items()))


def run_labels(run_ids: list[str]) -> dict[str, str]:
    """Short display names: the run id without its 10-hex-digit config hash and without the prefix all
    runs share, when that keeps them distinct; else the ids themselves."""
    stems = [re.sub(r"-[0-9a-f]{10}$", "", r) for r in run_ids]
    prefix = os.path.commonprefix(stems) if len(stems) > 1 else ""
    prefix = prefix[: prefix.rfind("-") + 1] if "-" in prefix else ""
    labels = [stem[len(prefix):] or stem for stem in stems]
    return dict(zip(run_ids, labels if len(set(labels)) == len(labels) else run_ids))


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title)
    for i, column in enumerate(columns):
        left = i == 0 or column in ("run A", "run B", "orchestrator", "strongest", "own family", "curve")
        # Run ids fold rather than truncate: users paste them back into other commands.
        table.add_column(column, justify="left" if left else "right", overflow="fold")
    return table


def _num(value: Any, pattern: str) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    return pattern.format(value)
