"""The training page (`app/views/training.py`) in Streamlit's AppTest.

What a user would notice: a training run's logged steps are plotted and the evaluations linked to it
are listed by step; an empty store says what to do.
"""

from __future__ import annotations

from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, on, problems


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("training")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("training")


def test_training_page_plots_the_steps_and_the_linked_evaluations(app_store):
    at = on("training", run="train-x")
    assert problems(at) == [] and len(at.get("plotly_chart")) >= 3
    linked = at.dataframe[-1].value
    assert list(linked.train_step) == [1, 3] and list(linked.accuracy) == [0.5, 1.0]
