"""The training page (`app/views/training.py`) in Streamlit's AppTest.

What a user would notice: a training run's learning curve (step 0 and later evaluations, one line per
instruction with its band, on the scale stored with the run, and the probe of the best call when the
run logs one), the training signals per step (an all-filtered step marked, not plotted as reward 0), and
the curve's points as a table; an empty store says what to do.
"""

from __future__ import annotations

import pytest

from lab.store import Store
from tests.helpers.curve_runs import P_STRING, WORDING, write_curve_run
from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, charts, on, problems


@pytest.fixture
def curve_store(tmp_path, make_run, monkeypatch):
    """A store holding one training run with evaluations at steps 0, 2 and 4 under two instructions."""
    path = tmp_path / "curve.duckdb"
    write_curve_run(Store(path), make_run)
    monkeypatch.setenv("ORCHESTRA_DB", str(path))
    return path


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("training")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("training")


def test_the_learning_curve_shows_each_instruction_from_step_0_on_the_runs_scale(curve_store):
    at = on("training", run="train-c")
    assert problems(at) == []
    curve = charts(at)[0]
    legend = [t.name for t in curve.data if t.showlegend is not False and t.name]
    assert legend == [WORDING, P_STRING, "P(best call)"]           # the probe's panel: the run logs it
    bands = [t for t in curve.data if t.fill == "toself"]   # U's and accuracy's, per instruction
    assert len(bands) == 4 and all(list(b.x) == [0, 2, 4, 4, 2, 0] for b in bands)
    assert {b.yaxis or "y" for b in bands} == {"y", "y2"} and list(curve.layout.yaxis2.range) == [0, 1.02]
    assert "c_ref = 1.000¢" in at.caption[0].value and "l_ref = 5.2 s" in at.caption[0].value
    points = at.dataframe[0].value
    assert list(points.step) == [0, 0, 2, 2, 4, 4] and set(points.instruction) == {WORDING, P_STRING}
    told = points[points.instruction == WORDING]
    assert list(told.accuracy.round(2)) == [0.33, 0.67, 1.0]


def test_the_training_signals_mark_the_step_where_everything_was_filtered(curve_store):
    signals = charts(on("training", run="train-c"))[1]
    marked = next(t for t in signals.data if t.name.startswith("every rollout filtered"))
    assert list(marked.x) == [3]
    shaded = [(shade.x0, shade.x1) for shade in signals.layout.shapes]
    assert set(shaded) == {(2.5, 3.5)} and len(shaded) == 5   # step 3, shaded on each of the five panels
    reward = next(t for t in signals.data if t.name == "reward/mean" and t.mode == "markers")
    assert reward.y[2] is None or reward.y[2] != reward.y[2]       # step 3 has no reward point (not a 0)
    names = {t.name for t in signals.data}
    assert {"groups/informative", "filtered/format", "filtered/homogeneous", "rounds/kept"} <= names
    axes = {t.name: t.yaxis or "y" for t in signals.data}
    assert axes["cost/per_trajectory"] != axes["latency/per_trajectory"]


def test_a_run_evaluated_before_step_0_points_still_gets_a_curve(app_store):
    at = on("training", run="train-x")
    assert problems(at) == [] and len(charts(at)) >= 3
    points = at.dataframe[-1].value
    assert list(points.step) == [1, 3] and list(points.accuracy) == [0.5, 1.0]
    assert "step 1" in at.caption[0].value                         # its scale: its earliest evaluation
