"""Tests for lab.report.metrics.accuracy: accuracy, cost and paired comparisons on hand-made frames, worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from lab.report import metrics
from tests.helpers.metric_frames import one_sample_runs, trajs

# accuracy and cost


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


# paired tests


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
