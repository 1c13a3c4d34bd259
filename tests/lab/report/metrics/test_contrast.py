"""Tests for lab.report.metrics.contrast: a model's contrast between two instructions is 0 when it ignores
them, blind to a saving made under both (the thrift a reviewer would call out), moves only when the asking
instruction is followed more, flips with the instructions, ignores the unit of cost, and refuses runs it
cannot pair."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.report.metrics.contrast import (
    CONTRAST_CURVE_COLUMNS,
    InstructionRuns,
    contrast_curve,
    instruction_contrast,
    tool_share_contrast,
)

START = InstructionRuns(baseline="start-acc", asking="start-cost")
TRAINED = InstructionRuns(baseline="trained-acc", asking="trained-cost")

costs = st.floats(min_value=1e-4, max_value=1.0, allow_nan=False)
#: (T tasks x K samples) of positive costs, one draw per run role
grids = st.integers(min_value=2, max_value=6).flatmap(
    lambda tasks: st.integers(min_value=1, max_value=3).flatmap(
        lambda samples: st.lists(st.lists(costs, min_size=samples, max_size=samples), min_size=tasks, max_size=tasks)))


def trajs(**runs: list[list[float]]) -> pd.DataFrame:
    """A trajectories frame: run id -> [task][sample] cost, solved when the cost is above 0.01."""
    return pd.DataFrame([{"run_id": run_id.replace("_", "-"), "task_id": f"t{t}", "sample_idx": k, "cost_usd": c,
                          "latency_s": 1.0 + c, "outcome": float(c > 0.01)}
                         for run_id, grid in runs.items() for t, row in enumerate(grid) for k, c in enumerate(row)])


def scaled(grid: list[list[float]], factor: float) -> list[list[float]]:
    return [[c * factor for c in row] for row in grid]


def row(frame: pd.DataFrame, measure: str) -> pd.Series:
    return frame.set_index("measure").loc[measure]


@settings(max_examples=40, deadline=None)
@given(grid=grids, factor=st.floats(min_value=0.05, max_value=1.0))
def test_a_saving_made_under_both_instructions_is_no_contrast(grid, factor):
    """The trained model spends `factor` of the start under both instructions: it is thriftier, not more
    obedient, so its contrast equals the start's and trained - start is 0."""
    frame = trajs(start_acc=grid, start_cost=grid, trained_acc=scaled(grid, factor), trained_cost=scaled(grid, factor))
    ratio = row(instruction_contrast(frame, START, TRAINED), "log cost_usd ratio")
    assert ratio.start == 0 and ratio.trained == pytest.approx(0, abs=1e-9)
    assert ratio.delta == pytest.approx(0, abs=1e-9) and ratio.ci_low == pytest.approx(0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(grid=grids, asked=st.floats(min_value=0.05, max_value=0.9), unit=st.floats(min_value=0.01, max_value=100))
def test_following_the_asking_instruction_more_is_a_positive_contrast_in_any_unit(grid, asked, unit):
    """The trained model spends `asked` of its baseline when asked to save; the start ignores the
    instruction. Its contrast is -ln(asked) on every task (so the CI is that point), the same in cents as
    in dollars, and swapping the instructions flips its sign."""
    runs = dict(start_acc=grid, start_cost=grid, trained_acc=grid, trained_cost=scaled(grid, asked))
    for factor in (1.0, unit):
        frame = trajs(**{name: scaled(g, factor) for name, g in runs.items()})
        ratio = row(instruction_contrast(frame, START, TRAINED), "log cost_usd ratio")
        expected = -math.log(asked)
        floored = any(c * factor < 1e-5 for r in grid for c in r) or any(c * factor * asked < 1e-5
                                                                          for r in grid for c in r)
        if not floored:
            assert ratio.delta == pytest.approx(expected) and ratio.ci_low == pytest.approx(expected)
    flipped = instruction_contrast(trajs(**runs), InstructionRuns("start-cost", "start-acc"),
                                   InstructionRuns("trained-cost", "trained-acc"))
    assert row(flipped, "log cost_usd ratio").delta == pytest.approx(-row(
        instruction_contrast(trajs(**runs), START, TRAINED), "log cost_usd ratio").delta)


def test_the_interval_covers_the_estimate_and_excludes_zero_only_with_a_consistent_effect():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.01, 0.05, size=(30, 2)).tolist()
    noisy = (np.array(base) * rng.choice([0.5, 2.0], size=(30, 2))).tolist()   # up as often as down
    consistent = (np.array(base) * 0.6).tolist()
    mixed = instruction_contrast(trajs(start_acc=base, start_cost=base, trained_acc=base, trained_cost=noisy),
                                 START, TRAINED)
    clear = instruction_contrast(trajs(start_acc=base, start_cost=base, trained_acc=base, trained_cost=consistent),
                                 START, TRAINED)
    for frame in (mixed, clear):
        r = row(frame, "log cost_usd ratio")
        assert r.ci_low <= r.delta <= r.ci_high and r.n_tasks == 30 and r.samples == 2
    assert row(mixed, "log cost_usd ratio").ci_low < 0 < row(mixed, "log cost_usd ratio").ci_high
    assert row(clear, "log cost_usd ratio").ci_low > 0


