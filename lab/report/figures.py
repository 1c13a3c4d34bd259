"""Plotly figure builders for run reports, shared by the CLI (`--html`), notebooks and the app.

Each builder takes the DataFrames of `lab.report.metrics` and returns a `plotly.graph_objects.Figure`;
none prints, writes or calls streamlit. A run keeps one colour in every figure (`run_colors`), axes
carry units, and simulated tools are labelled " (simulated)" in legends.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from lab.report.metrics import PRIVILEGED

if TYPE_CHECKING:
    from lab.report.api import Report

#: Colours cycle through this palette in the order runs are given.
PALETTE = qualitative.Plotly
TEMPLATE = "plotly_white"


def run_colors(run_ids: Sequence[str]) -> dict[str, str]:
    """One colour per run, fixed by position, so a run looks the same in every figure of a report."""
    return {run_id: PALETTE[i % len(PALETTE)] for i, run_id in enumerate(run_ids)}


def accuracy_figure(accuracy: pd.DataFrame, colors: dict[str, str] | None = None) -> go.Figure:
    """Accuracy per run as bars with asymmetric 95% bootstrap error bars."""
    colors = colors or run_colors(accuracy.run_id)
    fig = go.Figure(go.Bar(
        x=accuracy.run_id, y=accuracy.accuracy, name="accuracy",
        marker_color=[colors.get(r) for r in accuracy.run_id],
        error_y=dict(type="data", symmetric=False, array=accuracy.ci_high - accuracy.accuracy,
                     arrayminus=accuracy.accuracy - accuracy.ci_low),
        hovertemplate="%{x}<br>accuracy %{y:.3f}<extra></extra>",
    ))
    return _layout(fig, "Accuracy per run (95% bootstrap CI over tasks)", "run", "accuracy (fraction of tasks solved)",
                   yaxis_range=[0, 1.05])


def cost_accuracy_figure(pareto: pd.DataFrame, colors: dict[str, str] | None = None,
                         names: dict[str, str] | None = None) -> go.Figure:
    """Mean cost per task against accuracy, one marker per run, with the Pareto frontier as a step line.
    `names` relabels runs in the legend (e.g. the oracle as a privileged upper bound); each marker's
    `customdata` is its run id, so a click in the app knows which run it was."""
    colors = colors or run_colors(pareto.run_id)
    names = names or {}
    fig = go.Figure()
    for row in pareto.itertuples():
        name = names.get(row.run_id, row.run_id)
        fig.add_trace(go.Scatter(
            x=[row.cost_cents_per_task], y=[row.accuracy], mode="markers", name=name, customdata=[row.run_id],
            marker=dict(color=colors.get(row.run_id), size=12, symbol="circle" if row.on_frontier else "circle-open"),
            hovertemplate=f"{name}<br>%{{x:.3f}} ¢/task<br>accuracy %{{y:.3f}}<extra></extra>",
        ))
    frontier = pareto[pareto.on_frontier].sort_values("cost_cents_per_task")
    if len(frontier):
        # "hv": accuracy holds until the next frontier run becomes affordable (the AUC's step function).
        fig.add_trace(go.Scatter(x=frontier.cost_cents_per_task, y=frontier.accuracy, mode="lines",
                                 line=dict(shape="hv", color="black", dash="dot"), name="Pareto frontier"))
    fig = _layout(fig, "Cost vs accuracy (filled: on the Pareto frontier)", "mean cost per task (US cents, log scale)",
                  "accuracy (fraction of tasks solved)")
    if (pareto.cost_cents_per_task > 0).all():
        fig.update_xaxes(type="log")
    return fig


def tool_share_figure(tool_calls: pd.DataFrame, run_ids: Sequence[str] | None = None) -> go.Figure:
    """Share of each run's tool calls per tool, stacked to 1 (paper Fig. 4); one trace per tool."""
    run_ids = list(run_ids) if run_ids is not None else list(dict.fromkeys(tool_calls.run_id))
    fig = go.Figure()
    for label, group in tool_calls.groupby("tool_label", sort=False):
        shares = group.set_index("run_id").share.reindex(run_ids).fillna(0.0)
        fig.add_trace(go.Bar(x=run_ids, y=shares, name=label,
                             hovertemplate=f"{label}<br>%{{x}}<br>share %{{y:.1%}}<extra></extra>"))
    fig = _layout(fig, "Tool-call shares per run", "run", "share of tool calls", yaxis_range=[0, 1])
    fig.update_layout(barmode="stack", yaxis_tickformat=".0%")
    return fig


