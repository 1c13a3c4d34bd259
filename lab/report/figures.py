"""Plotly figure builders for run reports, shared by the CLI (`--html`), notebooks and the app.

Each builder takes the DataFrames of `lab.report.metrics` and returns a `plotly.graph_objects.Figure`;
none prints, writes or calls streamlit, and none knows the `Report` that holds the frames
(`lab.report.api.Report.figures` picks the builders for a report: data flows api -> figures only).
A run keeps one colour in every figure (`run_colors`), axes carry units, and simulated tools are
labelled " (simulated)" in legends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

#: Colours of instructions and curves, in the order given.
PALETTE = qualitative.Plotly
#: Colours of runs and tools: plotly's ten, then 48 more distinct ones before any repeats.
MANY_COLORS = list(dict.fromkeys([*qualitative.Plotly, *qualitative.Dark24, *qualitative.Light24]))
TEMPLATE = "plotly_white"


def run_colors(run_ids: Sequence[str]) -> dict[str, str]:
    """One colour per run, fixed by position, so a run looks the same in every figure of a report (the app
    passes every run of the store, oldest first, so a run keeps its colour on every page)."""
    return {run_id: MANY_COLORS[i % len(MANY_COLORS)] for i, run_id in enumerate(dict.fromkeys(run_ids))}


def tool_colors(tools: Sequence[str]) -> dict[str, str]:
    """One colour per tool (its feature name: `answer-1`, `local_search`), by its place in the sorted list,
    so a tool has one colour in every chart that is given the same list."""
    return {tool: MANY_COLORS[i % len(MANY_COLORS)] for i, tool in enumerate(sorted(set(tools)))}


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
    """Mean cost per task against accuracy, one labelled marker per run with its 95% CI (when `pareto` has
    `ci_low` / `ci_high`), and the Pareto frontier as a step line. `names` relabels runs (e.g. the oracle
    as a privileged upper bound); a run with `privileged` True is a diamond outside the frontier. Each
    marker's `customdata` is its run id, so a click in the app knows which run it was."""
    colors = colors or run_colors(pareto.run_id)
    names = names or {}
    fig = go.Figure()
    for row in pareto.itertuples():
        name = names.get(row.run_id, row.run_id)
        error = ({"error_y": dict(type="data", symmetric=False, array=[row.ci_high - row.accuracy],
                                  arrayminus=[row.accuracy - row.ci_low], thickness=1)}
                 if hasattr(row, "ci_low") and pd.notna(row.ci_low) else {})
        symbol = "diamond" if getattr(row, "privileged", False) else "circle" if row.on_frontier else "circle-open"
        fig.add_trace(go.Scatter(
            x=[row.cost_cents_per_task], y=[row.accuracy], mode="markers+text", name=name, customdata=[row.run_id],
            text=[name], textposition="top center", textfont={"size": 11},
            marker=dict(color=colors.get(row.run_id), size=12, symbol=symbol), **error,
            hovertemplate=f"{name}<br>%{{x:.3f}} ¢/task<br>accuracy %{{y:.3f}}<extra></extra>",
        ))
    frontier = pareto[pareto.on_frontier].sort_values("cost_cents_per_task")
    if len(frontier):
        # "hv": accuracy holds until the next frontier run becomes affordable (the AUC's step function).
        fig.add_trace(go.Scatter(x=frontier.cost_cents_per_task, y=frontier.accuracy, mode="lines",
                                 line=dict(shape="hv", color="black", dash="dot"), name="Pareto frontier"))
    log = bool((pareto.cost_cents_per_task > 0).all())  # a free run (a local model) has no place on a log axis
    fig = _layout(fig, "Cost vs accuracy (filled: on the Pareto frontier)",
                  f"mean cost per task (US cents{', log scale' if log else ''})", "accuracy (fraction of tasks solved)")
    if log:
        values, labels = log_ticks(pareto.cost_cents_per_task)
        fig.update_xaxes(type="log", tickvals=values, ticktext=labels)
    return fig


