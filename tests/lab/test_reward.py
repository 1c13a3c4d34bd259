"""Tests for lab.reward: Eq. 2 by hand, its properties under hypothesis, GRPO advantages, preference score.

Also `rescore` with `passed`: an unsolved trajectory never earns a reward, a filtered one never carries an
advantage, and the filtered ones do not move anyone else's numbers.
"""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lab.reward
from lab.errors import LabInputError
from lab.preference import Preference
from lab.reward import (
    feature_matrix,
    group_advantages,
    minmax_normalise,
    preference_rewards,
    preference_score,
    rescore,
)

SETTINGS = settings(max_examples=150, deadline=None)
TOOLS = ["search", "coder", "gpt-5"]


# ---------------------------------------------------------------- hand computations


def _hand_group() -> tuple[np.ndarray, np.ndarray]:
    """3 tools, G = 4; columns [search, coder, gpt-5, outcome, -cost, -latency]."""
    M = feature_matrix(
        [{"search": 2, "gpt-5": 1}, {"coder": 1, "gpt-5": 1}, {"search": 1, "gpt-5": 3}, {"search": 4, "gpt-5": 1}],
        outcomes=[1, 1, 0, 1],
        costs=[0.20, 0.60, 0.10, 0.40],
        latencies=[10.0, 30.0, 20.0, 20.0],
        tools=TOOLS,
    )
    P = np.array([0.5, 0.0, 1.0, 1.0, 1.0, 0.5])
    return M, P


def test_feature_matrix_negates_cost_and_latency() -> None:
    M, _ = _hand_group()
    assert M[0].tolist() == [2, 0, 1, 1, -0.20, -10.0]
    assert M[2].tolist() == [1, 0, 3, 0, -0.10, -20.0]


def test_rewards_match_hand_computation() -> None:
    M, P = _hand_group()
    # Column-wise min-max within the group:
    #   search [2,0,1,4]       -> [2/4, 0, 1/4, 1]
    #   coder  [0,1,0,0]       -> [0, 1, 0, 0]
    #   gpt-5  [1,1,3,1]       -> [0, 0, 1, 0]
    #   outcome [1,1,0,1]      -> [1, 1, 0, 1]
    #   -cost [-.2,-.6,-.1,-.4] (min -.6, span .5) -> [.4/.5, 0, .5/.5, .2/.5]
    #   -lat  [-10,-30,-20,-20] (min -30, span 20) -> [20/20, 0, 10/20, 10/20]
    r0 = 0.5 * (2 / 4) + 0.0 * 0 + 1.0 * 0 + 1.0 * 1 + 1.0 * (0.4 / 0.5) + 0.5 * (20 / 20)
    r1 = 0.5 * 0 + 0.0 * 1 + 1.0 * 0 + 1.0 * 1 + 1.0 * 0 + 0.5 * 0
    r2 = 0.0  # outcome 0: gated, whatever its features
    r3 = 0.5 * 1 + 0.0 * 0 + 1.0 * 0 + 1.0 * 1 + 1.0 * (0.2 / 0.5) + 0.5 * (10 / 20)
    np.testing.assert_allclose(preference_rewards(M, P), [r0, r1, r2, r3], atol=1e-12)
    assert r0 == pytest.approx(2.55) and r3 == pytest.approx(2.15)


def test_advantages_match_hand_computation_with_ddof_1() -> None:
    R = np.array([2.55, 1.0, 0.0, 2.15])
    mean = (2.55 + 1.0 + 0.0 + 2.15) / 4
    std = math.sqrt(((2.55 - mean) ** 2 + (1.0 - mean) ** 2 + (0.0 - mean) ** 2 + (2.15 - mean) ** 2) / (4 - 1))
    A, keep = group_advantages(R, ["t1"] * 4)
    np.testing.assert_allclose(A, (R - mean) / std, atol=1e-12)
    assert keep.all()
    assert A[0] == pytest.approx(1.125 / std)