def test_accuracy_given_up_under_the_asking_instruction_is_reported_per_model():
    solved, unsolved = [[0.02, 0.02]] * 4, [[0.001, 0.001]] * 4     # outcome is cost > 0.01
    frame = trajs(start_acc=solved, start_cost=solved, trained_acc=solved, trained_cost=unsolved)
    accuracy = row(instruction_contrast(frame, START, TRAINED), "accuracy")
    assert accuracy.start == 0 and accuracy.trained == -1 and accuracy.delta == -1


def test_a_rollout_that_spent_nothing_counts_as_the_floor_not_minus_infinity():
    frame = trajs(start_acc=[[0.02], [0.02]], start_cost=[[0.02], [0.02]], trained_acc=[[0.02], [0.02]],
                  trained_cost=[[0.0], [0.02]])
    ratio = row(instruction_contrast(frame, START, TRAINED), "log cost_usd ratio")
    assert math.isfinite(ratio.delta) and ratio.delta == pytest.approx(math.log(0.02 / 1e-5) / 2)


def test_latency_is_contrasted_the_same_way():
    grid = [[0.02, 0.03], [0.04, 0.05]]
    frame = trajs(start_acc=grid, start_cost=grid, trained_acc=grid, trained_cost=grid)
    frame.loc[frame.run_id == "trained-cost", "latency_s"] /= 2
    ratio = row(instruction_contrast(frame, START, TRAINED, column="latency_s"), "log latency_s ratio")
    assert ratio.delta == pytest.approx(math.log(2))


@pytest.mark.parametrize("change, message", [
    (lambda f: f[f.run_id != "trained-cost"], "trained-cost (trained, asking) has no trajectories"),
    (lambda f: f[~((f.run_id == "start-cost") & (f.task_id == "t1"))], "ran different (task, sample) sets"),
    (lambda f: pd.concat([f, f[f.run_id == "start-acc"]]), "logs a (task, sample) twice"),
])
def test_runs_that_cannot_be_paired_are_refused_in_one_line(change, message):
    grid = [[0.02, 0.03], [0.04, 0.05]]
    frame = change(trajs(start_acc=grid, start_cost=grid, trained_acc=grid, trained_cost=grid))
    with pytest.raises(LabInputError, match=re.escape(message)):
        instruction_contrast(frame, START, TRAINED)
    with pytest.raises(LabInputError, match="contrast column 'outcome'"):
        instruction_contrast(trajs(start_acc=grid, start_cost=grid, trained_acc=grid, trained_cost=grid), START,
                             TRAINED, column="outcome")


def test_calls_moved_from_gpt5_to_mini_only_when_asked_show_in_the_tool_shares():
    """The start calls GPT-5 under both instructions; the trained model calls GPT-5-mini when asked to
    save and GPT-5 otherwise. Shares move by one for both slots, in opposite directions, and sum to 0."""
    grid = [[0.02, 0.03], [0.04, 0.05], [0.01, 0.02]]
    frame = trajs(start_acc=grid, start_cost=grid, trained_acc=grid, trained_cost=grid)
    calls = pd.DataFrame([{"run_id": r.run_id, "task_id": r.task_id, "sample_idx": r.sample_idx,
                           "tool_name": "answer-mini" if r.run_id == "trained-cost" else "answer-gpt5", "n_calls": 2}
                          for r in frame.itertuples()])
    shares = tool_share_contrast(calls, frame, START, TRAINED).set_index("tool_name")
    assert shares.loc["answer-gpt5"].delta == -1 and shares.loc["answer-mini"].delta == 1
    assert shares.loc["answer-gpt5"].start == 0 and shares.delta.sum() == 0


def test_runs_that_called_no_tool_have_no_shares_to_compare():
    grid = [[0.02], [0.03]]
    frame = trajs(start_acc=grid, start_cost=grid, trained_acc=grid, trained_cost=grid)
    empty = pd.DataFrame(columns=["run_id", "task_id", "sample_idx", "tool_name", "n_calls"])
    assert tool_share_contrast(empty, frame, START, TRAINED).empty


def test_a_greedy_baseline_with_one_sample_compares_with_a_sampled_model_task_by_task():
    """The best fair baseline may be the start decoded greedily (one sample a task) while the trained model
    samples 2: each model's samples are averaged per task first, so the comparison needs the same tasks,
    not the same samples; different tasks are refused."""
    greedy = trajs(start_acc=[[0.04], [0.02]], start_cost=[[0.02], [0.02]])
    sampled = trajs(trained_acc=[[0.04, 0.04], [0.02, 0.02]], trained_cost=[[0.01, 0.04], [0.02, 0.02]])
    both = pd.concat([greedy, sampled], ignore_index=True)
    ratio = row(instruction_contrast(both, START, TRAINED), "log cost_usd ratio")
    assert ratio.start == pytest.approx(math.log(2) / 2) and ratio.samples == 2
    assert ratio.trained == pytest.approx((math.log(4) + math.log(1)) / 2 / 2)
    other = trajs(trained_acc=[[0.04]], trained_cost=[[0.01]]).assign(task_id="t9")
    with pytest.raises(LabInputError, match="answered different tasks"):
        instruction_contrast(pd.concat([greedy, other], ignore_index=True), START, TRAINED)


