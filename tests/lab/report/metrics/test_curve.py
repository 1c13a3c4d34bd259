"""Tests for lab.report.metrics.curve: the learning curve's utility U tried against the ways a policy (or
a plotting bug) could game it, its scale fixed once from step 0, and one curve point by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.report.metrics.curve import FALLBACK_COST_USD, CurveScale, fixed_scale, learning_curve, utility

weights = st.floats(0.0, 1.0)
costs = st.floats(0.0, 10.0)
latencies = st.floats(0.0, 600.0)
scales = st.floats(1e-4, 100.0)


@settings(max_examples=200, deadline=None)
@given(solved=st.sampled_from([0.0, 1.0]), cost=costs, extra=st.floats(0.0, 10.0), latency=latencies,
       w=st.tuples(weights, weights, weights), c_ref=scales, l_ref=scales)
def test_spending_more_for_the_same_result_never_raises_u(solved, cost, extra, latency, w, c_ref, l_ref):
    cheap, dear = utility([solved, solved], [cost, cost + extra], [latency, latency], w, c_ref, l_ref)
    assert dear <= cheap


@settings(max_examples=200, deadline=None)
@given(solved=st.sampled_from([0.0, 1.0]), cost=costs, latency=latencies, extra=st.floats(0.0, 600.0),
       w=st.tuples(weights, weights, weights), c_ref=scales, l_ref=scales)
def test_taking_longer_for_the_same_result_never_raises_u(solved, cost, latency, extra, w, c_ref, l_ref):
    fast, slow = utility([solved, solved], [cost, cost], [latency, latency + extra], w, c_ref, l_ref)
    assert slow <= fast


@settings(max_examples=200, deadline=None)
@given(cost=costs, latency=latencies, w_o=st.floats(1e-3, 1.0), w_c=weights, w_l=weights, c_ref=scales,
       l_ref=scales)
def test_an_unsolved_rollout_never_beats_a_solved_one_at_the_same_cost_and_latency(cost, latency, w_o, w_c, w_l,
                                                                                   c_ref, l_ref):
    solved, unsolved = utility([1.0, 0.0], [cost, cost], [latency, latency], [w_o, w_c, w_l], c_ref, l_ref)
    assert solved > unsolved


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([0.0, 1.0]), costs, latencies), min_size=2, max_size=8),
       c_ref=scales, l_ref=scales)
def test_a_rollouts_u_does_not_depend_on_the_rollouts_beside_it(rows, c_ref, l_ref):
    """No normalising per group: U of a rollout scored in a batch is its U scored alone."""
    solved, cost, latency = (list(column) for column in zip(*rows))
    together = utility(solved, cost, latency, [1.0, 0.5, 0.2], c_ref, l_ref)
    alone = [utility([s], [c], [t], [1.0, 0.5, 0.2], c_ref, l_ref)[0] for s, c, t in rows]
    np.testing.assert_allclose(together, alone)


@pytest.mark.parametrize("c_ref, l_ref", [(0.0, 1.0), (1.0, 0.0), (-0.01, 1.0), (float("nan"), 1.0),
                                          (1.0, float("inf")), (None, 1.0)])
def test_a_scale_that_is_not_positive_is_one_clear_error(c_ref, l_ref):
    with pytest.raises(LabInputError, match="must be a positive number") as info:
        utility([1.0], [0.01], [1.0], [1, 1, 1], c_ref, l_ref)
    assert "\n" not in str(info.value)


def frame(rows, preference=None):
    """(run, task, sample, solved, cost_usd, latency_s) rows as a trajectories frame."""
    p = json.dumps(preference or {"outcome": 1.0, "compute": 1.0, "latency": 0.0})
    return pd.DataFrame([{"run_id": r, "task_id": t, "sample_idx": k, "outcome": o, "cost_usd": c, "latency_s": s,
                          "preference_json": p} for r, t, k, o, c, s in rows])


def test_the_scale_is_the_mean_per_task_of_every_instructions_step_0_run():
    # run a: task t0 has two samples (averaged first), run b one task; every (run, task) weighs alike
    step0 = frame([("a", "t0", 0, 1, 0.02, 4.0), ("a", "t0", 1, 0, 0.04, 8.0), ("b", "t0", 0, 1, 0.00, 3.0)])
    scale = fixed_scale(step0)
    assert scale.c_ref == pytest.approx((0.03 + 0.0) / 2) and scale.l_ref == pytest.approx((6.0 + 3.0) / 2)
    assert "step 0" in scale.basis


def test_a_step_0_that_spent_nothing_still_gives_a_usable_scale_and_says_so():
    scale = fixed_scale(frame([("a", "t0", 0, 0, 0.0, 2.0)]))
    assert scale.c_ref == FALLBACK_COST_USD and scale.l_ref == 2.0 and "spent nothing" in scale.basis
    with pytest.raises(LabInputError, match="no step 0 rollouts"):
        fixed_scale(frame([]).reindex(columns=["run_id", "task_id", "cost_usd", "latency_s"]))


def test_a_curve_point_by_hand_on_the_runs_fixed_scale():
    scale = CurveScale(c_ref=0.01, l_ref=10.0, basis="test")
    trajs = frame([("s0", "t0", 0, 1, 0.01, 10.0), ("s0", "t1", 0, 0, 0.00, 10.0),
                   ("s2", "t0", 0, 1, 0.02, 10.0), ("s2", "t1", 0, 1, 0.02, 10.0)])
    points = pd.DataFrame({"run_id": ["s2", "s0", "later"], "step": [2, 0, 4], "instruction": ["cost"] * 3})
    curve = learning_curve(trajs, points, scale, n_resamples=200)
    assert list(curve.step) == [0, 2]                        # sorted by step; a point with no rollouts yet is left out
    first, second = curve.iloc[0], curve.iloc[1]
    assert first.U == pytest.approx(((1 - 1) + (0 - 0)) / 2)   # w_o*solved - w_c*cost/c_ref, latency weighs 0
    assert second.U == pytest.approx(1 - 2)                    # solves both, at twice the reference cost each
    assert second.accuracy == 1.0 and second.cost == pytest.approx(2.0) and second.latency == 10.0  # cents, s
    assert first.ci_low <= first.U <= first.ci_high and second.ci_low == second.ci_high == second.U
    assert list(curve.n_tasks) == [2, 2] and list(curve.run_id) == ["s0", "s2"]


def test_the_docstring_example_holds():
    import doctest

    import lab.report.metrics.curve

    assert doctest.testmod(lab.report.metrics.curve).failed == 0
