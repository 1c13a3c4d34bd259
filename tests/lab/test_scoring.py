"""One feature frame (`lab.scoring`): every consumer gives a rollout the same reward and runs the same rank.

What a user would notice: the steering page, `orchestra rescore` (within groups and `--across`), the
report's preference table and the trainer's scoring disagreeing on one store. Then properties of the
frame itself (column order, constant columns, unsolved rows, grouping) and a rollout gaming it.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.steering_logic import group_rewards
from lab.records import RunRecord, TrajectoryRecord
from lab.report.api import load_report
from lab.rescoring import rescore_across, rescore_run
from lab.scoring import FeatureFrame, feature_tools, preference_ranking, shared_rows, task_rewards
from lab.store import queries
from tests.conftest import tiny_toolkit
from trainer.scoring import RowFeatures, score_rows

TOOLS = ["local_search", "gpt-5", "qwen3-32b"]
P = {"outcome": 1.0, "compute": 0.5, "latency": 0.25, "gpt-5": 0.3, "local_search": 0.2}
P_TEXT = ",".join(f"{k}={v}" for k, v in P.items())


def run(run_id: str, outcomes: dict[str, list[float]], seed: int) -> tuple[RunRecord, list]:
    """An eval run whose rollouts differ in calls, cost and latency, each with a valid final answer."""
    rng = np.random.default_rng(seed)
    record = RunRecord(run_id=run_id, kind="eval", name=run_id, toolkit_json=tiny_toolkit().model_dump_json(),
                       orchestrator="scripted:test", benchmark="world")
    items = []
    for task_id, samples in outcomes.items():
        for sample, outcome in enumerate(samples):
            counts = {"local_search": int(rng.integers(0, 3)),
                      TOOLS[1 + int(rng.integers(0, 2))]: int(rng.integers(1, 3))}
            items.append((TrajectoryRecord(
                run_id=run_id, task_id=task_id, sample_idx=sample, group_id=task_id, outcome=outcome, final_answer="42",
                n_turns=2, cost_usd=float(rng.uniform(0.001, 0.05)), latency_s=float(rng.uniform(1, 30)),
                benchmark="world",
                tool_counts_json=json.dumps(counts), preference_json=json.dumps({"outcome": 1})), [], None))
    return record, items


@pytest.fixture
def three_runs(store_of):
    return store_of(run("eval-a", {"t1": [1, 0, 1], "t2": [1, 1, 0], "t3": [0, 1, 1]}, 1),
                    run("eval-b", {"t1": [1, 1, 0], "t2": [0, 1, 1], "t3": [1, 0, 0], "t4": [1, 1]}, 2),
                    run("eval-c", {"t1": [0, 1, 1], "t2": [1, 0, 1], "t3": [1, 1, 1]}, 3))


def by_key(frame: pd.DataFrame, column: str) -> dict[tuple[str, str, int], float]:
    return {(r, t, int(s)): float(v) for r, t, s,
            v in zip(frame.run_id, frame.task_id, frame.sample_idx, frame[column])}


def test_the_four_consumers_agree_on_one_store(three_runs):
    ids = ["eval-a", "eval-b", "eval-c"]
    trajs = queries.trajectories_df(three_runs, ids)
    frame = FeatureFrame.of(trajs, TOOLS)

    # rewards within each GRPO group: the steering page, `orchestra rescore RUN`, the trainer
    app = group_rewards(frame, P)
    rescored = pd.DataFrame([s.model_dump() for r in ids for s in rescore_run(three_runs, r, P_TEXT).scores])
    records = [TrajectoryRecord(**{k: v for k,
                                   v in row.items() if k in TrajectoryRecord.model_fields and not pd.isna(v)})
               for row in trajs.to_dict("records")]
    weights = {n: P.get(n, 0.0) for n in frame.names}
    rows = [RowFeatures.of(t, TOOLS, weights, format_ok=True) for t in records]
    # the trainer's group ids are unique per run (`step:example`); eval runs log the task id
    trainer = score_rows([RowFeatures(**{**r.__dict__, "group_id": f"{t.run_id}/{r.group_id}"}) for r,
                          t in zip(rows, records)], TOOLS)
    assert (app.reward > 0).any() and (app.reward == 0).any()
    assert by_key(rescored, "reward") == pytest.approx(by_key(app, "reward"), abs=1e-12)
    assert by_key(rescored, "advantage") == pytest.approx(by_key(app, "advantage"), abs=1e-12)
    assert by_key(trajs.assign(r=trainer.rewards), "r") == pytest.approx(by_key(app, "reward"), abs=1e-12)
    assert by_key(trajs.assign(a=trainer.advantages), "a") == pytest.approx(by_key(app, "advantage"), abs=1e-12)

    # the preference score across runs (Table 3): the steering ranking, the report, `orchestra rescore --across`
    ranking = preference_ranking(frame, ids, P)
    report = load_report(three_runs, ids, preference=P_TEXT, n_resamples=10).preference
    across = rescore_across(three_runs, ids, P_TEXT)
    assert set(ranking.n_tasks) == {3} and ranking.preference_score.nunique() == 3   # t4 is eval-b's alone
    expected = dict(zip(ranking.run_id, ranking.preference_score))
    assert dict(zip(report.run_id, report.preference_score)) == pytest.approx(expected, abs=1e-12)
    assert across.preference_scores == pytest.approx(expected, abs=1e-12)
    assert list(report.sort_values("preference_score", ascending=False).run_id) == list(ranking.run_id)
    shared = shared_rows(frame, ids)
    stored = pd.DataFrame([s.model_dump() for r in ids for s in across.scores[r]])
    assert by_key(stored, "reward") == pytest.approx(by_key(shared.rows.assign(r=task_rewards(shared, P)), "r"),
                                                     abs=1e-12)


# ---------------------------------------------------------------- properties of the frame


rollout = st.tuples(
    st.sampled_from(["t1", "t2", "t3"]),                                   # task
    st.dictionaries(st.sampled_from(["web", "gpt-5", "calc"]), st.integers(0, 5), max_size=3),
    st.sampled_from([0.0, 1.0]),                                           # outcome
    st.floats(0, 1, allow_nan=False), st.floats(0, 100, allow_nan=False),  # cost, latency
)
weights = st.dictionaries(st.sampled_from(["web", "gpt-5", "calc", "outcome", "compute", "latency"]),
                          st.floats(0, 1, allow_nan=False), min_size=1)


def frame_of(rows: list, toolkit: list[str] = ()) -> FeatureFrame:
    return FeatureFrame.of(pd.DataFrame({
        "run_id": "r", "task_id": [r[0] for r in rows], "sample_idx": range(len(rows)),
        "group_id": [r[0] for r in rows],
        "tool_counts_json": [json.dumps(r[1]) for r in rows], "outcome": [r[2] for r in rows],
        "cost_usd": [r[3] for r in rows], "latency_s": [r[4] for r in rows]}), toolkit)


@settings(max_examples=60, deadline=None)
@given(st.lists(rollout, min_size=1, max_size=12), weights, st.permutations(["web", "gpt-5", "calc"]))
def test_column_order_changes_no_reward_and_follows_the_toolkit(rows, P, toolkit):
    frame = frame_of(rows, toolkit)
    assert frame.tools == toolkit and frame.names[-3:] == ["outcome", "compute", "latency"]
    unknown = frame_of(rows)                                               # no toolkit: counted tools, sorted
    assert unknown.tools == sorted(unknown.tools)
    np.testing.assert_allclose(frame.rewards(P), unknown.rewards(P), rtol=1e-12, atol=1e-12)  # sums in another order


@settings(max_examples=60, deadline=None)
@given(st.lists(rollout, min_size=1, max_size=12), weights)
def test_unsolved_rows_get_zero_and_constant_columns_add_nothing(rows, P):
    frame = frame_of(rows)
    R = frame.rewards(P)
    assert (R[frame.rows.outcome.to_numpy() == 0] == 0).all()
    constant = frame_of([(t, {**c, "calc": 3}, o, 0.5, 7.0) for t, c, o, _, _ in rows])   # calc, cost, latency constant
    only_constant = {k: v for k, v in P.items() if k in ("calc", "compute", "latency")}
    assert (constant.rewards(only_constant) == 0).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(rollout, min_size=1, max_size=12), st.lists(rollout, min_size=1, max_size=6), weights)
def test_a_group_is_the_rollouts_of_one_task(rows, others, P):
    """Rollouts of another task change nothing in a task's rewards; group labels name the task."""
    mine = [("t1", *r[1:]) for r in rows]
    elsewhere = [("t2", *r[1:]) for r in others]
    alone, together = frame_of(mine, ["web", "gpt-5", "calc"]), frame_of(mine + elsewhere, ["web", "gpt-5", "calc"])
    np.testing.assert_allclose(together.rewards(P)[: len(mine)], alone.rewards(P))
    assert set(together.rows.group) == {"t1", "t2"}


