"""Tests for lab.report.figures.

Figure builders: the traces, names, colours and labels a reader sees.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lab.report import figures
from lab.report.api import load_report


def test_tool_share_figure_stacks_one_trace_per_tool_with_simulated_labels():
    calls = pd.DataFrame({
        "run_id": ["A", "A", "B"], "tool_name": ["sim:gpt-5", "local_search", "local_search"],
        "tool_label": ["sim:gpt-5 (simulated)", "local_search", "local_search"], "share": [0.25, 0.75, 1.0],
    })
    fig = figures.tool_share_figure(calls, ["A", "B"])
    names = [t.name for t in fig.data]
    assert sorted(names) == ["local_search", "sim:gpt-5 (simulated)"]
    assert fig.layout.barmode == "stack"
    sim = next(t for t in fig.data if t.name == "sim:gpt-5 (simulated)")
    assert list(sim.x) == ["A", "B"] and list(sim.y) == [0.25, 0.0]        # B never called it


def test_cost_accuracy_figure_draws_each_run_and_the_frontier():
    pareto = pd.DataFrame({"run_id": ["a", "b", "c"], "accuracy": [0.2, 0.6, 0.4],
                           "cost_cents_per_task": [1.0, 10.0, 50.0], "on_frontier": [True, True, False]})
    fig = figures.cost_accuracy_figure(pareto)
    assert [t.name for t in fig.data] == ["a", "b", "c", "Pareto frontier"]
    frontier = fig.data[-1]
    assert list(frontier.x) == [1.0, 10.0] and frontier.line.shape == "hv"
    assert fig.data[2].marker.symbol == "circle-open"                      # off the frontier
    assert "cents" in fig.layout.xaxis.title.text and fig.layout.xaxis.type == "log"


def test_report_figures_keep_one_colour_per_run(store_of, make_run):
    store = store_of(make_run("A", {"t0": [1.0], "t1": [0.0]}),
                     make_run("B", {"t0": [1.0], "t1": [1.0]}, tool="qwen3-32b"))
    report = load_report(store, ["A", "B"], n_resamples=10)
    figs = report.figures()
    assert set(figs) == {"accuracy", "cost_accuracy", "tool_shares", "pgr"}   # no turn-budget curve here
    colors = figures.run_colors(["A", "B"])
    assert list(figs["accuracy"].data[0].marker.color) == [colors["A"], colors["B"]]
    assert [t.marker.color for t in figs["pgr"].data] == [colors["A"], colors["B"]]
    assert figs["accuracy"].data[0].error_y.array is not None
    for fig in figs.values():
        assert fig.layout.title.text and fig.layout.yaxis.title.text


def test_turn_budget_figure_has_an_accuracy_and_a_cost_line_per_curve():
    curves = pd.DataFrame({"curve": ["x", "x", "y", "y"], "run_id": list("abcd"), "max_turns": [5, 10, 5, 10],
                           "accuracy": [0.1, 0.2, 0.3, 0.4], "ci_low": 0.0, "ci_high": 1.0,
                           "cost_cents_per_task": [1.0, 2.0, 3.0, 4.0]})
    fig = figures.turn_budget_figure(curves)
    assert len(fig.data) == 4 and [t.name for t in fig.data] == ["x", "x", "y", "y"]
    assert sum(bool(t.showlegend is not False) for t in fig.data) == 2


def test_each_pareto_marker_carries_its_run_id_for_clicks():
    pareto = pd.DataFrame({"run_id": ["a", "b"], "accuracy": [0.2, 0.6], "cost_cents_per_task": [1.0, 10.0],
                           "on_frontier": [True, True]})
    fig = figures.cost_accuracy_figure(pareto)
    assert [list(t.customdata) for t in fig.data[:2]] == [["a"], ["b"]]


def test_calls_per_task_stacks_tools_and_a_run_without_a_tool_gets_zero():
    table = pd.DataFrame({"run_id": ["A", "A", "B"], "tool_name": ["gpt-5", "search", "search"],
                          "tool_label": ["gpt-5", "search", "search"], "calls_per_task": [1.5, 2.0, 1.0]})
    fig = figures.calls_per_task_figure(table, ["A", "B"])
    gpt = next(t for t in fig.data if t.name == "gpt-5")
    assert fig.layout.barmode == "stack" and list(gpt.y) == [1.5, 0.0]


def test_a_tool_has_one_colour_in_the_bars_and_the_drift_chart_and_runs_do_not_repeat_colours():
    colors = figures.tool_colors(["search", "gpt-5", "answer-1"])
    table = pd.DataFrame({"run_id": ["A", "B"], "tool_name": ["search", "answer-1"],
                          "tool_label": ["search", "answer-1 (gpt-5)"], "share": [1.0, 1.0]})
    bars = {t.name: t.marker.color for t in figures.tool_share_figure(table, ["A", "B"], colors).data}
    metrics = pd.DataFrame({"step": [1], "tools/share/search": [0.5], "tools/share/answer-1": [0.5]})
    drift = {t.name: t.line.color for t in figures.tool_share_drift_figure(metrics, colors).data}
    assert bars["search"] == drift["search"] and bars["answer-1 (gpt-5)"] == drift["answer-1"]
    assert len(set(figures.run_colors([f"run-{i}" for i in range(40)]).values())) == 40


def test_tool_share_drift_stacks_the_logged_shares():
    metrics = pd.DataFrame({"step": [1, 2], "tools/share/gpt-5": [0.2, 0.6], "tools/share/search": [0.8, 0.4],
                            "loss": [1.0, 0.5]})
    fig = figures.tool_share_drift_figure(metrics)
    assert [t.name for t in fig.data] == ["gpt-5", "search"] and fig.data[0].stackgroup == "shares"


CURVE = pd.DataFrame({"step": [0, 2, 0, 2], "instruction": ["save", "save", "accurate", "accurate"],
                      "accuracy": [0.2, 0.5, 0.3, 0.4], "cost": [2.0, 1.0, 3.0, 3.5], "latency": [10.0, 8.0, 9.0, 9.0],
                      "U": [-0.8, 0.0, 0.3, 0.4], "ci_low": [-1.0, -0.2, 0.1, 0.2], "ci_high": [-0.6, 0.2, 0.5, 0.6],
                      "n_tasks": [12] * 4, "run_id": ["a", "b", "c", "d"]})


def _axis(trace) -> str:
    return trace.yaxis or "y"


def test_the_learning_curve_draws_u_with_its_band_and_cost_apart_from_latency():
    fig = figures.learning_curve_figure(CURVE)
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == ["save", "accurate"]                          # one entry per instruction
    band = next(t for t in fig.data if t.fill == "toself" and t.legendgroup == "save")
    assert list(band.x) == [0, 2, 2, 0] and list(band.y) == [-0.6, 0.2, -0.2, -1.0]
    by_panel = {t.name + "/" + _axis(t) for t in fig.data if t.mode == "lines+markers"}
    cost_axis = next(_axis(t) for t in fig.data if t.mode == "lines+markers" and list(t.y) == [2.0, 1.0])
    latency_axis = next(_axis(t) for t in fig.data if t.mode == "lines+markers" and list(t.y) == [10.0, 8.0])
    assert cost_axis != latency_axis and len(by_panel) == 8       # 2 instructions x U, accuracy, cost, latency
    assert not any(t.name == "P(best call)" for t in fig.data)    # no probe logged, no probe panel


def test_the_probe_gets_its_own_panel_when_the_run_logs_it_even_before_any_evaluation():
    metrics = pd.DataFrame({"step": [1, 2, 3], "loss": [1.0, 0.9, 0.8], "probe/best_call": [0.2, None, 0.6]})
    for curve in (CURVE, CURVE.iloc[:0]):
        fig = figures.learning_curve_figure(curve, metrics)
        probe = next(t for t in fig.data if t.name == "P(best call)")
        assert list(probe.x) == [1, 3] and list(probe.y) == [0.2, 0.6]


def test_training_signals_smooth_the_steps_and_mark_a_step_where_everything_was_filtered():
    metrics = pd.DataFrame({"step": [1, 2, 3, 4], "reward/mean": [0.4, 0.0, 0.6, 0.8], "outcome/mean": [0.5] * 4,
                            "filtered/format": [0.1, 0.6, 0.1, 0.1], "filtered/homogeneous": [0.2, 0.4, 0.2, 0.0],
                            "filtered/all": [0.3, 1.0, 0.3, 0.1], "groups/informative": [0.6, 0.0, 0.7, 0.9],
                            "cost/per_trajectory": [0.01, 0.02, 0.03, 0.04], "latency/per_trajectory": [3.0] * 4})
    fig = figures.training_signals_figure(metrics, window=2)
    reward_raw, reward_line = [t for t in fig.data if t.name == "reward/mean"]
    assert pd.isna(reward_raw.y[1]) and reward_raw.opacity < 1     # no reward at step 2: nothing was kept
    assert list(reward_line.y) == [0.4, 0.4, 0.6, 0.7]            # mean of the last 2 plotted steps
    marked = next(t for t in fig.data if t.name.startswith("every rollout filtered"))
    assert list(marked.x) == [2]
    informative = next(t for t in fig.data if t.name == "groups/informative")
    shares = {t.name for t in fig.data if _axis(t) == _axis(informative)}
    assert {"groups/informative", "filtered/format", "filtered/homogeneous"} <= shares and "filtered/all" not in shares
    cost = next(t for t in fig.data if t.name == "cost/per_trajectory" and t.mode == "lines")
    latency = next(t for t in fig.data if t.name == "latency/per_trajectory" and t.mode == "lines")
    assert _axis(cost) != _axis(latency) and list(cost.y)[-1] == 3.5   # cents, on their own axis


def test_the_paired_deltas_forest_plot_has_a_panel_per_measure_and_a_row_per_instruction():
    rows = [(i, m, d, d - 0.1, d + 0.1, t) for i in ("accuracy only", "held-out")
            for m, d, t in (("accuracy", 0.02, 0.05), ("cost", -0.2, 0.10), ("latency", 1.0, None), ("U", 0.0, None))]
    deltas = pd.DataFrame(rows, columns=["instruction", "measure", "delta", "ci_low", "ci_high", "target"]).assign(
        start=0.4, trained=0.42)
    fig = figures.paired_deltas_figure(deltas)
    assert [t.name for t in fig.data] == ["accuracy", "cost", "latency", "U"]
    cost = fig.data[1]
    assert list(cost.y) == ["accuracy only", "held-out"] and list(cost.x) == [-0.2, -0.2]
    assert list(cost.error_x.array) == pytest.approx([0.1, 0.1]) and cost.xaxis != fig.data[0].xaxis
    shaded = [shape for shape in fig.layout.shapes if shape.type == "rect"]
    assert sorted(round(s.x1, 3) for s in shaded) == [0.05, 0.1]      # +-target, on accuracy and cost only