def log_ticks(values: Sequence[float]) -> tuple[list[float], list[str]]:
    """Ticks of a log axis over `values` at 1, 2 and 5 times each power of ten (plain numbers, no bare
    mantissas like plotly's "4 5 6 7 8 9 1 2"), thinned to 1 and 3 per decade over a wide range."""
    finite = [float(v) for v in values if v and v > 0 and math.isfinite(float(v))]
    if not finite:
        return [], []
    low, high = math.floor(math.log10(min(finite))), math.ceil(math.log10(max(finite)))
    steps = (1, 2, 5) if high - low <= 2 else (1, 3) if high - low <= 4 else (1,)
    ticks = [m * 10.0 ** e for e in range(low, high + 1) for m in steps]
    ticks = [t for t in ticks if min(finite) / 1.5 <= t <= max(finite) * 1.5] or [10.0 ** low]
    return ticks, [f"{t:g}" for t in ticks]


def tool_share_figure(tool_calls: pd.DataFrame, run_ids: Sequence[str] | None = None,
                      colors: dict[str, str] | None = None, names: dict[str, str] | None = None) -> go.Figure:
    """Share of each run's tool calls per tool, stacked to 1 (paper Fig. 4); one trace per tool, coloured by
    `colors` (tool name -> colour, `tool_colors`), runs shown by `names`."""
    fig = _stacked_tool_bars(tool_calls, run_ids, "share", "share %{y:.1%}", colors, names)
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


def calls_per_task_figure(tool_calls: pd.DataFrame, run_ids: Sequence[str] | None = None,
                          colors: dict[str, str] | None = None, names: dict[str, str] | None = None) -> go.Figure:
    """Calls per task of each tool, stacked per run (paper Fig. 5 / Table 15); `tool_calls` is
    `metrics.tool_call_table`."""
    fig = _stacked_tool_bars(tool_calls, run_ids, "calls_per_task", "%{y:.2f} calls per task", colors, names)
    fig = _layout(fig, "Calls per task per tool", "run", "calls per task")
    fig.update_layout(barmode="stack")
    return fig


def calls_heatmap_figure(calls_per_task: pd.DataFrame, title: str) -> go.Figure:
    """Run x tool heat map of calls per task (rows: runs or orchestrators, as the caller names them; columns:
    tools), the delegation picture of paper Fig. 3 split however the caller chose its tasks."""
    fig = go.Figure(go.Heatmap(z=calls_per_task.to_numpy(float), x=list(calls_per_task.columns),
                               y=list(calls_per_task.index), colorscale="Blues", texttemplate="%{z:.2f}",
                               hovertemplate="%{y}<br>%{x}: %{z:.2f} calls per task<extra></extra>"))
    return _layout(fig, title, "tool", "run")


def preference_score_figure(scores: pd.DataFrame) -> go.Figure:
    """The preference-aware score per run (paper Table 3), in the order given (best first)."""
    fig = go.Figure(go.Bar(x=scores.run_id, y=scores.preference_score,
                           hovertemplate="%{x}<br>score %{y:.3f}<extra></extra>"))
    return _layout(fig, "Preference score under P", "run", "preference score (mean Eq. 2 reward)")


def train_metrics_figure(metrics: pd.DataFrame, columns: Sequence[str], title: str) -> go.Figure:
    """Some `train_metrics` columns against the optimizer step, one line each."""
    fig = go.Figure()
    for column in columns:
        fig.add_trace(go.Scatter(x=metrics.step, y=metrics[column], mode="lines+markers", name=column))
    return _layout(fig, title, "optimizer step", "value")


def tool_share_drift_figure(metrics: pd.DataFrame, colors: dict[str, str] | None = None) -> go.Figure:
    """Each tool's share of the calls per training step, stacked to 1 (from `tools/share/<feature>`)."""
    fig = go.Figure()
    columns = sorted(c for c in metrics.columns if c.startswith("tools/share/"))
    colors = colors or tool_colors([c.removeprefix("tools/share/") for c in columns])
    for column in columns:
        tool = column.removeprefix("tools/share/")
        fig.add_trace(go.Scatter(x=metrics.step, y=metrics[column], mode="lines", stackgroup="shares", name=tool,
                                 line={"color": colors.get(tool)}))
    fig = _layout(fig, "Tool-share drift over training", "optimizer step", "share of calls")
    fig.update_layout(yaxis_tickformat=".0%")
    return fig


#: The learning curve's panels: column of `lab.report.metrics.curve.learning_curve`, axis title.
CURVE_PANELS = {"U": "utility U (95% CI)", "accuracy": "accuracy (share of n tasks solved, 95% CI)",
                "cost": "cost per task (¢)",
                "latency": "latency per task (s)"}
