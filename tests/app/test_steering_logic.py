"""What the steering page computes (`app/steering_logic.py`): rewards per group exactly as
`orchestra rescore` computes them, and a preference vector read from a link, stale or not."""

from __future__ import annotations

import json

import numpy as np

from app.steering_logic import group_rewards, parse_vector
from lab.reward import rescore
from lab.scoring import FeatureFrame
from lab.store import Store, queries


def test_rewards_follow_lab_reward_within_each_group(app_store):
    trajs = queries.trajectories_df(Store(app_store), ["eval-a"])
    P = {"outcome": 1.0, "compute": 1.0}
    features = FeatureFrame.of(trajs)
    rewards = group_rewards(features, P)
    assert (rewards[rewards.outcome == 0].reward == 0).all()  # gated on the outcome, whatever else
    assert set(rewards.group) == {"t1", "t2", "t3"}  # the logged group ids
    names = features.names
    R, A, _ = rescore([json.loads(t) for t in trajs.tool_counts_json], trajs.outcome, trajs.cost_usd,
                      trajs.latency_s, names[:-3], np.array([P.get(n, 0.0) for n in names]), list(trajs.task_id))
    assert np.allclose(rewards.reward, R) and np.allclose(rewards.advantage, A)  # what `orchestra rescore` computes


def test_a_stale_link_still_opens():
    names = ["gpt-5", "outcome", "compute", "latency"]
    assert parse_vector("outcome=2,nope=1,compute=x,gpt-5=0.5", names) == {
        "gpt-5": 0.5, "outcome": 1.0, "compute": 0.0, "latency": 0.0}
    assert parse_vector(None, names) == {"gpt-5": 0.0, "outcome": 1.0, "compute": 1.0, "latency": 0.0}
