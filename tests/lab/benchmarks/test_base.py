"""Tests for lab.benchmarks.base: a reference answer becomes `numeric` only when it is a bare number."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lab.benchmarks.base import infer_answer, parse_bare_number
from lab.graders import parse_number


@given(st.integers(min_value=-10**12, max_value=10**12))
def test_a_bare_integer_reads_as_itself_with_or_without_thousands_commas(n: int) -> None:
    assert parse_bare_number(str(n)) == n and parse_bare_number(f"{n:,}") == n
    assert infer_answer(f" {n:,} ") == (n, "numeric")


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["years", "km", "%", "/2"]))
def test_a_number_in_words_stays_text_though_a_prediction_reads_it(n: int, tail: str) -> None:
    text = f"{n} {tail}" if tail[0].isalpha() else f"{n}{tail}"
    assert parse_bare_number(text) is None and infer_answer(text) == (text, "exact")
    if tail[0].isalpha():  # the grader's reading of an answer is lenient: the one number it states
        assert parse_number(text) == n


def test_codes_with_a_leading_zero_keep_their_digits() -> None:
    assert parse_bare_number("007") is None and infer_answer("007") == ("007", "exact")
    assert parse_bare_number("1.92") == 1.92 and parse_bare_number("inf") is None
