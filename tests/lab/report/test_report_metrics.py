"""Report metrics on hand-made frames whose answers are worked out by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lab.report import metrics


def trajs(rows: list[tuple[str, str, float]], cost: float = 0.01, latency: float = 2.0) -> pd.DataFrame:
    """Trajectories from (run_id, task_id, outcome); samples numbered in order within (run, task)."""
    frame = pd.DataFrame(rows, columns=["run_id", "task_id", "outcome"])
    return frame.assign(sample_idx=frame.groupby(["run_id", "task_id"]).cumcount(), train_step=0,
                        cost_usd=cost, latency_s=latency, tool_counts_json="{}", preference_json="{}")


def one_sample_runs(a: list[float], b: list[float]) -> pd.DataFrame:
    return trajs([("A", f"t{i}", o) for i, o in enumerate(a)] + [("B", f"t{i}", o) for i, o in enumerate(b)])


# ---------------------------------------------------------------- accuracy and cost


def test_accuracy_averages_samples_within_a_task_before_tasks():
    frame = trajs([("A", "t0", 1), ("A", "t0", 0), ("A", "t0", 0), ("A", "t0", 0), ("A", "t1", 1)])
    (row,) = metrics.accuracy_table(frame, ["A"]).itertuples()
    assert row.accuracy == pytest.approx((0.25 + 1.0) / 2)       # not 2/5: tasks weigh equally
    assert (row.n_tasks, row.n_trajectories) == (2, 5)
    assert 0.25 <= row.ci_low <= row.accuracy <= row.ci_high <= 1.0


def test_bootstrap_interval_is_seeded_and_narrows_with_more_tasks():
    small = one_sample_runs([1, 0] * 10, [])
    large = one_sample_runs([1, 0] * 200, [])
    first, again = metrics.accuracy_table(small, ["A"], seed=3), metrics.accuracy_table(small, ["A"], seed=3)
    assert first.equals(again)
    width = lambda t: float(t.ci_high.iloc[0] - t.ci_low.iloc[0])  # noqa: E731
    assert width(metrics.accuracy_table(large, ["A"])) < width(first) / 2


def test_run_without_trajectories_gets_nan_not_an_error():
    table = metrics.accuracy_table(one_sample_runs([1], []), ["A", "ghost"]).set_index("run_id")
    assert table.loc["ghost", "n_tasks"] == 0 and np.isnan(table.loc["ghost", "accuracy"])


def test_cost_is_reported_in_cents_per_task_and_totals_in_dollars():
    frame = trajs([("A", "t0", 1), ("A", "t0", 0), ("A", "t1", 1)], cost=0.02, latency=3.0)
    frame.loc[2, "cost_usd"] = 0.05
    (row,) = metrics.cost_latency_table(frame, ["A"]).itertuples()
    assert row.cost_cents_per_task == pytest.approx(100 * (0.02 + 0.05) / 2)
    assert row.total_cost_usd == pytest.approx(0.09)
    assert row.latency_s_per_task == pytest.approx(3.0) and row.total_latency_s == pytest.approx(9.0)


# ---------------------------------------------------------------- paired tests


def test_clearly_better_run_has_hand_computed_diff_small_p_and_exact_mcnemar():
    frame = one_sample_runs([1] * 30, [1] * 10 + [0] * 20)
    (row,) = metrics.paired_comparisons(frame, ["A", "B"]).itertuples()
    assert (row.run_a, row.run_b, row.n_shared) == ("A", "B", 30)
    assert row.diff == pytest.approx(20 / 30)
    assert 0 < row.ci_low <= row.diff <= row.ci_high
    assert row.p_value < 0.01
    assert (row.a_only, row.b_only) == (20, 0)
    assert row.mcnemar_p == pytest.approx(2 * 0.5**20)


def test_identical_runs_differ_by_nothing():
    frame = one_sample_runs([1, 0, 1, 1, 0], [1, 0, 1, 1, 0])
    (row,) = metrics.paired_comparisons(frame, ["A", "B"]).itertuples()
    assert row.diff == 0 and row.ci_low == 0 and row.ci_high == 0
    assert row.p_value == 1.0 and row.mcnemar_p == 1.0


def test_pairs_use_only_shared_tasks():
    frame = trajs([("A", "t0", 1), ("A", "t1", 0), ("B", "t1", 1), ("B", "t2", 1), ("C", "t9", 1)])
    paired = metrics.paired_comparisons(frame, ["A", "B", "C"]).set_index(["run_a", "run_b"])
    assert list(paired.index) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert paired.loc[("A", "B"), "n_shared"] == 1 and paired.loc[("A", "B"), "diff"] == -1.0
    assert paired.loc[("A", "C"), "n_shared"] == 0 and np.isnan(paired.loc[("A", "C"), "p_value"])


def test_mcnemar_is_skipped_with_several_samples_per_task():
    frame = trajs([("A", "t0", 1), ("A", "t0", 0), ("B", "t0", 1), ("A", "t1", 1), ("B", "t1", 0)])
    (row,) = metrics.paired_comparisons(frame, ["A", "B"]).itertuples()
    assert row.diff == pytest.approx(((0.5 - 1) + (1 - 0)) / 2)
    assert np.isnan(row.mcnemar_p) and np.isnan(row.a_only)


def test_sign_flip_p_matches_the_exact_permutation_distribution():
    # d = (1, 1, 1): of the 8 sign patterns, 2 reach |mean| >= 1, so the exact p is 1/4.
    p = metrics.sign_flip_p(np.array([1.0, 1.0, 1.0]), n_resamples=20000, seed=1)
    assert abs(p - 0.25) < 0.02


# ---------------------------------------------------------------- tools and bias


def tool_calls(rows: list[tuple[str, str, int, str, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["run_id", "task_id", "sample_idx", "tool_name", "n_calls"])
    return frame.assign(train_step=0)


def test_tool_calls_per_task_count_zeros_and_shares_sum_to_one():
    frame = trajs([("A", "t0", 1), ("A", "t0", 1), ("A", "t1", 0)])
    calls = tool_calls([("A", "t0", 0, "sim:gpt-5", 2), ("A", "t0", 1, "local_search", 1), ("A", "t1", 0, "local_search", 3)])
    table = metrics.tool_call_table(calls, frame, ["A"]).set_index("tool_name")
    assert table.loc["sim:gpt-5", "calls_per_task"] == pytest.approx((2 / 2 + 0) / 2)
    assert table.loc["local_search", "calls_per_task"] == pytest.approx((1 / 2 + 3) / 2)
    assert table.loc["sim:gpt-5", "share"] == pytest.approx(2 / 6)
    assert table.share.sum() == pytest.approx(1.0)
    assert table.loc["sim:gpt-5", "tool_label"] == "sim:gpt-5 (simulated)" and table.loc["sim:gpt-5", "simulated"]
    assert table.loc["local_search", "tool_label"] == "local_search"


@pytest.mark.parametrize("identifier, family", [
    ("openai:gpt-5@http://localhost:8000/v1", "gpt-5"), ("scripted:gpt-5-prompted", "gpt-5"), ("sim:gpt-5-mini", "gpt-5"),
    ("scripted:qwen3-8b-prompted", "qwen"), ("hf:/ckpts/Qwen3-8B", "qwen"), ("llama-3.3-70b-instruct", "llama"),
    ("claude-opus-4.1", "claude"), ("scripted:cheapest-first", None), ("", None),
])
def test_model_family(identifier, family):
    assert metrics.model_family(identifier) == family


def test_delegation_bias_by_hand():
    kit = pd.DataFrame([
        ("A", "local_search", None, 0.0), ("A", "sim:gpt-5", "gpt-5", 10.0), ("A", "sim:gpt-5-mini", "gpt-5-mini", 2.0),
        ("A", "sim:qwen3-32b", "qwen3-32b", 0.6),
    ], columns=["run_id", "tool_name", "model", "output_per_mtok"])
    calls = tool_calls([("A", "t0", 0, "local_search", 9), ("A", "t0", 0, "sim:gpt-5", 1),
                        ("A", "t1", 0, "sim:gpt-5-mini", 5), ("A", "t1", 0, "sim:qwen3-32b", 4)])
    info = pd.DataFrame({"run_id": ["A", "B"], "orchestrator": ["scripted:gpt-5-prompted", "scripted:cheapest-first"]})
    kit_b = kit.assign(run_id="B")
    bias = metrics.delegation_bias(pd.concat([calls, calls.assign(run_id="B")]), pd.concat([kit, kit_b]), info, ["A", "B"])
    a, b = bias.set_index("run_id").loc["A"], bias.set_index("run_id").loc["B"]
    assert a.model_calls == 10 and a.strongest == "sim:gpt-5"              # local_search is not a model call
    assert a.strongest_share == pytest.approx(1 / 10)
    assert a.orchestrator_family == "gpt-5" and a.own_family_share == pytest.approx(6 / 10)
    assert b.strongest_share == pytest.approx(1 / 10) and pd.isna(b.orchestrator_family) and np.isnan(b.own_family_share)


# ---------------------------------------------------------------- preference score


def test_preference_score_favours_the_cheaper_run_when_cost_matters():
    frame = trajs([("cheap", "t0", 1), ("dear", "t0", 1), ("dear", "t1", 1)])
    frame.loc[frame.run_id == "dear", "cost_usd"] = 0.5
    frame["tool_counts_json"] = json.dumps({"web": 1})
    P = np.array([0.0, 1.0, 1.0, 0.0])                                     # web, outcome, compute, latency
    scores = metrics.preference_scores(frame, ["cheap", "dear"], ["web"], P).set_index("run_id")
    # On the one shared task (t0) both succeed, so the outcome column is constant (adds 0); cheap has
    # the best normalised cost (1), dear the worst (0). t1 is not shared and is left out.
    assert scores.loc["cheap", "preference_score"] == pytest.approx(1.0)
    assert scores.loc["dear", "preference_score"] == pytest.approx(0.0)
    assert (scores.n_tasks == 1).all() and scores.loc["dear", "n_trajectories"] == 1
    frame.loc[frame.run_id == "cheap", "outcome"] = 0                     # now only the dear run succeeds
    scores = metrics.preference_scores(frame, ["cheap", "dear"], ["web"], P).set_index("run_id")
    assert scores.loc["dear", "preference_score"] == pytest.approx(1.0)  # normalised outcome 1 + cost 0
    assert scores.loc["cheap", "preference_score"] == 0.0                # failed: gated to 0


# ---------------------------------------------------------------- Pareto, AUC, PGR


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


# ---------------------------------------------------------------- turn budgets and repricing


def test_turn_budget_curves_keep_only_runs_that_differ_in_max_turns():
    info = pd.DataFrame({"run_id": ["t10", "t50", "t20", "alone", "legacy"], "max_turns": [10, 50, 20, 50, np.nan],
                         "curve": ["c", "c", "c", "other", None], "orchestrator": "x"})
    accuracy = pd.DataFrame({"run_id": info.run_id, "accuracy": [0.1, 0.5, 0.3, 0.9, 0.9], "ci_low": 0.0, "ci_high": 1.0})
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
