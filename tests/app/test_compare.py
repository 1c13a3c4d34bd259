"""The compare page (`app/views/compare.py`) in Streamlit's AppTest: it renders on a store with eval and
training runs, and an empty store says what to do."""

from __future__ import annotations

from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("compare")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("compare")
