"""Tests for lab.report.figures.

Figure builders: the traces, names, colours and labels a reader sees.
"""

from __future__ import annotations

import pandas as pd

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


def test_html_inlines_plotly_once_for_all_figures():
    fig = figures.accuracy_figure(pd.DataFrame({"run_id": ["A"], "accuracy": [0.5], "ci_low": [0.4], "ci_high": [0.6]}))
    page = figures.figures_html({"one": fig, "two": fig, "three": fig}, title="t <x>")
    assert page.count("plotly.js v") == 1 and page.count("Plotly.newPlot(") == 3
    assert '<script src="http' not in page and "t &lt;x&gt;" in page      # no CDN: works offline


def test_each_pareto_marker_carries_its_run_id_for_clicks():
    pareto = pd.DataFrame({"run_id": ["a", "b"], "accuracy": [0.2, 0.6], "cost_cents_per_task": [1.0, 10.0],
                           "on_frontier": [True, True]})
    fig = figures.cost_accuracy_figure(pareto)
    assert [list(t.customdata) for t in fig.data[:2]] == [["a"], ["b"]]


def test_calls_per_task_stacks_tools_and_a_run_without_a_tool_gets_zero():
    table = pd.DataFrame({"run_id": ["A", "A", "B"], "tool_label": ["gpt-5", "search", "search"],
                          "calls_per_task": [1.5, 2.0, 1.0]})
    fig = figures.calls_per_task_figure(table, ["A", "B"])
    gpt = next(t for t in fig.data if t.name == "gpt-5")
    assert fig.layout.barmode == "stack" and list(gpt.y) == [1.5, 0.0]


def test_heldout_figure_divides_cost_by_trajectories():
    linked = pd.DataFrame({"train_step": [1, 3], "accuracy": [0.5, 1.0], "cost_usd": [2.0, 4.0],
                           "trajectories": [4, 0]})
    fig = figures.heldout_figure(linked)
    assert list(fig.data[0].y) == [0.5, 1.0] and list(fig.data[1].y) == [0.5, 4.0]  # an empty run counts one


def test_tool_share_drift_stacks_the_logged_shares():
    metrics = pd.DataFrame({"step": [1, 2], "tools/share/gpt-5": [0.2, 0.6], "tools/share/search": [0.8, 0.4],
                            "loss": [1.0, 0.5]})
    fig = figures.tool_share_drift_figure(metrics)
    assert [t.name for t in fig.data] == ["gpt-5", "search"] and fig.data[0].stackgroup == "shares"