def test_rows_logged_without_a_group_id_group_by_task_and_step():
    frame = FeatureFrame.of(pd.DataFrame({"run_id": ["a", "a", "b"], "task_id": ["t1", "t2", "t1"],
                                          "group_id": ["", "", ""],
                                          "train_step": [0, 0, 0], "tool_counts_json": ["{}"] * 3, "outcome": [1.0] * 3,
                                          "cost_usd": [0.1] * 3, "latency_s": [1.0] * 3}))
    assert list(frame.rows.group) == ["t1@0", "t2@0", "t1@0"]
    assert len(set(frame.group_codes)) == 3                                 # a group never spans runs


def test_an_unsolved_rollout_inflating_a_feature_earns_nothing():
    honest = [("t1", {"gpt-5": 1}, 1.0, 0.02, 10.0), ("t1", {"web": 2}, 1.0, 0.01, 20.0)]
    cheat = ("t1", {"gpt-5": 1000}, 0.0, 0.0,
             0.0)                          # calls the preferred model, free and instant
    P = {"gpt-5": 1.0, "compute": 1.0, "latency": 1.0}
    with_cheat = frame_of([*honest, cheat]).rewards(P)
    assert with_cheat[-1] == 0.0
    assert with_cheat[:2].min() >= 0 and with_cheat[:2].max() <= sum(P.values())


def test_feature_tools_put_the_toolkit_first():
    assert feature_tools(["web", "gpt-5"], ['{"zeta": 1}', {"web": 2, "alpha": 1}, None]) == ["web", "gpt-5", "alpha",
                                                                                              "zeta"]


def test_the_module_examples_hold():
    import doctest

    import lab.scoring

    assert doctest.testmod(lab.scoring).failed == 0