#: `train_metrics` columns of the teacher-forced probe (`trainer.probe`), plotted under the curve.
PROBE = "probe/best_call"


def learning_curve_figure(curve: pd.DataFrame, metrics: pd.DataFrame | None = None) -> go.Figure:
    """A training run's learning curve against the step, one colour per instruction: U with its 95%
    band over tasks, accuracy, cost and latency per task, each on its own axis (cost and latency are
    never on one), and, when `metrics` (`train_metrics_df`) carries `probe/best_call`, the probability
    of the known best call. `curve` is `lab.report.curve.learning_curve_df`'s frame (may be empty)."""
    probe = _probe(metrics)
    panels = [c for c in CURVE_PANELS if not curve.empty] + (["probe"] if probe is not None else [])
    titles = [CURVE_PANELS.get(p, "P(best call) on fixed round prompts") for p in panels] or ["no evaluation yet"]
    fig = make_subplots(rows=len(titles), cols=1, shared_xaxes=True, subplot_titles=titles,
                        vertical_spacing=0.12 / max(len(titles), 1) + 0.03)
    bands = {"U": ("ci_low", "ci_high"), "accuracy": ("accuracy_low", "accuracy_high")}
    for i, (instruction, points) in enumerate(curve.groupby("instruction", sort=False) if not curve.empty else []):
        color = PALETTE[i % len(PALETTE)]
        points = points.sort_values("step")
        for row, column in enumerate(CURVE_PANELS, start=1):
            low, high = bands.get(column, (None, None))
            if low in points and points[low].notna().all():
                band = pd.concat([points.step, points.step[::-1]]), pd.concat([points[high], points[low][::-1]])
                fig.add_trace(go.Scatter(x=band[0], y=band[1], mode="lines", fill="toself",
                                         fillcolor=_translucent(color, 0.15), line={"width": 0}, hoverinfo="skip",
                                         showlegend=False,
                                         legendgroup=instruction), row=row, col=1)
            interval = ("<br>95% CI [%{customdata[1]:.3f}, %{customdata[2]:.3f}]" if low in points else "")
            data = points[["n_tasks", low, high]] if low in points else points[["n_tasks"]]
            fig.add_trace(go.Scatter(x=points.step, y=points[column], mode="lines+markers", name=instruction,
                                     legendgroup=instruction, showlegend=row == 1, line={"color": color},
                                     customdata=data,
                                     hovertemplate=f"step %{{x}}<br>{column} %{{y:.3f}}{interval}<br>"
                                                   "n = %{customdata[0]} tasks<extra>%{fullData.name}</extra>"),
                          row=row, col=1)
    if not curve.empty:
        fig.update_yaxes(range=[0, 1.02], row=list(CURVE_PANELS).index("accuracy") + 1, col=1)
    if probe is not None:
        fig.add_trace(go.Scatter(x=probe.step, y=probe[PROBE], mode="lines+markers", name="P(best call)",
                                 line={"color": "black"}), row=len(titles), col=1)
        fig.update_yaxes(range=[0, 1], row=len(titles), col=1)
    fig.update_xaxes(title_text="optimizer step", row=len(titles), col=1)
    fig.update_layout(title="Learning curve: fixed tasks x instructions against the step", template=TEMPLATE,
                      height=260 * len(titles), legend={"title": "instruction"})
    return fig


def contrast_curve_figure(contrast: pd.DataFrame) -> go.Figure:
    """Instruction following against the step (`lab.report.curve.contrast_curve_df`): per pair of
    instructions, the policy's contrast minus the first evaluated step's, the paired log ratio of what it
    spends under the baseline instruction over the asking one (the first evaluated step standing for the
    start), with its 95% band over tasks, and a line at 0 (no change in how differently it acts on the
    two). Empty frame: an empty figure that says why."""
    fig = go.Figure()
    rows = contrast[contrast.measure.str.startswith("log ")] if not contrast.empty else contrast
    for i, (pair, points) in enumerate(rows.groupby("pair", sort=False) if not rows.empty else []):
        color, points = PALETTE[i % len(PALETTE)], points.sort_values("step")
        band = pd.concat([points.step, points.step[::-1]]), pd.concat([points.ci_high, points.ci_low[::-1]])
        fig.add_trace(go.Scatter(x=band[0], y=band[1], mode="lines", fill="toself", fillcolor=_translucent(color, 0.15),
                                 line={"width": 0}, hoverinfo="skip", showlegend=False, legendgroup=pair))
        fig.add_trace(go.Scatter(x=points.step, y=points.delta, mode="lines+markers", name=pair, legendgroup=pair,
                                 line={"color": color}, customdata=points[["ci_low", "ci_high", "trained", "n_tasks"]],
                                 hovertemplate="step %{x}<br>change %{y:+.3f} [%{customdata[0]:+.3f}, "
                                               "%{customdata[1]:+.3f}]<br>contrast %{customdata[2]:+.3f}<br>n = "
                                               "%{customdata[3]} tasks<extra>%{fullData.name}</extra>"))
    fig.add_hline(y=0, line={"color": "grey", "dash": "dot"})
    title = ("Instruction following: contrast minus the first evaluated step's (log ratio, baseline over asking; "
             "95% CI)"
             if not rows.empty else "Instruction following: no pair of instructions evaluated at two steps yet")
    return _layout(fig, title, "optimizer step", "change in contrast", legend={"title": "pair"})