def test_groups_are_normalised_separately() -> None:
    M, P = _hand_group()
    other = M.copy()
    other[:, 4] *= 100  # a much pricier task must not change the first task's rewards
    both = np.vstack([M, other])
    R = preference_rewards(both, P, ["a"] * 4 + ["b"] * 4)
    np.testing.assert_allclose(R[:4], preference_rewards(M, P), atol=1e-12)
    np.testing.assert_allclose(R[4:], preference_rewards(other, P), atol=1e-12)


def test_group_labels_of_mixed_types_stay_distinct() -> None:
    M = np.array([[0, 1, -1.0, 0], [5, 1, -1.0, 0]])
    P = np.array([1, 0, 0, 0])
    assert preference_rewards(M, P, [1, "1"]).tolist() == [0.0, 0.0]  # two groups of one
    assert preference_rewards(M, P, [("t", 1), ("t", 1)]).tolist() == [0.0, 1.0]


def test_docstring_examples_run() -> None:
    result = doctest.testmod(lab.reward)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------- input errors


def test_preference_length_mismatch_names_both_shapes() -> None:
    M, _ = _hand_group()
    with pytest.raises(LabInputError, match="preference vector has 5 entries; features have 6 columns"):
        preference_rewards(M, np.ones(5))
    with pytest.raises(LabInputError, match=r"preference matrix has shape \(3, 6\)"):
        preference_rewards(M, np.ones((3, 6)))


@pytest.mark.parametrize(
    ("features", "group_ids", "message"),
    [
        ([[0, 0.5, 0, 0]], None, "outcome column must be 0 or 1"),
        ([[0, 1, float("nan"), 0]], None, "must be finite"),
        ([0, 1, 0, 0], None, "must be a 2-D"),
        ([[0, 1, 0, 0], [1, 1, 0, 0]], ["a"], "group_ids has 1 entries; features have 2 rows"),
    ],
)
def test_bad_features_raise_one_clear_error(features, group_ids, message) -> None:
    P = np.ones(np.asarray(features).shape[-1])
    with pytest.raises(LabInputError, match=message):
        preference_rewards(np.asarray(features, dtype=float), P, group_ids)


def test_feature_matrix_rejects_unknown_tools_and_length_mismatch() -> None:
    with pytest.raises(LabInputError, match="unknown tool 'bing'"):
        feature_matrix([{"bing": 1}], [1], [0.1], [1.0], TOOLS)
    with pytest.raises(LabInputError, match="costs has 2 entries; tool_counts has 1"):
        feature_matrix([{}], [1], [0.1, 0.2], [1.0], TOOLS)
    with pytest.raises(LabInputError, match="latencies row 0: must be >= 0"):
        feature_matrix([{}], [1], [0.1], [-1.0], TOOLS)


# ---------------------------------------------------------------- properties


@st.composite
def groups(draw, min_rows: int = 1, max_rows: int = 8, elements=None):
    """(M, P): one group of raw features with binary outcomes and P in [0, 1]^(n+3)."""
    n_tools = draw(st.integers(1, 3))
    rows = draw(st.integers(min_rows, max_rows))
    values = elements if elements is not None else st.integers(-20, 20).map(float)
    M = draw(hnp.arrays(float, (rows, n_tools + 3), elements=values))
    M[:, n_tools] = draw(hnp.arrays(float, rows, elements=st.sampled_from([0.0, 1.0])))
    P = draw(hnp.arrays(float, n_tools + 3, elements=st.floats(0, 1)))
    return M, P


@SETTINGS
@given(groups(), st.data())
def test_positive_affine_rescaling_of_a_column_leaves_rewards_unchanged(group, data) -> None:
    M, P = group
    outcome = M.shape[1] - 3
    column = data.draw(st.sampled_from([k for k in range(M.shape[1]) if k != outcome]))
    a = data.draw(st.floats(0.01, 100))
    b = data.draw(st.floats(-1e3, 1e3))
    rescaled = M.copy()
    rescaled[:, column] = a * M[:, column] + b
    np.testing.assert_allclose(preference_rewards(rescaled, P), preference_rewards(M, P), atol=1e-9)


