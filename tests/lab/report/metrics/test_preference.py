"""Tests for lab.report.metrics.preference: preference scores, and the two paired measurements
`orchestra train evidence` reports, on hand-made trajectories.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lab.errors import LabInputError
from lab.report import metrics
from lab.report.metrics import paired_cost_saving, paired_preference_scores
from tests.helpers.metric_frames import trajs

TOOLS = ["answer-1", "answer-2"]
COST_P = json.dumps({"answer-1": 0, "answer-2": 0, "outcome": 1, "compute": 1, "latency": 0})


def frame(rows):
    return pd.DataFrame([{"run_id": r, "task_id": t, "outcome": o, "cost_usd": c, "latency_s": 1.0,
                          "tool_counts_json": json.dumps({"answer-1": 1}), "preference_json": COST_P, "sample_idx": 0}
                         for r, t, o, c in rows])


def test_the_cheaper_system_that_solves_as_often_scores_higher_and_the_ci_says_so():
    rows = [("cheap", f"t{i}", 1, 0.01) for i in range(20)] + [("dear", f"t{i}", 1, 0.10) for i in range(20)]
    result = paired_preference_scores(frame(rows), "cheap", "dear", TOOLS)
    # both always solve, so the outcome column is constant per task and adds nothing (Eq. 2); cost decides
    assert result["score_a"] == pytest.approx(1.0) and result["score_b"] == pytest.approx(0.0)
    assert result["ci_low"] > 0 and result["n_tasks"] == 20


def test_a_failed_task_earns_nothing_however_cheap():
    rows = [("cheap", f"t{i}", 0, 0.0) for i in range(10)] + [("dear", f"t{i}", 1, 0.10) for i in range(10)]
    result = paired_preference_scores(frame(rows), "cheap", "dear", TOOLS)
    assert result["score_a"] == 0 and result["diff"] < 0 and result["ci_high"] < 0


def test_only_shared_tasks_count_and_disjoint_runs_are_refused():
    rows = [("a", "t1", 1, 0.01), ("b", "t1", 1, 0.02), ("a", "t2", 1, 0.01)]
    assert paired_preference_scores(frame(rows), "a", "b", TOOLS)["n_tasks"] == 1
    with pytest.raises(LabInputError, match="share no task"):
        paired_cost_saving(frame([("a", "t1", 1, 0.1), ("b", "t2", 1, 0.1)]), "a", "b")


def test_cost_saving_is_relative_to_the_other_run_with_a_bootstrap_interval():
    rng = np.random.default_rng(0)
    dear = rng.uniform(0.05, 0.15, 40)
    rows = [("save", f"t{i}", 1, 0.6 * c) for i, c in enumerate(dear)] + [("spend", f"t{i}", 1, c) for i,
                                                                          c in enumerate(dear)]
    result = paired_cost_saving(frame(rows), "save", "spend")
    assert result["saving"] == pytest.approx(0.4)
    assert result["ci_low"] <= 0.4 <= result["ci_high"] and result["ci_high"] - result["ci_low"] < 1e-9 + 0.01


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
