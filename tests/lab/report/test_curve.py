"""Tests for lab.report.curve: a training run's learning curve read from a store of linked evaluation
runs, one point per step and instruction, on the one scale stored with the train run."""

from __future__ import annotations

import json

import pytest

from lab.records import RunRecord
from lab.report.curve import curve_scale, learning_curve_df
from lab.report.metrics.curve import CURVE_COLUMNS, fixed_scale
from lab.store import Store, queries
from tests.helpers.curve_runs import P_STRING, SCALE, WORDING, eval_run_id, write_curve_run


@pytest.fixture
def store(tmp_path, make_run) -> Store:
    store = Store(tmp_path / "curve.duckdb")
    write_curve_run(store, make_run)
    return store


def test_one_point_per_step_and_instruction_named_as_the_config_lists_it(store):
    curve = learning_curve_df(store, "train-c", n_resamples=200)
    assert list(curve.columns) == CURVE_COLUMNS
    assert sorted(curve.instruction.unique()) == sorted([WORDING, P_STRING])
    for _, points in curve.groupby("instruction"):
        assert list(points.step) == [0, 2, 4] and (points.n_tasks == 3).all()
    told = curve[curve.instruction == WORDING].set_index("step")
    assert list(told.accuracy.round(3)) == [0.333, 0.667, 1.0]
    assert list(told.U.round(3)) == [0.333, 0.667, 1.0]       # "money is no object": U is the solved share
    assert (told.ci_low <= told.U).all() and (told.U <= told.ci_high).all()


def test_every_point_uses_the_scale_stored_with_the_train_run(store, make_run, tmp_path):
    curve = learning_curve_df(store, "train-c", n_resamples=200)
    assert curve.attrs["scale"]["c_ref"] == SCALE["c_ref"]
    costs = curve[curve.instruction == P_STRING].set_index("step")
    # U = solved - cost / c_ref: cost in the frame is in cents, c_ref in dollars
    expected = costs.accuracy - costs.cost / 100 / SCALE["c_ref"]
    assert costs.U.to_numpy() == pytest.approx(expected.to_numpy())
    # a run that stored none (still evaluating step 0, or logged before curves) uses its earliest step
    other = Store(tmp_path / "unscaled.duckdb")
    write_curve_run(other, make_run, "train-u", scale=None, steps=(2, 4))
    step2 = queries.trajectories_df(other, [eval_run_id("train-u", 2, i) for i in (WORDING, P_STRING)])
    assert curve_scale(other, "train-u") == fixed_scale(step2, basis="step 2")


def test_an_evaluation_still_running_is_no_point_yet(store):
    run = queries.run(store, eval_run_id("train-c", 4, WORDING))
    store.write_run(run.model_copy(update={"status": "running"}))
    curve = learning_curve_df(store, "train-c", n_resamples=200)
    assert list(curve[curve.instruction == WORDING].step) == [0, 2]


def test_a_train_run_with_no_evaluation_has_an_empty_curve(store):
    store.write_run(RunRecord(run_id="fresh", kind="train", name="fresh", config_json=json.dumps({})))
    curve = learning_curve_df(store, "fresh")
    assert curve.empty and list(curve.columns) == CURVE_COLUMNS
