"""Property tests for lab.graders: the reference passes, and no answer that lists several candidates does.

A policy is trained on these graders, so the properties range over random fictional names (capitalised
syllables, as in the offline world), numbers and option letters, joined by every list shape a policy
could try: separators, "and"/"or", slashes, semicolons, newlines, bullets, juxtaposition, brackets.
"""

from __future__ import annotations

import string
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from lab.graders import choice_match, exact_match, extract_choice, grade, normalize_answer, numeric_match
from lab.world.task import WorldTask

# Two or three syllables per word, so no name can spell an English word such as "it" or "in".
SYLLABLES = ["vel", "mar", "tar", "ka", "do", "brel", "zu", "quo", "rin", "gor", "nim", "pra", "sko", "ul", "vey"]
word = st.lists(st.sampled_from(SYLLABLES), min_size=2, max_size=3).map(lambda parts: "".join(parts).capitalize())
name = st.lists(word, min_size=1, max_size=3).map(" ".join)
#: FRAMES-style references that carry separators themselves ("Smith and Sons", "Paris, Texas").
compound = st.tuples(name, name, st.sampled_from([", ", " and "])).map(lambda t: t[2].join(t[:2]))
reference_name = st.one_of(name, compound)

JOINERS = [", ", " and ", " or ", ", or ", " / ", "/", "; ", "\n", " ", " & ", " | ", " vs "]
STYLES = [*JOINERS, "bullets", "numbered", "parenthesised", "either", "oxford"]
MARKS = ["{}", "The answer is {}", "Final answer: {}", "\\boxed{{{}}}", "{}."]


def listing(candidates: list[str], style: str) -> str:
    """The candidates written as one answer in the given list style."""
    if style == "bullets":
        return "\n".join(f"- {c}" for c in candidates)
    if style == "numbered":
        return "\n".join(f"{i}. {c}" for i, c in enumerate(candidates, 1))
    if style == "parenthesised":
        return candidates[0] + " " + " ".join(f"({c})" for c in candidates[1:])
    if style == "either":
        return "either " + " or ".join(candidates)
    if style == "oxford":
        return ", ".join(candidates[:-1]) + ", and " + candidates[-1]
    return style.join(candidates)


def _task(answer, answer_type="exact", **kw) -> WorldTask:
    return WorldTask(task_id="t", family="frames", domain="x", question="q?", answer=answer, answer_type=answer_type, **kw)


# ---- (a) the reference and its marked forms pass ----------------------------------------------------


@given(reference_name, st.sampled_from([*MARKS, "It is {}", "I think it's {}"]), st.booleans())
def test_the_reference_in_any_marked_form_passes(reference, mark, lower):
    answer = mark.format(reference)
    assert exact_match(answer.lower() if lower else answer, reference).correct
    assert grade(_task(reference), answer).correct


number_text = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.builds(lambda whole, cents: f"{whole}.{cents:02d}", st.integers(-9999, 9999), st.integers(1, 99)),
    st.integers(1000, 10**9).map(lambda n: f"{n:,}"),
)


def value(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


@given(number_text, st.sampled_from([*MARKS, "after some working we get {}", "{}\n"]))
def test_a_number_in_any_marked_form_passes(number, mark):
    assert numeric_match(mark.format(number).strip(), value(number)).correct
    assert grade(_task(float(value(number)), "numeric", tolerance=1e-9), mark.format(number)).correct


@given(st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_working_then_one_final_value_passes(a, b):
    assert numeric_match(f"after computing {a}+{b} we get {a + b}", a + b).correct
    assert numeric_match(f"{a} + {b} = {a + b}", a + b).correct


@given(st.integers(2, 8).flatmap(lambda n: st.tuples(st.just(n), st.sampled_from(string.ascii_uppercase[:n]))),
       st.sampled_from(["{}", "({})", "The answer is ({})", "Answer: {}", "\\boxed{{{}}}", "{}."]))
def test_the_reference_letter_in_any_marked_form_passes(case, mark):
    n, letter = case
    assert choice_match(mark.format(letter), letter, [f"option {i}" for i in range(n)]).correct


# ---- (b) an answer listing the reference with other candidates fails --------------------------------


@st.composite
def named_listings(draw):
    """(reference, an answer listing it among 1-4 other names in some order and style)."""
    reference = draw(reference_name)
    taken = set(normalize_answer(reference).split())
    # other names share no word with the reference, or juxtaposing them could spell the reference
    others = draw(st.lists(name.filter(lambda n: not set(normalize_answer(n).split()) & taken),
                           min_size=1, max_size=4, unique_by=normalize_answer))
    order = draw(st.permutations([reference, *others]))
    answer = draw(st.sampled_from(MARKS)).format(listing(order, draw(st.sampled_from(STYLES))))
    return reference, answer.lower() if draw(st.booleans()) else answer


@given(named_listings())
def test_listing_names_never_passes(case):
    reference, answer = case
    assert not exact_match(answer, reference).correct, answer
    assert not grade(_task(reference), answer).correct, answer


@st.composite
def letter_listings(draw):
    """(number of options, letters listed, an answer listing them in some order and style)."""
    n = draw(st.integers(4, 8))
    letters = draw(st.lists(st.sampled_from(string.ascii_uppercase[:n]), min_size=2, max_size=5, unique=True))
    style = draw(st.sampled_from([*STYLES, "all parenthesised"]))
    text = " ".join(f"({c})" for c in letters) if style == "all parenthesised" else listing(letters, style)
    mark = draw(st.sampled_from(["{}", "The answer is {}", "Answer: {}", "\\boxed{{{}}}"]))
    return n, letters, mark.format(text)


@given(letter_listings())
def test_listing_letters_never_passes(case):
    n, letters, answer = case
    options = [f"option {i}" for i in range(n)]
    assert extract_choice(answer, options) is None, answer
    for letter in letters:
        assert not choice_match(answer, letter, options).correct, answer


# ---- (c) a list of two or more distinct numbers fails -----------------------------------------------


@st.composite
def number_listings(draw):
    """(numbers listed, an answer listing them in some order and style)."""
    numbers = draw(st.lists(number_text, min_size=2, max_size=5, unique_by=value))
    # "a/b" with exactly two numbers is a fraction, not a list ("3/4"), so slashes need three or more
    styles = [s for s in STYLES if "/" not in s or len(numbers) > 2]
    mark = draw(st.sampled_from([*MARKS, "after some working we get {}"]))
    return numbers, mark.format(listing(numbers, draw(st.sampled_from(styles))))


@given(number_listings(), st.sampled_from([0.0, 1e-6, 1e-3]))
def test_listing_numbers_never_passes(case, tolerance):
    numbers, answer = case
    for number in numbers:
        assert not numeric_match(answer, value(number), tolerance).correct, answer
        assert not grade(_task(float(value(number)), "numeric", tolerance=tolerance), answer).correct, answer


# ---- (d) normalisation ------------------------------------------------------------------------------


@given(reference_name, st.sampled_from(["{}", "the {}", "{}!", "  {}  ", "'{}'"]), st.sampled_from([str.upper, str.lower]))
def test_case_punctuation_and_articles_do_not_matter(reference, wrap, case):
    answer = case(wrap.format(reference))
    assert normalize_answer(normalize_answer(answer)) == normalize_answer(answer)
    assert exact_match(answer, reference).correct