#: The panels of `paired_deltas_figure`: measure -> axis title (cost is a relative change).
DELTA_PANELS = {"accuracy": "accuracy (share solved)", "cost": "cost (trained / start - 1)",
                "latency": "latency (s per task)", "U": "utility U"}


def paired_deltas_figure(deltas: pd.DataFrame, title: str = "Trained - start (paired; 95% bootstrap CIs over tasks)"
                         ) -> go.Figure:
    """A forest plot of a trained model against its start: one panel per measure (accuracy, cost as a
    percentage change, latency, U), one row per instruction, the paired delta with its 95% CI, and a line
    at 0 (no change). `deltas` is `lab.report.metrics.paired_deltas`' frame with an `instruction` column
    (`trainer.evidence.Evidence.deltas`); a `target` column, where present, shades +-target around 0: an
    interval wider than the shading missed the half-width the run was sized for."""
    measures = [m for m in DELTA_PANELS if m in set(deltas.measure)] or list(DELTA_PANELS)
    fig = make_subplots(rows=1, cols=len(measures), shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=[DELTA_PANELS[m] for m in measures])
    for col, measure in enumerate(measures, start=1):
        rows = deltas[deltas.measure == measure]
        labels = [_wrap(str(label)) for label in rows.instruction]
        fig.add_trace(go.Scatter(
            x=rows.delta, y=labels, mode="markers", name=measure, showlegend=False,
            marker={"color": PALETTE[col - 1], "size": 9},
            error_x={"type": "data", "symmetric": False, "array": rows.ci_high - rows.delta,
                     "arrayminus": rows.delta - rows.ci_low},
            customdata=rows[["start", "trained", "ci_low", "ci_high"]],
            hovertemplate="%{y}<br>delta %{x:.3f} [%{customdata[2]:.3f}, %{customdata[3]:.3f}]<br>"
                          "start %{customdata[0]:.3f}, trained %{customdata[1]:.3f}<extra>" + measure + "</extra>",
        ), row=1, col=col)
        # after the trace: plotly leaves shapes off a subplot that has no trace yet
        target = rows.target.dropna() if "target" in rows else pd.Series(dtype=float)
        if len(target):
            fig.add_vrect(x0=-float(target.iloc[0]), x1=float(target.iloc[0]), fillcolor="lightgrey", opacity=0.3,
                          line_width=0, row=1, col=col)
        fig.add_vline(x=0, line={"color": "black", "dash": "dot"}, row=1, col=col)
        if measure == "cost":
            fig.update_xaxes(tickformat="+.0%", row=1, col=col)
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title=title, template=TEMPLATE, height=120 + 45 * max(deltas.instruction.nunique(), 1)
                      if "instruction" in deltas else 300)
    return fig