@SETTINGS
@given(groups(), st.data(), st.sampled_from([-2, -1]))
def test_higher_cost_or_latency_never_raises_the_reward(group, data, column) -> None:
    M, P = group
    row = data.draw(st.integers(0, len(M) - 1))
    worse = M.copy()
    worse[row, column] -= data.draw(st.floats(0.5, 50))  # the column holds -cost / -latency
    assert preference_rewards(worse, P)[row] <= preference_rewards(M, P)[row] + 1e-12


@SETTINGS
@given(groups())
def test_failure_never_beats_success_on_the_same_features(group) -> None:
    M, P = group
    outcome = M.shape[1] - 3
    success, failure = M[0].copy(), M[0].copy()
    success[outcome], failure[outcome] = 1.0, 0.0
    R = preference_rewards(np.vstack([M, success, failure]), P)
    assert R[-1] == 0.0 and R[-1] <= R[-2]


@SETTINGS
@given(groups(), st.data())
def test_a_constant_column_contributes_nothing(group, data) -> None:
    M, P = group
    column = data.draw(st.integers(0, M.shape[1] - 1))
    if column == M.shape[1] - 3:
        M[:, column] = data.draw(st.sampled_from([0.0, 1.0]))
    else:
        M[:, column] = data.draw(st.floats(-1e6, 1e6))
    other = P.copy()
    other[column] = data.draw(st.floats(0, 1))
    np.testing.assert_array_equal(preference_rewards(M, other), preference_rewards(M, P))


@SETTINGS
@given(groups())
def test_failed_trajectories_get_zero(group) -> None:
    M, P = group
    R = preference_rewards(M, P)
    assert (R[M[:, -3] == 0] == 0).all()
    assert (R >= 0).all() and (R <= P.sum() + 1e-9).all()


@SETTINGS
@given(groups())
def test_preference_as_vector_or_per_row_matrix(group) -> None:
    M, P = group
    R = preference_rewards(M, P)
    assert R.shape == (len(M),)
    per_row = np.tile(P, (len(M), 1))
    np.testing.assert_allclose(preference_rewards(M, per_row), R, atol=1e-12)
    per_row[0] = 0.0  # row 0 under an all-zero P, the others unchanged
    mixed = preference_rewards(M, per_row)
    assert mixed[0] == 0.0
    np.testing.assert_allclose(mixed[1:], R[1:], atol=1e-12)


finite = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-1e-300, 1e-300),
    st.sampled_from([0.0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308]),
)


@SETTINGS
@given(groups(elements=finite), st.lists(st.integers(0, 2), min_size=8, max_size=8))
def test_no_nan_or_inf_for_any_finite_input(group, labels) -> None:
    M, P = group
    group_ids = labels[: len(M)]  # includes groups of one
    normalised = minmax_normalise(M, group_ids)
    assert np.isfinite(normalised).all() and (normalised >= 0).all() and (normalised <= 1).all()
    R = preference_rewards(M, P, group_ids)
    assert np.isfinite(R).all()
    A, keep = group_advantages(R, group_ids)
    assert np.isfinite(A).all()
    A_raw, _ = group_advantages(M[:, 0], group_ids, std_threshold=0.0)
    assert np.isfinite(A_raw).all()


@SETTINGS
@given(groups(elements=finite))
def test_all_equal_rows_give_outcome_gated_zero_features(group) -> None:
    M, P = group
    same = np.tile(M[0], (len(M), 1))
    assert (preference_rewards(same, P) == 0).all()  # every column is constant


@SETTINGS
@given(groups(), groups(), st.randoms(use_true_random=False))
def test_other_groups_do_not_change_a_groups_rewards(group, other_group, rnd) -> None:
    M, P = group
    other = other_group[0]
    if other.shape[1] != M.shape[1]:
        other = np.resize(other, (len(other), M.shape[1]))
        other[:, -3] = (other[:, -3] > 0).astype(float)
    stacked = np.vstack([M, other])
    labels = np.array(["mine"] * len(M) + ["other"] * len(other))
    order = list(range(len(stacked)))
    rnd.shuffle(order)
    R = preference_rewards(stacked[order], P, labels[order])
    mine = np.empty(len(stacked))
    mine[order] = R
    np.testing.assert_allclose(mine[: len(M)], preference_rewards(M, P), atol=1e-12)


