"""The trainer scores a generation batch exactly as `lab.reward` does, and its filters cannot be gamed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.reward import feature_matrix, group_advantages, preference_rewards
from trainer.scoring import RowFeatures, score_rows

FEATURES = ["search-1", "answer-1", "answer-2"]


@st.composite
def batches(draw):
    n_groups = draw(st.integers(1, 4))
    size = draw(st.integers(2, 8))
    rows = []
    for g in range(n_groups):
        pref = tuple(draw(st.lists(st.sampled_from([0.0, 0.3, 1.0]), min_size=6, max_size=6)))
        for _ in range(size):
            rows.append(RowFeatures(
                group_id=f"g{g}", tool_counts={f: draw(st.integers(0, 3)) for f in FEATURES if draw(st.booleans())},
                outcome=float(draw(st.booleans())), cost_usd=draw(st.floats(0, 1)), latency_s=draw(st.floats(0, 60)),
                format_ok=draw(st.booleans()) or draw(st.booleans()),
                valid_output=draw(st.booleans()) or draw(st.booleans()),
                preference=pref,
            ))
    return rows


@settings(max_examples=150, deadline=None)
@given(batches())
def test_rewards_and_advantages_equal_lab_reward_on_the_passing_rows(rows):
    scores = score_rows(rows, FEATURES)
    passed = np.array([r.format_ok and r.valid_output for r in rows])
    idx = np.flatnonzero(passed)
    if len(idx):
        sub = [rows[i] for i in idx]
        M = feature_matrix([r.tool_counts for r in sub], [r.outcome for r in sub], [r.cost_usd for r in sub],
                           [r.latency_s for r in sub], FEATURES)
        P = np.array([r.preference for r in sub])
        groups = [r.group_id for r in sub]
        R = preference_rewards(M, P, groups)
        A, keep = group_advantages(R, groups)
        np.testing.assert_allclose(scores.rewards[idx], R, atol=1e-12)
        np.testing.assert_allclose(scores.advantages[idx], A, atol=1e-12)
        assert (scores.keep[idx] == keep).all()
    # filtered rows: no reward, no advantage, no gradient, a reason
    assert (scores.rewards[~passed] == 0).all() and (scores.advantages[~passed] == 0).all()
    assert not scores.keep[~passed].any()
    for row, reason, kept in zip(rows, scores.reasons, scores.keep):
        expected = ("format" if not row.format_ok else "invalid" if not row.valid_output
                    else None if kept else "homogeneous")
        assert reason == expected


def _row(group, outcome, cost, *, format_ok=True, valid=True, calls=None):
    return RowFeatures(group_id=group, tool_counts=calls or {"answer-1": 1}, outcome=outcome, cost_usd=cost,
                       latency_s=1.0, format_ok=format_ok, valid_output=valid, preference=(0, 0, 0, 1.0, 1.0, 0))


def test_a_malformed_call_cannot_buy_a_better_normalisation():
    """A broken rollout that is very cheap must not stretch the cost column and inflate the others' rewards:
    it takes no part in the group's min-max."""
    honest = [_row("g", 1.0, 0.5), _row("g", 1.0, 1.0), _row("g", 0.0, 0.7)]
    with_cheat = honest + [_row("g", 1.0, 0.0, format_ok=False)]
    a, b = score_rows(honest, FEATURES), score_rows(with_cheat, FEATURES)
    np.testing.assert_allclose(a.rewards, b.rewards[:3])
    np.testing.assert_allclose(a.advantages, b.advantages[:3])
    assert b.reasons[3] == "format" and b.rewards[3] == 0 and not b.keep[3]


def test_groups_are_normalised_per_task_not_across_the_batch():
    """Two groups with different cost scales: each row's reward depends only on its own group."""
    cheap = [_row("a", 1.0, 0.01), _row("a", 1.0, 0.02), _row("a", 0.0, 0.01)]
    dear = [_row("b", 1.0, 5.0), _row("b", 1.0, 9.0), _row("b", 0.0, 7.0)]
    together = score_rows(cheap + dear, FEATURES)
    np.testing.assert_allclose(together.rewards[:3], score_rows(cheap, FEATURES).rewards)
    np.testing.assert_allclose(together.rewards[3:], score_rows(dear, FEATURES).rewards)


def test_a_group_that_all_succeeds_the_same_way_is_homogeneous():
    same = [_row("g", 1.0, 0.3) for _ in range(8)]
    scores = score_rows(same, FEATURES)
    assert scores.reasons == ["homogeneous"] * 8 and not scores.keep.any() and (scores.advantages == 0).all()


def test_switching_a_filter_off_keeps_its_rows_in_the_group():
    rows = [_row("g", 1.0, 0.5), _row("g", 0.0, 0.5, valid=False), _row("g", 1.0, 0.9)]
    on, off = score_rows(rows, FEATURES), score_rows(rows, FEATURES, filter_invalid=False)
    assert on.reasons[1] == "invalid" and off.reasons[1] is None and off.keep[1]


@settings(max_examples=150, deadline=None)
@given(batches())
def test_rejection_sampling_keeps_exactly_the_best_solved_row_of_each_group(rows):
    """The RFT baseline: the same rewards as GRPO, one row per group with a solved passing rollout, and that
    row has the group's highest reward among them; nothing filtered, failed or beaten can be kept, so a
    cheap malformed or unanswered rollout cannot win its group."""
    grpo, rft = score_rows(rows, FEATURES), score_rows(rows, FEATURES, estimator="rft")
    np.testing.assert_allclose(rft.rewards, grpo.rewards)
    eligible = np.array([r.format_ok and r.valid_output and r.outcome == 1.0 for r in rows])
    assert not rft.keep[~eligible].any() and set(np.unique(rft.advantages)) <= {0.0, 1.0}
    assert ((rft.advantages == 1.0) == rft.keep).all()
    for group in {r.group_id for r in rows}:
        mine = np.array([r.group_id == group for r in rows])
        kept = np.flatnonzero(mine & rft.keep)
        assert len(kept) == int((mine & eligible).any())
        if len(kept):
            assert rft.rewards[kept[0]] == rft.rewards[mine & eligible].max()
    for row, reason, kept in zip(rows, rft.reasons, rft.keep):
        assert reason == ("format" if not row.format_ok else "invalid" if not row.valid_output
                          else None if kept else "not best")


def test_a_group_that_all_succeeds_the_same_way_still_teaches_rft_its_first_route():
    same = [_row("g", 1.0, 0.3) for _ in range(8)]
    scores = score_rows(same, FEATURES, estimator="rft")
    assert scores.keep.tolist() == [True] + [False] * 7 and scores.reasons[1:] == ["not best"] * 7
