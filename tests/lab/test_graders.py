"""Graders: normalisation, numbers, choices, dispatch by answer type, and the LLM judge."""

from __future__ import annotations

import asyncio
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from lab.graders import (
    LLMJudge,
    exact_match,
    extract_choice,
    grade,
    grade_async,
    normalize_answer,
    numeric_match,
    parse_exact,
    parse_number,
    parse_verdict,
)
from lab.tools.base import Observation
from lab.world.task import WorldTask

text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


def _task(answer, answer_type="exact", **kw) -> WorldTask:
    return WorldTask(task_id="t", family="hle", domain="x", question="q?", answer=answer, answer_type=answer_type, **kw)


@given(text)
def test_normalize_is_idempotent(s):
    assert normalize_answer(normalize_answer(s)) == normalize_answer(s)


@given(text, st.sampled_from(["  ", "\t", "\n "]))
def test_normalize_ignores_case_and_whitespace(s, pad):
    assert normalize_answer(pad + s.upper() + pad) == normalize_answer(s.upper())
    assert normalize_answer(" ".join(s.split())) == normalize_answer(s)


@given(st.integers(min_value=-10**30, max_value=10**30))
def test_integers_round_trip_with_thousands_separators(n):
    assert parse_exact(f"{n:,}") == n
    assert parse_exact(f"The answer is {n}.") == n


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_floats_round_trip_through_formatting(x):
    assert parse_number(repr(x)) == x
    assert abs(parse_number(f"{x:.6e}") - x) <= abs(x) * 1e-6 + 1e-300


def test_number_formats_in_free_text():
    assert parse_number("roughly 1,234.5 metres") == 1234.5
    assert parse_number("3.2e4") == 32000
    assert parse_exact("3/4") == Fraction(3, 4)
    assert parse_number(r"so \boxed{-12}") == -12
    assert parse_number("The answer is 42 (from 3 and 4)") == 42
    assert parse_number("no digits here") is None


def test_exact_grading_normalises_like_squad():
    task = _task("Velmar Guild")
    assert grade(task, "the velmar guild.").correct
    assert grade(task, "Final answer: The Velmar Guild").correct
    assert not grade(task, "Velmar Society").correct
    long_hedge = "It could be the Velmar Guild or the Tessaly Society or the Orvalen Company or the Brak"
    assert not grade(task, long_hedge).correct
    assert not grade(task, "   ").correct


def test_numeric_grading_uses_relative_tolerance_and_exact_integers():
    assert grade(_task(187.74, "numeric", tolerance=1e-3), "about 187.8 kPa").correct
    assert not grade(_task(187.74, "numeric", tolerance=1e-4), "187.8").correct
    big = 2565758460433441089682145280
    assert grade(_task(big, "numeric"), str(big)).correct
    assert not grade(_task(big, "numeric"), str(big + 1)).correct  # floats would call these equal
    assert grade(_task(0, "numeric", tolerance=0.01), "0.005").correct


def test_choice_extraction():
    assert extract_choice("The answer is (B).") == "B"
    assert extract_choice("answer: c") == "C"
    assert extract_choice("D. because it is quadratic") == "D"
    assert extract_choice("The answer is a bit unclear") is None
    assert extract_choice("O(n log n)", ["O(n)", "O(n log n)"]) == "B"
    task = _task("C", "multiple_choice", choices=["1", "2", "3"])
    assert grade(task, "I pick (C)").correct and not grade(task, "(A)").correct


class FakeLLM:
    """Stands in for an LLM tool; records prompts."""

    def __init__(self, reply: str, error: str | None = None) -> None:
        self.reply, self.error, self.prompts = reply, error, []

    async def execute(self, arguments, context=None):
        self.prompts.append(arguments["prompt"])
        return Observation.failure(self.error) if self.error else Observation(text=self.reply)


def test_judge_is_asked_only_when_exact_match_fails():
    task = _task("Velmar Guild")
    yes = FakeLLM("Yes, they are the same.")
    assert asyncio.run(grade_async(task, "the Velmar Guild", judge=LLMJudge(yes))).correct
    assert yes.prompts == []
    verdict = asyncio.run(grade_async(task, "the guild of Velmar", judge=LLMJudge(yes)))
    assert verdict.correct and "judge said yes" in verdict.detail
    assert "Reference answer: Velmar Guild" in yes.prompts[0] and "the guild of Velmar" in yes.prompts[0]
    assert not asyncio.run(grade_async(task, "Tessaly", judge=LLMJudge(FakeLLM("No.")))).correct
    failed = asyncio.run(grade_async(task, "Tessaly", judge=LLMJudge(FakeLLM("", error="rate limited"))))
    assert not failed.correct and "rate limited" in failed.detail


def test_verdict_parsing():
    assert parse_verdict("yes").correct
    assert not parse_verdict("No, different entity.").correct
    assert not parse_verdict("I cannot tell").correct


def test_hedges_and_negations_are_not_exact_matches():
    assert exact_match("Velmar, in the north", "Velmar").correct
    assert not exact_match("Velmar or Tarn or Kessa", "Velmar").correct
    assert not exact_match("not Velmar", "Velmar").correct


def test_the_last_answer_marker_states_the_answer():
    assert numeric_match("the answer is 5; on reflection the final answer is 7", 7).correct
    assert numeric_match("The answer depends on n; with n = 3 we get 42", 42).correct


def test_choices_beyond_h_are_read():
    assert extract_choice("The answer is J") == "J"
    options = [f"option {i}" for i in range(11)]
    assert extract_choice("option 10", options) == "K"