# ---------------------------------------------------------------- advantages


@st.composite
def grouped_rewards(draw):
    labels = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=20))
    # Rewards on a 0.01 grid, as Eq. 2 gives with P in [0, 1]; subnormal spreads would make numpy's
    # reference std underflow to 0 where ours (computed on R / max|R|) does not.
    R = draw(hnp.arrays(float, len(labels), elements=st.integers(0, 300).map(lambda k: k / 100)))
    return R, np.array(labels)


@SETTINGS
@given(grouped_rewards(), st.floats(0, 1))
def test_advantages_are_standardised_in_kept_groups_and_zero_elsewhere(data, threshold) -> None:
    R, labels = data
    A, keep = group_advantages(R, labels, std_threshold=threshold)
    for label in np.unique(labels):
        members = labels == label
        std = R[members].std(ddof=1) if members.sum() > 1 else 0.0
        if abs(std - threshold) < 1e-9:
            continue  # on the boundary rounding may fall either way
        if std < threshold or std == 0:
            assert not keep[members].any() and (A[members] == 0).all()
        else:
            assert keep[members].all()
            assert abs(A[members].mean()) < 1e-9
            assert A[members].std(ddof=1) == pytest.approx(1.0)


def test_homogeneous_and_singleton_groups_are_dropped() -> None:
    R = np.array([1.0, 1.04, 1.0, 0.0, 1.0, 0.7])
    A, keep = group_advantages(R, ["flat", "flat", "flat", "split", "split", "alone"])
    assert keep.tolist() == [False, False, False, True, True, False]
    assert A[[0, 1, 2, 5]].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert A[3] == pytest.approx(-1 / math.sqrt(2)) and A[4] == pytest.approx(1 / math.sqrt(2))


def test_advantage_threshold_must_be_sensible() -> None:
    with pytest.raises(LabInputError, match="std_threshold"):
        group_advantages(np.zeros(2), None, std_threshold=-1)


# ---------------------------------------------------------------- preference score and rescore


def test_preference_score_normalises_per_task_across_systems() -> None:
    # Columns [gpt-5 calls, outcome, -cost, -latency]; P values cheapness and success.
    M = np.array(
        [
            [1, 1, -1.00, -9],  # big, task 1
            [0, 1, -0.10, -9],  # small, task 1
            [1, 1, -0.50, -9],  # big, task 2
            [0, 0, -0.05, -9],  # small, task 2 (failed)
        ]
    )
    P = np.array([0.0, 1.0, 1.0, 0.0])
    scores = preference_score(M, P, ["big", "small", "big", "small"], ["t1", "t1", "t2", "t2"])
    # Task 1: outcome constant -> 0; cost big (-1 - -1)/0.9 = 0, small 0.9/0.9 = 1.
    # Task 2: outcome big 1, small 0; cost big 0, small failed -> gated.
    big = ((0 + 0) + (1 + 0)) / 2
    small = ((0 + 1) + 0) / 2
    assert scores == pytest.approx({"big": big, "small": small})
    assert list(scores) == ["big", "small"]


def test_preference_score_ranks_identical_systems_equally() -> None:
    M, P = _hand_group()
    scores = preference_score(np.vstack([M, M]), P, ["x"] * 4 + ["y"] * 4, [0, 0, 1, 1] * 2)
    assert scores["x"] == scores["y"]