def curve_trajs(grid: list[list[float]], steps: dict[int, tuple[float, float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A learning curve's evaluations: at each step, the accuracy-only run spends `grid` x its factor and
    the cost-saving run `grid` x its own; each rollout logs the P its instruction stands for."""
    weights = {"acc": '{"outcome": 1.0, "compute": 0.0}', "cost": '{"outcome": 1.0, "compute": 1.0}'}
    frames, points = [], []
    for step, factors in steps.items():
        for instruction, factor in zip(("acc", "cost"), factors, strict=True):
            run_id = f"s{step}-{instruction}"
            frames.append(trajs(**{run_id.replace("-", "_"): scaled(grid, factor)}).assign(
                preference_json=weights[instruction]))
            points.append({"run_id": run_id, "step": step, "instruction": f"told {instruction}"})
    return pd.concat(frames, ignore_index=True), pd.DataFrame(points)


#: Costs that stay above the contrast's floor (1e-5 USD) after both factors of the curve test (>= 0.0025).
curve_grids = st.lists(st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=2, max_size=2), min_size=2,
                       max_size=5)


@settings(max_examples=30, deadline=None)
@given(grid=curve_grids, thrift=st.floats(min_value=0.05, max_value=1.0),
       asked=st.floats(min_value=0.05, max_value=1.0))
def test_along_a_curve_only_spending_less_when_asked_moves_the_contrast(grid, thrift, asked):
    """Step 2: `thrift` of step 0's spend under both instructions; step 4: the same, and `asked` of that
    under the cost-saving one. The change against step 0 is 0 at step 2 (thrift) and -ln(asked) at step 4,
    whichever order the points come in and whatever the instructions are called."""
    frame, points = curve_trajs(grid, {0: (1.0, 1.0), 2: (thrift, thrift), 4: (thrift, thrift * asked)})
    curve = contrast_curve(frame, points.iloc[::-1])
    cost = curve[curve.measure == "log cost_usd ratio"].set_index("step")
    assert list(cost.index) == [0, 2, 4] and set(cost.pair) == {"cost-saving vs accuracy-only"}
    assert cost.delta[0] == 0 and cost.delta[2] == pytest.approx(0, abs=1e-9)
    assert cost.delta[4] == pytest.approx(-math.log(asked), abs=1e-9)
    assert cost.ci_low[4] == pytest.approx(-math.log(asked), abs=1e-9)   # the same on every task


def test_a_curve_without_both_instructions_of_a_pair_or_with_one_step_has_no_contrast():
    grid = [[0.02, 0.03], [0.04, 0.05]]
    frame, points = curve_trajs(grid, {0: (1.0, 1.0), 2: (1.0, 0.5)})
    assert contrast_curve(frame, points[points.instruction == "told acc"]).empty
    assert contrast_curve(frame, points[points.step == 0]).empty
    both = contrast_curve(frame, points)
    assert not both.empty and list(both.columns) == CONTRAST_CURVE_COLUMNS


def test_held_out_pairs_have_no_kind_and_an_unpairable_step_is_named_not_fatal():
    """The curve also evaluates the held-out pairs (a P per task: its first rollout may read as
    cost-saving), and its step 4 cost-saving run lost a task (a resumed run with fewer tasks): the pair is
    the two training instructions, step 4 is left out and said to be, steps 0 and 2 are drawn."""
    grid = [[0.02, 0.03], [0.04, 0.05]]
    frame, points = curve_trajs(grid, {0: (1.0, 1.0), 2: (1.0, 0.5), 4: (1.0, 0.25)})
    held_out = trajs(held_out=scaled(grid, 9.0)).assign(
        preference_json=['{"outcome": 1.0, "compute": 1.0}', '{"outcome": 1.0}'] * 2, run_id="s0-held")
    frame = pd.concat([frame[~((frame.run_id == "s4-cost") & (frame.task_id == "t1"))], held_out], ignore_index=True)
    points = pd.concat([points, pd.DataFrame([{"run_id": "s0-held", "step": 0, "instruction": "held-out"}])])
    curve = contrast_curve(frame, points)
    cost = curve[curve.measure == "log cost_usd ratio"].set_index("step")
    assert list(cost.index) == [0, 2] and cost.delta[2] == pytest.approx(math.log(2))
    assert curve.attrs["skipped"] == ["cost-saving vs accuracy-only, step 4: its runs hold other tasks or samples "
                                      "than step 0's"]
