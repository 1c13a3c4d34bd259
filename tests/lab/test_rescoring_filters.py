"""Properties of rescoring with the paper's trajectory filters (lab.reward.rescore with `passed`, rescore_run):
an unsolved trajectory never earns a reward, a filtered one never carries an advantage, and the filtered
ones do not move anyone else's numbers."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.records import RunRecord, StepRecord, TrajectoryRecord
from lab.rescoring import rescore_run
from lab.reward import rescore
from lab.store import Store, queries

TOOLS = ["search", "gpt-5"]

rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),                       # group
        st.sampled_from([0.0, 1.0]),                            # outcome
        st.floats(0, 5), st.floats(0, 60),                      # cost, latency
        st.integers(0, 3), st.integers(0, 3),                   # calls per tool
        st.booleans(),                                          # passed the filters
    ),
    min_size=1, max_size=14,
)
weights = st.lists(st.floats(0, 1), min_size=len(TOOLS) + 3, max_size=len(TOOLS) + 3)


@settings(max_examples=200, deadline=None)
@given(rows, weights, st.sampled_from([0.0, 0.1, 0.5]))
def test_unsolved_earn_nothing_and_filtered_carry_no_advantage(data, P, threshold):
    groups, outcomes, costs, latencies, n_search, n_gpt, passed = map(list, zip(*data))
    counts = [{"search": s, "gpt-5": g} for s, g in zip(n_search, n_gpt)]
    R, A, keep = rescore(counts, outcomes, costs, latencies, TOOLS, np.array(P), groups, threshold, passed=passed)
    outcome, ok = np.array(outcomes), np.array(passed)
    assert (R[outcome == 0] == 0).all() and (R >= 0).all()
    assert (A[~ok] == 0).all() and not keep[~ok].any()
    if ok.any():  # the filtered rows are out of the groups: the rest score as if they had never been logged
        idx = np.flatnonzero(ok)
        alone = rescore([counts[i] for i in idx], outcome[idx], np.array(costs)[idx], np.array(latencies)[idx],
                        TOOLS, np.array(P), [groups[i] for i in idx], threshold)
        for got, expected in zip((R[idx], A[idx], keep[idx]), alone):
            np.testing.assert_array_equal(got, expected)


broken = st.sampled_from(["ok", "format_flag", "format_step", "no_answer", "blank_answer"])
_run_ids = itertools.count()


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Store:
    """One store for every example (a new run each): opening a DuckDB file per example is the slow part."""
    return Store(tmp_path_factory.mktemp("filters") / "p.duckdb")


@settings(max_examples=10, deadline=None)
@given(data=st.lists(st.tuples(st.sampled_from(["t0", "t1"]), st.sampled_from([0.0, 1.0]), st.floats(0, 1), broken),
                     min_size=2, max_size=8))
def test_rescore_run_never_rewards_failures_or_keeps_filtered_rollouts(shared_store, data):
    run_id = f"p{next(_run_ids)}"
    why: dict[tuple[str, int], str] = {}
    samples: dict[str, int] = {}
    items = []
    for task, outcome, cost, kind in data:
        sample = samples[task] = samples.get(task, -1) + 1
        answer = {"no_answer": None, "blank_answer": "  "}.get(kind, "42")
        traj = TrajectoryRecord(run_id=run_id, task_id=task, sample_idx=sample, group_id=task, outcome=outcome,
                                final_answer=answer, valid_output=answer is not None, format_ok=kind != "format_flag",
                                cost_usd=cost, latency_s=1.0, tool_counts_json=json.dumps({"search": 1}))
        steps = [StepRecord(run_id=run_id, task_id=task, sample_idx=sample, turn=0, tool_name="search")]
        if kind == "format_step":
            steps.append(StepRecord(run_id=run_id, task_id=task, sample_idx=sample, turn=1, kind="format_error"))
        items.append((traj, steps, None))
        why[(task, sample)] = kind
    if len(samples) == len(data):                # every group of one: refused (tested in the CLI tests)
        return
    store = shared_store
    store.write_run(RunRecord(run_id=run_id, kind="eval", toolkit_json=json.dumps({"tools": [{"name": "search"}]})))
    store.write_trajectories(items)
    result = rescore_run(store, run_id, "outcome=1,compute=1")
    scores = queries.scores_df(store, result.scoring.scoring_id)
    logged = queries.trajectories_df(store, [run_id]).set_index(["task_id", "sample_idx"])
    summary = result.summary()
    assert summary["filtered_format"] == sum(k in ("format_flag", "format_step") for k in why.values())
    assert summary["filtered_invalid"] == sum(k in ("no_answer", "blank_answer") for k in why.values())
    assert summary["solved"] == int((logged.outcome == 1).sum())
    for row in scores.itertuples():
        if logged.loc[(row.task_id, row.sample_idx), "outcome"] == 0:
            assert row.reward == 0
        if why[(row.task_id, row.sample_idx)] != "ok":
            assert row.advantage == 0 and not row.keep and row.reward == 0
