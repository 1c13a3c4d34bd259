"""The training page (`app/views/training.py`) in Streamlit's AppTest.

What a user would notice: instruction following first (the contrast between the curve's accuracy-only and
cost-saving instructions per step, minus step 0's: flat for a policy that got cheaper under both, rising
for one that spends less only when asked), then a training run's learning curve (step 0 and later
evaluations, one line per instruction with its band, on the scale stored with the run, and the probe of
the best call when the run logs one), the training signals per step (an all-filtered step marked, not
plotted as reward 0), and the curve's points as a table; an empty store says what to do.
"""

from __future__ import annotations

import math

import pytest

from lab.store import Store
from tests.conftest import tiny_toolkit
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


def test_instruction_following_comes_first_and_stays_flat_for_a_policy_cheaper_under_both(curve_store):
    """The curve's policy moved from gpt-5 to qwen3-32b under both instructions: U under the cost-saving one
    rose, but it acts on the instruction no more than at step 0, and the page says so first."""
    at = on("training", run="train-c")
    assert problems(at) == []
    assert [h.value for h in at.subheader][:2] == ["Instruction following", "Learning curve"]
    following = charts(at)[0]
    (line,) = [t for t in following.data if t.mode == "lines+markers"]
    assert list(line.x) == [0, 2, 4] and all(abs(y) < 1e-12 for y in line.y)
    table = at.dataframe[0].value
    assert (table[table.measure == "log cost_usd ratio"].change.abs() < 1e-12).all()


def test_a_policy_that_spends_less_only_when_asked_shows_a_rising_contrast(tmp_path, make_run, monkeypatch):
    path = tmp_path / "follows.duckdb"
    write_curve_run(Store(path), make_run, follows=True)
    monkeypatch.setenv("ORCHESTRA_DB", str(path))
    at = on("training", run="train-c")
    assert problems(at) == []
    (line,) = [t for t in charts(at)[0].data if t.mode == "lines+markers"]
    toolkit = tiny_toolkit()
    gap = math.log(toolkit.get("gpt-5").cost(1000, 400) / toolkit.get("qwen3-32b").cost(1000, 400))
    assert gap > 0 and list(line.x) == [0, 2, 4] and line.y[0] == 0
    assert line.y[1] == pytest.approx(gap) and line.y[2] == pytest.approx(gap)


def test_the_learning_curve_shows_each_instruction_from_step_0_on_the_runs_scale(curve_store):
    at = on("training", run="train-c")
    assert problems(at) == []
    curve = charts(at)[1]
    legend = [t.name for t in curve.data if t.showlegend is not False and t.name]
    assert legend == [WORDING, P_STRING, "P(best call)"]           # the probe's panel: the run logs it
    bands = [t for t in curve.data if t.fill == "toself"]   # U's and accuracy's, per instruction
    assert len(bands) == 4 and all(list(b.x) == [0, 2, 4, 4, 2, 0] for b in bands)
    assert {b.yaxis or "y" for b in bands} == {"y", "y2"} and list(curve.layout.yaxis2.range) == [0, 1.02]
    scale = next(c.value for c in at.caption if "c_ref" in c.value)
    assert "c_ref = 1.000¢" in scale and "l_ref = 5.2 s" in scale
    points = at.dataframe[1].value
    assert list(points.step) == [0, 0, 2, 2, 4, 4] and set(points.instruction) == {WORDING, P_STRING}
    told = points[points.instruction == WORDING]
    assert list(told.accuracy.round(2)) == [0.33, 0.67, 1.0]


def test_the_training_signals_mark_the_step_where_everything_was_filtered(curve_store):
    signals = charts(on("training", run="train-c"))[2]
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
    assert "step 1" in next(c.value for c in at.caption if "c_ref" in c.value)   # its scale: its earliest evaluation
