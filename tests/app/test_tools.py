"""The tool-use page (`app/views/tools.py`) in Streamlit's AppTest.

What a user would notice: the heat map splits by domain, offering the store's domains; an empty store
says what to do.
"""

from __future__ import annotations

from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, on, problems


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("tools")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("tools")


def test_the_heat_map_splits_by_domain(app_store):
    at = on("tools", runs="eval-a,eval-b")
    at.radio(key="heat-by").set_value("domain").run()
    assert at.selectbox(key="heat-value").options == ["maths", "shop"] and not problems(at)