def _wrap(text: str, width: int = 40) -> str:
    """A long instruction on several lines of at most `width` characters, for an axis label."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "<br>".join([*lines, line])


def training_signals_figure(metrics: pd.DataFrame, window: int = 5) -> go.Figure:
    """What each GRPO step trained on, from `train_metrics_df`: reward and solved share, the share of
    groups carrying gradient and each filter's share, cost and latency per rollout (own axes), rows per
    step. Lines are trailing means over `window` steps with the raw points faint. A step where every
    rollout was filtered trained on nothing, and its reward is no measurement (0 when none passed the
    format and invalid filters), so it is marked on the reward panel and left out of its line."""
    steps = metrics.step
    nothing = (metrics["filtered/all"] >= 1 - 1e-9 if "filtered/all" in metrics
               else pd.Series(False, index=metrics.index))
    filters = [c for c in metrics.columns if c.startswith("filtered/") and c != "filtered/all"]
    panels = {"reward (Eq. 2) and solved share": [c for c in ("reward/mean", "outcome/mean") if c in metrics],
              "share of groups with gradient, and of rollouts filtered": (
                  [c for c in ("groups/informative",) if c in metrics] + filters),
              "cost per rollout (¢)": [c for c in ("cost/per_trajectory",) if c in metrics],
              "latency per rollout (s)": [c for c in ("latency/per_trajectory",) if c in metrics],
              "training rows per step": [c for c in ("rounds/kept",) if c in metrics]}
    panels = {title: columns for title, columns in panels.items() if columns}
    fig = make_subplots(rows=max(len(panels), 1), cols=1, shared_xaxes=True, subplot_titles=list(panels) or [""],
                        vertical_spacing=0.12 / max(len(panels), 1) + 0.03)
    for row, columns in enumerate(panels.values(), start=1):
        for i, column in enumerate(columns):
            color = PALETTE[i % len(PALETTE)]
            values = metrics[column].astype(float) * (100.0 if column == "cost/per_trajectory" else 1.0)
            if column == "reward/mean":
                values = values.mask(nothing)   # no rollout kept: no reward to plot
            fig.add_trace(go.Scatter(x=steps, y=values, mode="markers", marker={"color": color, "size": 4},
                                     opacity=0.3, legendgroup=column, showlegend=False, name=column), row=row, col=1)
            fig.add_trace(go.Scatter(x=steps, y=values.rolling(window, min_periods=1).mean(), mode="lines",
                                     line={"color": color}, name=column, legendgroup=column), row=row, col=1)
        if "reward/mean" in columns and nothing.any():
            fig.add_trace(go.Scatter(x=steps[nothing], y=[0.0] * int(nothing.sum()), mode="markers",
                                     marker={"symbol": "x", "color": "red", "size": 9},
                                     name="every rollout filtered (no update; shaded)"), row=row, col=1)
    for step in steps[nothing]:  # shaded across every panel: nothing was trained on at this step
        fig.add_vrect(x0=float(step) - 0.5, x1=float(step) + 0.5, fillcolor="red", opacity=0.1, line_width=0)
    fig.update_xaxes(title_text="optimizer step", row=max(len(panels), 1), col=1)
    fig.update_layout(title=f"Training signals per step (lines: mean of the last {window} steps)", template=TEMPLATE,
                      height=230 * max(len(panels), 1))
    return fig


def _translucent(color: str, alpha: float) -> str:
    """`#636efa` -> `rgba(99, 110, 250, alpha)`: a band in its line's colour."""
    red, green, blue = (int(color.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def _probe(metrics: pd.DataFrame | None) -> pd.DataFrame | None:
    """The steps where `probe/best_call` was read, or None when the run logs no probe."""
    if metrics is None or PROBE not in metrics or metrics[PROBE].isna().all():
        return None
    return metrics.loc[metrics[PROBE].notna(), ["step", PROBE]]


def _stacked_tool_bars(tool_calls: pd.DataFrame, run_ids: Sequence[str] | None, column: str, hover: str,
                       colors: dict[str, str] | None = None, names: dict[str, str] | None = None) -> go.Figure:
    """One bar trace per tool of `metrics.tool_call_table`'s `column`, over the runs (in the order given,
    0 where a run never called the tool), tools in sorted order with one colour each; the caller stacks
    and titles them."""
    run_ids = list(run_ids) if run_ids is not None else list(dict.fromkeys(tool_calls.run_id))
    colors = colors or tool_colors(tool_calls.tool_name)
    shown = [(names or {}).get(r, r) for r in run_ids]
    fig = go.Figure()
    for tool, group in tool_calls.groupby("tool_name", sort=True):
        label = group.tool_label.iloc[0]
        values = group.set_index("run_id")[column].reindex(run_ids).fillna(0.0)
        fig.add_trace(go.Bar(x=shown, y=values, name=label, marker_color=colors.get(tool),
                             hovertemplate=f"{label}<br>%{{x}}<br>{hover}<extra></extra>"))
    return fig


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, **extra) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, template=TEMPLATE, **extra)
    return fig