def test_rescore_from_logged_fields_with_a_bound_preference() -> None:
    pref = Preference.from_dict({"outcome": 1, "compute": 1}, TOOLS)
    R, A, keep = rescore(
        [{"gpt-5": 1}, {"search": 2}, {"search": 1}, {}],
        outcomes=[1, 1, 0, 1],
        costs=[0.9, 0.1, 0.05, 0.4],
        latencies=[5, 5, 5, 5],
        tools=TOOLS,
        P=pref,
        group_ids=["q", "q", "q", "solo"],
    )
    # Group q: outcome [1,1,0] -> [1,1,0]; -cost [-.9,-.1,-.05] min -.9 span .85 -> [0, .8/.85, gated].
    np.testing.assert_allclose(R, [1.0, 1 + 0.8 / 0.85, 0.0, 0.0], atol=1e-12)
    assert keep.tolist() == [True, True, True, False]
    assert A[1] > A[0] > A[2]
    with pytest.raises(LabInputError, match="preference is bound to tools"):
        rescore([{}], [1], [0.1], [1], ["other"], pref, None)


FILTER_TOOLS = ["search", "gpt-5"]


filter_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),                       # group
        st.sampled_from([0.0, 1.0]),                            # outcome
        st.floats(0, 5), st.floats(0, 60),                      # cost, latency
        st.integers(0, 3), st.integers(0, 3),                   # calls per tool
        st.booleans(),                                          # passed the filters
    ),
    min_size=1, max_size=14,
)


filter_weights = st.lists(st.floats(0, 1), min_size=len(FILTER_TOOLS) + 3, max_size=len(FILTER_TOOLS) + 3)


@settings(max_examples=200, deadline=None)
@given(filter_rows, filter_weights, st.sampled_from([0.0, 0.1, 0.5]))
def test_unsolved_earn_nothing_and_filtered_carry_no_advantage(data, P, threshold):
    groups, outcomes, costs, latencies, n_search, n_gpt, passed = map(list, zip(*data))
    counts = [{"search": s, "gpt-5": g} for s, g in zip(n_search, n_gpt)]
    R, A, keep = rescore(counts, outcomes, costs, latencies, FILTER_TOOLS, np.array(P), groups, threshold,
                         passed=passed)
    outcome, ok = np.array(outcomes), np.array(passed)
    assert (R[outcome == 0] == 0).all() and (R >= 0).all()
    assert (A[~ok] == 0).all() and not keep[~ok].any()
    if ok.any():  # the filtered rows are out of the groups: the rest score as if they had never been logged
        idx = np.flatnonzero(ok)
        alone = rescore([counts[i] for i in idx], outcome[idx], np.array(costs)[idx], np.array(latencies)[idx],
                        FILTER_TOOLS, np.array(P), [groups[i] for i in idx], threshold)
        for got, expected in zip((R[idx], A[idx], keep[idx]), alone):
            np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- fixed-scale cost and latency (a variant)

costs = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
latencies = st.floats(min_value=0.0, max_value=600.0, allow_nan=False)


@given(st.lists(st.tuples(costs, latencies, st.sampled_from([0.0, 1.0])), min_size=2, max_size=8),
       st.floats(min_value=1e-4, max_value=1.0), st.floats(min_value=0.1, max_value=300.0))
@settings(max_examples=200, deadline=None)
def test_on_a_fixed_scale_spending_more_never_pays_and_failing_never_beats_solving(rows, cost_ref, latency_ref):
    M = np.array([[0.0, solved, -cost, -latency] for cost, latency, solved in rows])
    P = np.array([0.0, 1.0, 1.0, 1.0])
    R = lab.reward.preference_rewards(M, P, scale=(cost_ref, latency_ref))
    assert np.isfinite(R).all() and (R[M[:, 1] == 0] == 0).all()
    # gaming: the same row made costlier (or slower) scores no higher, beside any group
    dearer = M.copy()
    dearer[0, 2] -= 1.0
    dearer[0, 3] -= 10.0
    assert lab.reward.preference_rewards(dearer, P, scale=(cost_ref, latency_ref))[0] <= R[0]
    # a solved row scores above every failure of its group whenever the outcome column separates them
    if (M[:, 1] == 1).any() and (M[:, 1] == 0).any():
        assert R[M[:, 1] == 1].min() > 0


