"""The compare page (`app/views/compare.py`) in Streamlit's AppTest: it renders on a store with eval and
training runs, and an empty store says what to do."""

from __future__ import annotations

from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("compare")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("compare")


def test_a_ci_spanning_zero_is_called_not_significant_and_the_tables_read_a_then_b(app_store):
    from tests.helpers.dashboard import on, problems

    at = on("compare", runs="eval-a,eval-b,eval-step1")
    assert problems(at) == []
    at.selectbox(key="compare-a").set_value("eval-b").run()
    at.selectbox(key="compare-b").set_value("eval-a").run()
    paired = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    row = paired[(paired.run_a == "eval-a") & (paired.run_b == "eval-b")].iloc[0]
    assert (row.verdict == "not significant") == (row.ci_low <= 0 <= row.ci_high)
    accuracy = next(d.value for d in at.dataframe if "ci_low" in d.value.columns and "run" in d.value.columns)
    assert not [c for c in accuracy.columns if c.endswith(("_x", "_y"))]  # nothing leaks from a join
    shares = next(d.value for d in at.dataframe if "A − B" in d.value.columns)
    assert list(shares.columns) == ["A: eval-b", "B: eval-a", "A − B"]
    assert (shares["A − B"] == shares["A: eval-b"] - shares["B: eval-a"]).all()
    assert any(m.value == "Per task: eval-b (A) against eval-a (B)" for m in at.subheader)
    at.segmented_control(key="compare-filter").set_value("loss").run()
    wins = next(d.value for d in at.dataframe if "result" in d.value.columns)
    assert set(wins.result) <= {"loss"}
