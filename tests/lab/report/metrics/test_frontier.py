"""Tests for lab.report.metrics.frontier: Pareto points, the frontier's AUC, PGR, turn budgets and repricing,
worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lab.report import metrics
from tests.helpers.metric_frames import trajs


def points(rows: list[tuple[str, float, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["run_id", "cost_cents_per_task", "accuracy"])
    return metrics.pareto_points(frame[["run_id", "accuracy"]], frame[["run_id", "cost_cents_per_task"]])


def test_pareto_frontier_membership_on_a_hand_made_set():
    table = points([("cheap", 1.0, 0.2), ("mid", 10.0, 0.5), ("worse-mid", 20.0, 0.45), ("dear", 100.0, 0.6),
                    ("tie-cost", 10.0, 0.4), ("twin", 10.0, 0.5)]).set_index("run_id")
    assert table.on_frontier.to_dict() == {"cheap": True, "mid": True, "worse-mid": False, "dear": True,
                                           "tie-cost": False, "twin": True}


def test_frontier_auc_integrates_the_step_function_over_log_cost():
    table = points([("a", 1.0, 0.2), ("b", 10.0, 0.5), ("c", 100.0, 0.4)])
    (row,) = metrics.frontier_auc(table).itertuples()
    # log10 cost 0..2: best accuracy 0.2 on [0, 1), 0.5 on [1, 2] -> (0.2 + 0.5) / 2
    assert row.auc == pytest.approx(0.35)
    assert (row.cost_min_cents, row.cost_max_cents, row.n_runs, row.n_frontier) == (1.0, 100.0, 3, 2)
    (wide,) = metrics.frontier_auc(table, cost_range_cents=(0.1, 1000.0)).itertuples()
    assert wide.auc == pytest.approx((0 + 0.2 + 2 * 0.5) / 4)          # 0 below the cheapest run
    (same,) = metrics.frontier_auc(points([("a", 5.0, 0.3), ("b", 5.0, 0.7)])).itertuples()
    assert same.auc == pytest.approx(0.7)


def test_pgr_uses_named_or_extreme_references():
    accuracy = pd.DataFrame({"run_id": ["w", "m", "s"], "accuracy": [0.2, 0.5, 0.8]})
    bias = pd.DataFrame({"run_id": ["w", "m", "s"], "strongest_share": [0.0, 0.3, 1.0]})
    router = metrics.router_table(accuracy, bias).set_index("run_id")
    assert router.pgr.to_dict() == pytest.approx({"w": 0.0, "m": 0.5, "s": 1.0})
    assert router.weak_run.iloc[0] == "w" and router.strong_run.iloc[0] == "s"
    named = metrics.router_table(accuracy, bias, weak="w", strong="m").set_index("run_id")
    assert named.pgr["s"] == pytest.approx(2.0)
    assert metrics.call_performance_threshold(router.reset_index(), 0.5) == pytest.approx(0.3)
    flat = metrics.router_table(accuracy.assign(accuracy=0.5), bias)
    assert flat.pgr.isna().all()


def test_turn_budget_curves_keep_only_runs_that_differ_in_max_turns():
    info = pd.DataFrame({"run_id": ["t10", "t50", "t20", "alone", "legacy"], "max_turns": [10, 50, 20, 50, np.nan],
                         "curve": ["c", "c", "c", "other", None], "orchestrator": "x"})
    accuracy = pd.DataFrame({"run_id": info.run_id, "accuracy": [0.1, 0.5, 0.3, 0.9, 0.9], "ci_low": 0.0,
                             "ci_high": 1.0})
    costs = pd.DataFrame({"run_id": info.run_id, "cost_cents_per_task": [1.0, 5.0, 2.0, 9.0, 9.0]})
    curves = metrics.turn_budget_curves(info, accuracy, costs)
    assert list(curves.run_id) == ["t10", "t20", "t50"] and list(curves.max_turns) == [10, 20, 50]
    assert list(curves.accuracy) == [0.1, 0.3, 0.5] and list(curves.cost_cents_per_task) == [1.0, 2.0, 5.0]


def test_repriced_costs_change_only_by_the_steps_that_changed():
    frame = trajs([("A", "t0", 1), ("A", "t1", 0)], cost=0.04)
    steps = pd.DataFrame({"run_id": "A", "task_id": ["t0", "t0", "t1"], "sample_idx": 0, "train_step": 0,
                          "cost_usd": [0.03, 0.01, 0.04], "new_cost_usd": [0.01, 0.01, 0.02]})
    (row,) = metrics.repriced_table(frame, steps, ["A"], "deepinfra").itertuples()
    assert row.logged_cents_per_task == pytest.approx(4.0)
    assert row.repriced_cents_per_task == pytest.approx(100 * (0.02 + 0.02) / 2)
    assert row.repriced_total_usd == pytest.approx(0.04) and row.change_pct == pytest.approx(-50.0)
