"""The runs page (`app/views/runs.py`, the page the app opens on) in Streamlit's AppTest.

What a user would notice: every logged run is listed, a simulated one marked; an empty store says
what to do.
"""

from __future__ import annotations

from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, started


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("runs")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("runs")


def test_the_runs_page_lists_every_run(app_store):
    at = started()
    (table,) = at.dataframe
    assert set(table.value.run_id) == {"eval-a", "eval-b", "eval-step1", "eval-step3", "train-x"}
    assert table.value.set_index("run_id").loc["eval-a", "simulated"]  # scripted orchestrator: marked
