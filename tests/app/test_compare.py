"""The compare page (`app/views/compare.py`) in Streamlit's AppTest: it renders on a store with eval and
training runs, and an empty store says what to do."""

from __future__ import annotations

from tests.helpers.dashboard import on, problems


def test_the_page_renders_on_a_seeded_store(app_store):
    at = on("compare")
    assert problems(at) == []
    assert at.title and at.title[0].value


def test_an_empty_store_says_what_to_do(empty_store):
    at = on("compare")
    assert not at.exception and "No runs in" in at.info[0].value