def turn_budget_figure(turn_budgets: pd.DataFrame) -> go.Figure:
    """Accuracy (left) and mean cost per task (right) against the turn budget, one line per curve (Fig. 6)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("accuracy", "cost"))
    for i, (curve, group) in enumerate(turn_budgets.groupby("curve", sort=False)):
        color = PALETTE[i % len(PALETTE)]
        fig.add_trace(go.Scatter(
            x=group.max_turns, y=group.accuracy, mode="lines+markers", name=curve, legendgroup=curve,
            line=dict(color=color), error_y=dict(type="data", symmetric=False, array=group.ci_high - group.accuracy,
                                                 arrayminus=group.accuracy - group.ci_low)), row=1, col=1)
        fig.add_trace(go.Scatter(x=group.max_turns, y=group.cost_cents_per_task, mode="lines+markers", name=curve,
                                 legendgroup=curve, showlegend=False, line=dict(color=color)), row=1, col=2)
    fig.update_xaxes(title_text="max turns per task")
    fig.update_yaxes(title_text="accuracy (fraction of tasks solved)", row=1, col=1)
    fig.update_yaxes(title_text="mean cost per task (US cents)", row=1, col=2)
    fig.update_layout(title="Turn budget: accuracy and cost vs max turns", template=TEMPLATE)
    return fig


def pgr_figure(router: pd.DataFrame, colors: dict[str, str] | None = None) -> go.Figure:
    """Performance gap recovered against the share of model calls sent to the strongest model."""
    colors = colors or run_colors(router.run_id)
    fig = go.Figure()
    for row in router.itertuples():
        fig.add_trace(go.Scatter(x=[row.strongest_share], y=[row.pgr], mode="markers", name=row.run_id,
                                 marker=dict(color=colors.get(row.run_id), size=12)))
    weak, strong = (router.weak_run.iloc[0], router.strong_run.iloc[0]) if len(router) else ("?", "?")
    fig = _layout(fig, f"Performance gap recovered (weak: {weak}, strong: {strong})",
                  "share of model calls to the strongest model", "PGR (0 = weak run, 1 = strong run)")
    fig.update_xaxes(range=[-0.05, 1.05], tickformat=".0%")
    return fig


def report_figures(report: "Report") -> dict[str, go.Figure]:
    """Every figure of a report by name; the turn-budget figure only when some runs form a curve."""
    colors = run_colors(report.run_ids)
    orchestrators = report.runs.set_index("run_id").orchestrator
    names = {r: f"{r} ({PRIVILEGED[o]})" for r, o in orchestrators.items() if o in PRIVILEGED}
    figures = {
        "accuracy": accuracy_figure(report.accuracy, colors),
        "cost_accuracy": cost_accuracy_figure(report.pareto, colors, names),
        "tool_shares": tool_share_figure(report.tool_calls, report.run_ids),
        "pgr": pgr_figure(report.router, colors),
    }
    if not report.turn_budgets.empty:
        figures["turn_budgets"] = turn_budget_figure(report.turn_budgets)
    return figures


def figures_html(figures: dict[str, go.Figure], title: str = "Orchestra Lab report") -> str:
    """One standalone HTML page: plotly.js is inlined once (with the first figure), so it opens offline."""
    parts = [fig.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, fig in enumerate(figures.values())]
    body = "\n".join(f'<section id="{name}">{part}</section>' for name, part in zip(figures, parts))
    return f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>\n<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n'


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, **extra) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, template=TEMPLATE, **extra)
    return fig
