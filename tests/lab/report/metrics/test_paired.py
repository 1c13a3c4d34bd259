"""Tests for lab.report.metrics.paired: the trained model against its start is compared pair by pair, by
(task, sample) and never by row order; runs on different tasks or samples are refused or intersected
explicitly; each delta and its interval are checked by hand; and the power formula's sizes reach
their targets."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.report.metrics import paired_cost_saving
from lab.report.metrics.curve import CurveScale, utility
from lab.report.metrics.paired import (
    DELTA_COLUMNS,
    expected_half_width,
    instruction_kind,
    needed_size,
    paired_deltas,
    paired_differences,
    paired_rows,
    paired_saving,
    pooled_delta,
    power_table,
    variance_components,
    verdict,
)

SCALE = CurveScale(c_ref=0.02, l_ref=10.0, basis="test")
P = json.dumps({"outcome": 1.0, "compute": 1.0, "latency": 0.5})


def run(run_id: str, rollouts: list[tuple[str, int, float, float, float]], preference: str = P) -> pd.DataFrame:
    """(task, sample, solved, cost_usd, latency_s) rollouts of one run as a trajectories frame."""
    return pd.DataFrame([{"run_id": run_id, "task_id": t, "sample_idx": k, "outcome": o, "cost_usd": c,
                          "latency_s": s, "preference_json": preference} for t, k, o, c, s in rollouts])


rollout = st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([0.0, 0.001, 0.01, 0.03, 0.1]), st.floats(0.0, 60.0))


@st.composite
def paired_runs(draw):
    """A start run and a trained run on the same tasks x samples (2-8 tasks, 1-3 samples each)."""
    tasks, samples = draw(st.integers(2, 8)), draw(st.integers(1, 3))
    keys = [(f"t{i}", k) for i in range(tasks) for k in range(samples)]
    start = [(t, k, *draw(rollout)) for t, k in keys]
    trained = [(t, k, *draw(rollout)) for t, k in keys]
    return run("start", start), run("trained", trained)


def deltas(frame: pd.DataFrame, **kwargs) -> pd.DataFrame:
    return paired_deltas(frame, "start", "trained", SCALE, n_resamples=200, **kwargs).set_index("measure")


@settings(max_examples=30, deadline=None)
@given(runs=paired_runs(), order=st.randoms(use_true_random=False))
def test_the_row_order_of_either_run_changes_nothing(runs, order):
    """Pairs are found by (task, sample): a trained run logged in another order is the same comparison."""
    start, trained = runs
    shuffled = trained.sample(frac=1.0, random_state=order.randint(0, 2**31 - 1))
    pd.testing.assert_frame_equal(deltas(pd.concat([start, trained])), deltas(pd.concat([shuffled, start])))


@settings(max_examples=30, deadline=None)
@given(runs=paired_runs(), order=st.randoms(use_true_random=False), shift=st.sampled_from([-1.0, 0.0, 1.0]))
def test_a_model_that_changes_every_task_alike_has_a_zero_width_interval_however_its_rows_are_ordered(runs, order,
                                                                                                     shift):
    """Trained = start with every latency moved by `shift` seconds: each task's difference is exactly
    `shift`, so the paired interval has no width. Pairing by row position after a shuffle would mix tasks
    and give the interval a width; so would an unpaired comparison."""
    start, _ = runs
    trained = start.assign(run_id="trained", latency_s=start.latency_s + 60.0 + shift)
    start = start.assign(latency_s=start.latency_s + 60.0)
    shuffled = trained.sample(frac=1.0, random_state=order.randint(0, 2**31 - 1))
    out = deltas(pd.concat([start, shuffled]))
    assert out.loc["latency", "delta"] == pytest.approx(shift)
    assert out.loc["latency", "half_width"] == pytest.approx(0.0, abs=1e-9)
    assert out.loc["accuracy", ["delta", "ci_low", "ci_high"]].tolist() == [0.0, 0.0, 0.0]


def test_a_trained_run_whose_tasks_are_relabelled_against_the_starts_is_not_paired_with_them():
    """The same rows under other task ids: a positional join would compare task 0 with task 1, the
    paired join finds the right partner, so the identical runs differ by nothing."""
    start = run("start", [("a", 0, 1, 0.01, 5.0), ("b", 0, 0, 0.05, 9.0), ("c", 0, 1, 0.02, 7.0)])
    trained = start.iloc[[2, 0, 1]].assign(run_id="trained")
    out = deltas(pd.concat([start, trained]))
    assert (out[["delta", "ci_low", "ci_high"]].abs() < 1e-12).all().all()


def test_runs_on_different_tasks_are_refused_unless_intersected_explicitly():
    start = run("start", [("a", 0, 1, 0.01, 5.0), ("b", 0, 0, 0.05, 9.0), ("c", 0, 1, 0.02, 7.0)])
    trained = run("trained", [("a", 0, 1, 0.01, 5.0), ("b", 0, 1, 0.03, 6.0), ("d", 0, 1, 0.02, 7.0)])
    frame = pd.concat([start, trained])
    with pytest.raises(LabInputError, match=r"different \(task, sample\) sets \(1 only in the start's, 1 only") as info:
        deltas(frame)
    assert "\n" not in str(info.value)
    assert deltas(frame, intersect=True).n_tasks.unique().tolist() == [2]
    with pytest.raises(LabInputError, match="share no"):
        deltas(pd.concat([start, trained.assign(task_id=["x", "y", "z"])]), intersect=True)


def test_runs_with_different_samples_of_a_task_are_refused():
    start = run("start", [("a", 0, 1, 0.01, 5.0), ("a", 1, 0, 0.01, 5.0), ("b", 0, 0, 0.05, 9.0)])
    trained = run("trained", [("a", 0, 1, 0.01, 5.0), ("b", 0, 0, 0.05, 9.0), ("b", 1, 0, 0.05, 9.0)])
    with pytest.raises(LabInputError, match="different"):
        deltas(pd.concat([start, trained]))


def test_a_rollout_logged_twice_or_shown_another_preference_is_refused():
    start = run("start", [("a", 0, 1, 0.01, 5.0), ("b", 0, 0, 0.05, 9.0)])
    with pytest.raises(LabInputError, match="twice"):
        deltas(pd.concat([start, start.assign(run_id="trained"), start.iloc[:1].assign(run_id="trained")]))
    other = start.assign(run_id="trained", preference_json=json.dumps({"outcome": 1.0}))
    with pytest.raises(LabInputError, match="different preferences"):
        deltas(pd.concat([start, other]))
    with pytest.raises(LabInputError, match="no trajectories"):
        deltas(start)


def test_each_delta_by_hand():
    # task a: 2 samples, task b: 1 sample per run; a task's samples are averaged before tasks are
    start = run("start", [("a", 0, 0, 0.02, 10.0), ("a", 1, 1, 0.04, 20.0), ("b", 0, 1, 0.06, 30.0)])
    trained = run("trained", [("a", 0, 1, 0.01, 10.0), ("a", 1, 1, 0.01, 10.0), ("b", 0, 1, 0.03, 20.0)])
    out = deltas(pd.concat([start, trained]))
    assert out.loc["accuracy", "start"] == pytest.approx((0.5 + 1.0) / 2)
    assert out.loc["accuracy", "delta"] == pytest.approx(((1 - 0.5) + 0) / 2)
    assert out.loc["cost", "start"] == pytest.approx(100 * (0.03 + 0.06) / 2)           # cents per task
    assert out.loc["cost", "delta"] == pytest.approx((0.01 + 0.03) / (0.03 + 0.06) - 1)  # trained / start - 1
    assert out.loc["latency", "delta"] == pytest.approx(((10 - 15) + (20 - 30)) / 2)
    u = {role: utility(f.outcome, f.cost_usd, f.latency_s, [1.0, 1.0, 0.5], SCALE.c_ref, SCALE.l_ref)
         for role, f in (("start", start), ("trained", trained))}
    by_task = {role: [values[:2].mean(), values[2]] for role, values in u.items()}
    assert out.loc["U", "delta"] == pytest.approx(np.mean(np.subtract(by_task["trained"], by_task["start"])))
    assert out.n_tasks.unique().tolist() == [2] and out.samples.unique().tolist() == [1.5]
    assert list(out.reset_index().columns) == DELTA_COLUMNS


@settings(max_examples=25, deadline=None)
@given(runs=paired_runs())
def test_the_cost_change_is_the_swapped_cost_saving_with_the_same_resamples(runs):
    frame = pd.concat(runs)
    out = deltas(frame)
    if not frame[frame.run_id == "start"].cost_usd.sum() > 0:
        return
    saving = paired_cost_saving(frame, "trained", "start", n_resamples=200)
    assert out.loc["cost", "delta"] == pytest.approx(-saving["saving"])
    np.testing.assert_allclose(out.loc["cost", ["ci_low", "ci_high"]].to_numpy(float),
                               [-saving["ci_high"], -saving["ci_low"]])   # NaN where a resample spent nothing
    for measure in ("accuracy", "latency", "U"):
        assert out.loc[measure, "ci_low"] <= out.loc[measure, "delta"] + 1e-9 <= out.loc[measure, "ci_high"] + 2e-9


def test_a_saving_between_two_instructions_needs_the_same_tasks_and_samples():
    spend = run("spend", [("a", 0, 1, 0.10, 5.0), ("b", 0, 1, 0.10, 5.0)], json.dumps({"outcome": 1.0}))
    save = run("save", [("a", 0, 1, 0.06, 5.0), ("b", 0, 1, 0.06, 5.0)])
    assert paired_saving(pd.concat([spend, save]), "save", "spend")["saving"] == pytest.approx(0.4)
    with pytest.raises(LabInputError, match="different"):
        paired_saving(pd.concat([spend, save.iloc[:1]]), "save", "spend")


def test_variance_components_recover_a_known_split():
    rng = np.random.default_rng(0)
    tasks, samples, between, within = 400, 6, 0.04, 0.25
    effects = rng.normal(0, np.sqrt(between), tasks)
    d = pd.DataFrame({"task_id": np.repeat(np.arange(tasks), samples), "sample_idx": np.tile(np.arange(samples), tasks),
                      "x": np.repeat(effects, samples) + rng.normal(0, np.sqrt(within), tasks * samples)})
    b, w = variance_components(d, "x")
    assert b == pytest.approx(between, rel=0.25) and w == pytest.approx(within, rel=0.1)
    one = d[d.sample_idx == 0]
    b1, w1 = variance_components(one, "x")   # one sample per task: the split cannot be seen
    assert np.isnan(w1) and b1 == pytest.approx(one.x.var(ddof=1))


@settings(max_examples=200, deadline=None)
@given(between=st.floats(0.0, 0.3), within=st.floats(0.0, 1.0), target=st.floats(0.01, 0.3),
       max_tasks=st.integers(2, 500))
def test_the_needed_size_reaches_the_target_with_the_fewest_samples_then_the_fewest_tasks(between, within, target,
                                                                                          max_tasks):
    size = needed_size(between, within, target, max_tasks, max_samples=32)
    if size is None:
        assert expected_half_width(between, within, max_tasks, 32) > target
        return
    tasks, samples = size
    assert 2 <= tasks <= max_tasks and expected_half_width(between, within, tasks, samples) <= target * (1 + 1e-9)
    if samples > 1:   # one sample fewer does not reach it even on every task allowed
        assert expected_half_width(between, within, max_tasks, samples - 1) > target * (1 - 1e-9)
    if tasks > 2:     # nor one task fewer at this many samples
        assert expected_half_width(between, within, tasks - 1, samples) > target * (1 - 1e-9)


def test_the_formula_predicts_the_bootstrap_half_width_of_a_simulated_pair_of_models():
    """Two models that solve each task with its own probability (trained 10 points better on half the
    tasks): the formula from a pilot of 80 tasks x 2 samples predicts the half-width paired_deltas then
    reaches on 300 tasks x 4 samples, within 15%."""
    rng = np.random.default_rng(1)

    def simulate(tasks: int, samples: int) -> pd.DataFrame:
        p = rng.uniform(0.1, 0.9, tasks)
        lift = np.where(np.arange(tasks) % 2 == 0, 0.1, 0.0)
        rows = []
        for role, prob in (("start", p), ("trained", np.clip(p + lift, 0, 1))):
            for t in range(tasks):
                for k in range(samples):
                    rows.append((role, f"t{t}", k, float(rng.random() < prob[t]), 0.01, 1.0))
        return pd.DataFrame(rows, columns=["run_id", "task_id", "sample_idx", "outcome", "cost_usd", "latency_s"]) \
            .assign(preference_json=P)

    pilot = paired_differences(simulate(80, 2), "start", "trained", SCALE)
    power = power_table(pilot, {"accuracy": 0.05}, max_tasks=300).iloc[0]
    predicted = expected_half_width(power.s2_between, power.s2_within, 300, 4)
    reached = paired_deltas(simulate(300, 4), "start", "trained", SCALE).set_index("measure").half_width["accuracy"]
    assert reached == pytest.approx(predicted, rel=0.15)
    assert bool(power.reached) == bool(power.half_width <= 0.05)


def test_the_cost_difference_is_linearised_around_the_pooled_ratio():
    start = run("start", [("a", 0, 1, 0.02, 1.0), ("b", 0, 1, 0.04, 1.0)])
    trained = run("trained", [("a", 0, 1, 0.01, 1.0), ("b", 0, 1, 0.02, 1.0)])   # half the cost on every task
    d = paired_differences(pd.concat([start, trained]), "start", "trained", SCALE)
    assert d.cost.abs().max() == pytest.approx(0.0, abs=1e-12)   # a constant ratio has no spread
    assert list(d.columns) == ["task_id", "sample_idx", "accuracy", "cost", "latency", "U"]


def test_paired_rows_join_on_the_key():
    start = run("start", [("a", 0, 1, 0.01, 5.0), ("b", 0, 0, 0.05, 9.0)])
    trained = run("trained", [("b", 0, 1, 0.02, 4.0), ("a", 0, 0, 0.03, 6.0)])
    pairs = paired_rows(pd.concat([start, trained]), "start", "trained").set_index("task_id")
    assert pairs.loc["b", ["outcome_start", "outcome_trained", "cost_usd_trained"]].tolist() == [0, 1, 0.02]


@pytest.mark.parametrize("low, high, expected", [(0.25, 0.4, "holds"), (0.05, 0.15, "fails"), (0.1, 0.3, "not shown")])
def test_a_verdict_needs_the_whole_interval(low, high, expected):
    assert verdict(low, high, holds_at=0.2, fails_below=0.2) == expected


@pytest.mark.parametrize("weights, kind", [
    ({"outcome": 1.0}, "accuracy-only"), ({"outcome": 1.0, "compute": 0.8}, "cost-saving"),
    ({"outcome": 1.0, "compute": 1.0}, "cost-saving"), ({"outcome": 1.0, "latency": 1.0, "compute": 0.2}, "speed"),
    ({"outcome": 1.0, "compute": 1.0, "latency": 1.0}, None), ({"outcome": 1.0, "gpt-5": 1.0}, None),
    ({"outcome": 1.0, "compute": 0.5, "qwen3-32b": 1.0}, None), ({"outcome": 0.0, "compute": 1.0}, None),
])
def test_instruction_kinds_follow_the_weights(weights, kind):
    assert instruction_kind(weights) == kind


def test_a_target_must_be_positive():
    with pytest.raises(LabInputError, match="positive"):
        needed_size(0.1, 0.1, 0.0, 100)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=12),
       st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=12), st.floats(-0.5, 0.5))
def test_pooling_instructions_weighs_each_task_once(first, second, shift):
    """The pooled U delta is the mean over tasks of each task's mean over instructions and samples: a task
    with more samples under one instruction does not count more, a constant gain under every instruction
    shifts it by that gain, and its interval holds the estimate."""
    n = min(len(first), len(second))
    tasks = [f"t{i}" for i in range(n)]
    a = pd.DataFrame({"task_id": tasks, "sample_idx": 0, "U": first[:n]})
    b = pd.DataFrame({"task_id": tasks * 2, "sample_idx": [0] * n + [1] * n, "U": second[:n] * 2})
    pooled = pooled_delta([a, b])
    expected = np.mean([(x + y) / 2 for x, y in zip(first[:n], second[:n])])
    assert pooled["delta"] == pytest.approx(expected, abs=1e-9) and pooled["n_tasks"] == n
    assert pooled["ci_low"] - 1e-9 <= pooled["delta"] <= pooled["ci_high"] + 1e-9
    moved = pooled_delta([a.assign(U=a.U + shift), b.assign(U=b.U + shift)])
    assert moved["delta"] == pytest.approx(expected + shift, abs=1e-9)
