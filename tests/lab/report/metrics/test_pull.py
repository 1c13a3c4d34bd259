"""Tests for lab.report.metrics.pull: which way a run's updates pushed cost and outcome, per instruction."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.report.metrics.pull import group_pulls, update_pull

ACCURACY_ONLY = json.dumps({"outcome": 1.0})
COST_SAVING = json.dumps({"outcome": 1.0, "compute": 1.0})


def group(step: int, name: str, preference: str, costs: list[float], advantages: list[float],
          outcomes: list[float] | None = None) -> pd.DataFrame:
    return pd.DataFrame({"train_step": step, "group_id": name, "preference_json": preference, "cost_usd": costs,
                         "advantage": advantages, "outcome": outcomes or [1.0] * len(costs)})


def test_an_update_that_favours_cheap_rollouts_only_when_asked_pulls_cost_down_there_alone():
    """Under cost-saving the cheaper rollout gets the positive advantage; under accuracy-only the solved
    (dearer) one does: the cost pulls have opposite signs, which is what lets the contrast grow."""
    frame = pd.concat([group(1, "a", COST_SAVING, [0.01, 0.04], [1.0, -1.0]),
                       group(1, "b", ACCURACY_ONLY, [0.01, 0.04], [-1.0, 1.0], [0.0, 1.0])])
    pulls = update_pull(frame).set_index("kind")
    assert pulls.loc["cost-saving", "cost_pull"] == pytest.approx(-np.log(4) / 2)
    assert pulls.loc["accuracy-only", "cost_pull"] == pytest.approx(np.log(4) / 2)
    assert pulls.loc["accuracy-only", "outcome_pull"] == pytest.approx(0.5)
    assert pulls.loc["cost-saving", "outcome_pull"] == 0


def test_filtered_and_homogeneous_groups_pull_nothing_and_are_counted_apart():
    frame = pd.concat([group(1, "a", COST_SAVING, [0.01, 0.04], [0.0, 0.0]),
                       group(1, "b", COST_SAVING, [0.01, 0.04], [1.0, -1.0]),
                       group(2, "a", COST_SAVING, [0.02, 0.02], [None, None])])   # not scored at all
    pulls = update_pull(frame).set_index("kind")
    assert pulls.loc["cost-saving", "groups"] == 2 and pulls.loc["cost-saving", "informative"] == 0.5
    assert pulls.loc["cost-saving", "cost_pull"] == pytest.approx(-np.log(4) / 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(1e-4, 1.0), st.floats(-2, 2)), min_size=2, max_size=8),
       st.floats(0.1, 10))
def test_the_pull_flips_with_the_advantage_and_ignores_the_cost_scale(rows, scale):
    """Negating every advantage negates the pull (the sign-flip control); multiplying every cost of a group
    by one factor changes no ln-cost deviation, so no pull: a uniformly cheaper policy is no signal."""
    costs, advantages = [c for c, _ in rows], [a for _, a in rows]
    base = group_pulls(group(1, "g", COST_SAVING, costs, advantages)).cost_pull.iloc[0]
    flipped = group_pulls(group(1, "g", COST_SAVING, costs, [-a for a in advantages])).cost_pull.iloc[0]
    scaled = group_pulls(group(1, "g", COST_SAVING, [c * scale for c in costs], advantages)).cost_pull.iloc[0]
    assert flipped == pytest.approx(-base, abs=1e-12) and scaled == pytest.approx(base, abs=1e-9)