def test_on_a_fixed_scale_token_noise_within_one_route_is_not_stretched_to_a_full_unit():
    rng = np.random.default_rng(0)
    cost = 0.02 * np.exp(rng.normal(0, 0.1, 8))        # eight rollouts of one route: 10% token noise
    M = np.column_stack([np.ones(8), np.ones(8), -cost, -np.full(8, 30.0)])
    P = np.array([0.0, 1.0, 1.0, 0.0])
    group = lab.reward.preference_rewards(M, P)
    fixed = lab.reward.preference_rewards(M, P, scale=(0.02, 60.0))
    assert np.ptp(group) == pytest.approx(1.0) and np.ptp(fixed) < 0.1


def test_a_fixed_scale_needs_positive_references():
    with pytest.raises(LabInputError, match="c_ref and l_ref"):
        lab.reward.preference_rewards(np.array([[0.0, 1.0, -0.1, -1.0]]), np.array([0, 1, 1, 1.0]), scale=(0.0, 1.0))


# ---------------------------------------------------------------- the learning curve's U as the reward (a variant)

@given(st.lists(st.tuples(costs, latencies, st.sampled_from([0.0, 1.0]), st.integers(0, 3)), min_size=2, max_size=8),
       st.floats(min_value=1e-4, max_value=1.0), st.floats(min_value=0.1, max_value=300.0),
       st.tuples(*[st.floats(0.0, 1.0)] * 4))
@settings(max_examples=200, deadline=None)
def test_the_utility_reward_charges_every_cent_and_pays_only_for_what_p_asks(rows, cost_ref, latency_ref, weights):
    """U = w_o * r - w_c * cost / c_ref - w_l * latency / l_ref (+ w_tool on a solved rollout's calls): what
    the learning curve and the evidence score. Gaming: spending more never pays, failing costs exactly the
    outcome weight, a failed rollout's calls earn nothing, and no rollout scores above w_o + w_tool."""
    w_tool, w_o, w_c, w_l = weights
    M = np.array([[calls, solved, -cost, -latency] for cost, latency, solved, calls in rows])
    P = np.array(weights)
    scale = lab.reward.RewardScale(cost_ref, latency_ref, utility=True)
    R = lab.reward.preference_rewards(M, P, scale=scale)
    tools = lab.reward.minmax_normalise(M)[:, 0] * w_tool * M[:, 1]
    expected = w_o * M[:, 1] + w_c * M[:, 2] / cost_ref + w_l * M[:, 3] / latency_ref + tools
    np.testing.assert_allclose(R, expected, atol=1e-9)
    assert (R <= w_o + w_tool + 1e-9).all()
    dearer = M.copy()
    dearer[0, 2] -= 1.0
    dearer[0, 3] -= 10.0
    assert lab.reward.preference_rewards(dearer, P, scale=scale)[0] <= R[0] + 1e-12
    failed = M.copy()
    failed[0, 1] = 0.0
    assert lab.reward.preference_rewards(failed, P, scale=scale)[0] <= R[0] + 1e-12


def test_under_the_utility_reward_a_cheap_route_beats_a_dear_one_that_solves_more_often():
    """The case that separates it from Eq. 2 under "accurate but cheap" (w_o = w_c = 1): route A solves 8 of
    8 at 4c, route B 3 of 8 at 0.5c. Eq. 2 (outcome-gated, its cost term at most w_c) prefers A on average,
    within the group or on a fixed scale; U charges A's 4c and prefers B."""
    P = np.array([0.0, 1.0, 1.0, 0.0])
    solved_a, solved_b = [1.0] * 8, [1.0] * 3 + [0.0] * 5
    M = np.array([[0.0, s, -0.04, -30.0] for s in solved_a] + [[0.0, s, -0.005, -30.0] for s in solved_b])
    for scale in (None, (0.02, 60.0)):
        R = lab.reward.preference_rewards(M, P, scale=scale)
        assert R[:8].mean() > R[8:].mean()
    R = lab.reward.preference_rewards(M, P, scale=lab.reward.RewardScale(0.02, 60.0, utility=True))
    assert R[8:].mean() > R[:8].mean()
