"""Graders: is an answer right? Exact match, numbers with tolerance, choices, database state.

`grade(task, answer, context)` dispatches on `task.answer_type` and never calls a model, so logged
answers can be regraded offline. The paper's LLM judge (GPT-5 in the paper), asked about answers that
exact match rejects, is `lab.judge`.

Every grader reads ONE candidate. A policy is trained on these rewards, so an answer that lists several
("Velmar, Tarn or Kado", "17, 18 or 19", "(A) (B) (C)") scores 0 even when one of them is right;
otherwise hedging would pay better than answering.

- exact: SQuAD/FRAMES normalisation (lowercase, drop punctuation and articles, squeeze whitespace) on
  the answer's final part ("... the answer is X", `\\boxed{X}`): equal to the reference or an alias, or
  the reference with only lead-in words before it and at most a short lower-case phrase after it.
- numeric: one final value (`1,234.5`, `3.2e4`, `-7`, `3/4`), the first number after an answer marker,
  else the last number, within the task's relative tolerance; integers compare exactly, however large.
  Other numbers listed beside it ("17, 18 or 19", "17/18/19", one per line) fail the answer.
- multiple_choice: a letter extracted from "(B)", "answer: B", "B." or the text of an option; other
  option letters listed beside it ("A or B", "(A) (B)") fail the answer.
- actions: the world's tau2-like check, the rollout's final database against its golden actions replayed
  (`lab.env.grading.state_check`), on the `lab.env` session the task's domain tools left in the context.

>>> normalize_answer("The  Velmar-Guild!")
'velmarguild'
>>> parse_number("about 1,234.5 metres")
1234.5
>>> exact_match("Velmar, Tarn and Kado", "Velmar").correct
False
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, Field

from lab.env.grading import state_check
from lab.env.state import Session
from lab.task import Task
from lab.tools.base import ToolContext


class GradeResult(BaseModel):
    """A verdict with a score in [0, 1] and one line saying why."""

    correct: bool
    score: float = Field(ge=0, le=1)
    detail: str = ""


def _verdict(ok: bool, detail: str) -> GradeResult:
    return GradeResult(correct=ok, score=1.0 if ok else 0.0, detail=detail)


# ---- normalisation ---------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | {"\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014"}
#: "answer is", "answer:", "answer =", "final answer (is)": a bare "answer" ("the answer depends on n")
#: does not mark where the answer starts.
_MARKER = re.compile(r"\b(?:final answer\s*(?:is\b|[:=])?|answer\s*(?:is\b|[:=]))\s*(?=\S)", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation; idempotent, case- and whitespace-insensitive."""
    text = str(text).lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def final_part(text: str) -> str:
    """The part of a free-text answer that states the answer (boxed, or after 'the answer is')."""
    return _final(text)[0]


def _final(text: Any) -> tuple[str, bool]:
    """(answer part, whether an explicit marker such as `\\boxed{}` or 'answer:' located it)."""
    text = str(text).strip()
    boxed = _BOXED.findall(text)
    if boxed:
        return boxed[-1], True
    # the last marker wins: "the answer depends on n ... so the final answer is 7" states 7
    markers = list(_MARKER.finditer(text))
    return (text[markers[-1].end():].strip(), True) if markers else (text, False)


# ---- one candidate ---------------------------------------------------------------------------------

#: Words that turn two candidates into a list ("17 or 18") or offer another one ("maybe Tarn").
_HEDGES = ("or", "and", "nor", "either", "neither", "vs", "versus", "maybe", "perhaps", "possibly")
#: What may stand between two items of one list: blanks, list punctuation, brackets, bullets, hedges.
_SEPARATOR = r"[\s,;/|&()\[\]{}*\u2022.\-\u2013\u2014]|\b(?:" + "|".join(_HEDGES) + r")\b"


def _listed_with(items: list[tuple[int, int, Any]], k: int, text: str, gap: re.Pattern[str]) -> list[Any]:
    """The value of `items[k]` and of every item chained to it by gaps that `gap` matches in full.

    `items` are (start, end, value) in text order. "17, 18 or 19" chains all three; in "40+2, so we get
    42" the words "so we get" end the chain, so 42 stands alone: working shown before one final value
    is not a list.
    """
    lo = hi = k
    while lo > 0 and gap.fullmatch(text[items[lo - 1][1] : items[lo][0]]):
        lo -= 1
    while hi + 1 < len(items) and gap.fullmatch(text[items[hi][1] : items[hi + 1][0]]):
        hi += 1
    return [value for _, _, value in items[lo : hi + 1]]


# ---- exact match -----------------------------------------------------------------------------------

#: Words that may precede the reference ("It is Velmar", "I think it's Velmar"). A closed list, so
#: nothing before the reference can be another candidate.
_LEAD_IN = frozenset("it its is was that this i think believe so therefore thus hence answer final my correct "
                     "one called named".split())
#: Words that may open the short phrase after the reference ("Velmar, in the north").
_TAIL_START = frozenset("in of on at near to from by for with located which who where is was a an the".split())
_TAIL_BANNED = frozenset(",;/|&+()[]{}<>\n\u2022:.?!")
_CHUNK = re.compile(r"\S+")
_LAST_WORD_CHAR = re.compile(r".*\w", re.DOTALL)


def exact_match(answer: Any, reference: Any, *, aliases: Iterable[Any] = ()) -> GradeResult:
    """Does the answer's final part name the reference (or one of its aliases) and no other candidate?

    Passes when the normalised final part equals a reference ("the velmar guild." for "Velmar Guild";
    "Paris, Texas" and "Smith and Sons" match themselves, separators and all), or when it states the
    reference with nothing but lead-in words before it (`_LEAD_IN`: "It is Velmar") and, after it,
    nothing or one short descriptive phrase (`_harmless_tail`: "Velmar, in the north").
    Fails on anything that lists, hedges or denies: "Velmar, Tarn and Kado", "Velmar Tarn Kado Brel",
    "Velmar (or Tarn)", "not Velmar", "the Velmar Guild" for "Velmar".
    Why lead-ins are a closed list but the tail is a rule: a candidate is credited only when no content
    word precedes it, so a list can never earn more than its first name alone; the tail rule (no
    capitals, digits, separators or hedges) then rejects the rest of the list as well.
    """
    part = final_part(answer)
    got = normalize_answer(part)
    references = [reference, *aliases]
    for ref in references:
        if got == normalize_answer(ref):
            return _verdict(True, "exact match" if ref is reference else f"matches alias '{ref}'")
    for ref in references:
        if _stated_alone(part, str(ref)):
            return _verdict(True, f"'{ref}' stated with harmless words")
    return _verdict(False, f"expected '{reference}', got '{part[:80]}'")


def _stated_alone(text: str, reference: str) -> bool:
    """True when `text` holds the reference's normalised words with only lead-ins before, harmless tail after."""
    ref = normalize_answer(reference).split()
    if not ref:
        return False
    # every normalised word with the whitespace-free chunk of raw text it came from ("Velmar," -> velmar)
    words = [(word, chunk) for chunk in _CHUNK.finditer(text) for word in normalize_answer(chunk.group()).split()]
    for i in range(len(words) - len(ref) + 1):
        j = i + len(ref)
        if [word for word, _ in words[i:j]] != ref or not all(word in _LEAD_IN for word, _ in words[:i]):
            continue
        last = words[j - 1][1]
        if j < len(words) and words[j][1] is last:  # the reference ends inside a longer chunk
            continue
        core = _LAST_WORD_CHAR.match(last.group())
        if _harmless_tail(text[last.start() + (core.end() if core else 0) :]):
            return True
    return False


def _harmless_tail(tail: str) -> bool:
    """Nothing but punctuation, or one short lower-case phrase opened by a preposition or article
    (", in the north"): no capitalised word, digit, list punctuation, hedge or 'not' in it."""
    phrase = tail.strip().strip("*\"'\u2019\u201d").lstrip(",:-\u2013\u2014 \t").rstrip(".!? \t")
    if not normalize_answer(phrase):
        return True
    words = phrase.split()
    return (len(words) <= 6 and words[0].lower() in _TAIL_START
            and not any(ch in _TAIL_BANNED or ch.isupper() or ch.isdigit() for ch in phrase)
            and not set(normalize_answer(phrase).split()) & {*_HEDGES, "not", "also"})


# ---- numbers ---------------------------------------------------------------------------------------

# Exponents are capped at three digits: Fraction("1e999999999") would build a billion-digit integer.
_NUMBER = re.compile(r"[-+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d{1,3})?|[-+\u2212]?\.\d+")
_SLASH = re.compile(r"\s*/\s*")
_NUMBER_SEP = rf"(?:{_SEPARATOR}|[%$\u20ac\u00a3~])"
#: Between two listed numbers: separators only, or a unit then a real separator ("17 kPa or 18 kPa").
#: A word followed by a blank alone ("2 times 21 is 42") is working, not a list.
_NUMBER_GAP = re.compile(rf"{_NUMBER_SEP}*|[ \t]*[^\W\d_]+\s*(?!\s){_NUMBER_SEP}+", re.IGNORECASE)


def _numbers(text: str) -> list[tuple[int, int, Fraction]]:
    """Every number in `text` as (start, end, exact value); "3/4" is one fraction, "17/18/19" three numbers."""
    found = [(m.start(), m.end(), m.group(), _decimal(m.group())) for m in _NUMBER.finditer(text)]
    found = [item for item in found if item[3] is not None]
    numbers: list[tuple[int, int, Fraction]] = []
    i = 0
    while i < len(found):
        j = i  # a run of numbers joined by slashes: two make a fraction, more make a list
        while j + 1 < len(found) and _SLASH.fullmatch(text[found[j][1] : found[j + 1][0]]):
            j += 1
        (start, _, _, num), (_, end, den_token, den) = found[i], found[j]
        if j == i + 1 and den_token.isdigit() and den != 0:
            numbers.append((start, end, num / den))
        else:
            numbers += [(a, b, value) for a, b, _, value in found[i : j + 1]]
        i = j + 1
    return numbers


def _decimal(token: str) -> Fraction | None:
    """The token's exact value (no float rounding of big integers); None past Python's 4300-digit limit."""
    try:
        return Fraction(token.replace(",", "").replace("\u2212", "-"))
    except ValueError:
        return None


def _read_number(text: Any) -> tuple[Fraction | None, list[Fraction]]:
    """(the final value, the distinct values listed beside it, itself included). Booleans are not numbers."""
    if isinstance(text, bool):
        return None, []
    if isinstance(text, (int, Fraction)):
        return Fraction(text), [Fraction(text)]
    if isinstance(text, float):
        # repr gives the shortest decimal that round-trips, so 187.74 compares as 18774/100, not binary.
        value = Fraction(repr(text)) if text == text and abs(text) != float("inf") else None
        return value, [] if value is None else [value]
    part, marked = _final(text)
    numbers = _numbers(part)
    if not numbers:
        return None, []
    # After "the answer is" the first number is the answer; in bare text the last one usually is.
    k = 0 if marked else len(numbers) - 1
    return numbers[k][2], sorted(set(_listed_with(numbers, k, part, _NUMBER_GAP)))


def parse_exact(text: Any) -> Fraction | None:
    """The answer's one final number as an exact fraction; None when it has none or lists several."""
    value, listed = _read_number(text)
    return value if len(listed) <= 1 else None


def parse_number(text: Any) -> float | None:
    """`parse_exact` as a float: the one final number an answer states, in a sentence or alone (a
    reference that must be nothing but a number is read by `lab.benchmarks.base.parse_bare_number`)."""
    value = parse_exact(text)
    return None if value is None else float(value)


def numeric_match(answer: Any, reference: Any, tolerance: float = 0.0) -> GradeResult:
    """Is the answer's ONE final value within `tolerance` (relative) of the reference?

    The final value is the first number after the last answer marker ("the answer is 42 (from 3 and 4)")
    or `\\boxed{}`, else the last number ("after computing 40+2 we get 42"). The answer fails when other
    numbers are listed beside that value, joined only by separators, brackets, bullets or hedge words,
    possibly after a unit: "17, 18 or 19", "either 17 or 18", "17/18/19" (but "3/4" is a fraction),
    "17 kPa or 18 kPa", one number per line. A printed program output ("42\\n") is one value.
    """
    got, listed = _read_number(answer)
    want = parse_exact(reference)
    if want is None:
        return _verdict(False, f"reference '{reference}' is not a number")
    if got is None:
        return _verdict(False, "no number in the answer")
    if len(listed) > 1:
        return _verdict(False, "lists several numbers: " + ", ".join(_show(v) for v in listed))
    slack = Fraction(tolerance) * abs(want) if tolerance else Fraction(0)
    if tolerance and want == 0:
        slack = Fraction(tolerance)  # relative tolerance around zero degrades to absolute
    ok = abs(got - want) <= slack
    return _verdict(ok, f"{_show(got)} vs {_show(want)} (rel tol {tolerance:g})")


def _show(value: Fraction) -> str:
    try:
        return f"{float(value):g}"
    except OverflowError:  # an answer such as "1e999" is past what a float holds
        return "beyond 1e308"


# ---- multiple choice -------------------------------------------------------------------------------

_LETTER_PATTERNS = [
    re.compile(r"(?i:answer)\s*(?i:is)?\s*[:=]?\s*\(?([A-Z])\)?(?![A-Za-z])"),
    re.compile(r"(?i:answer)\s*(?i:is)?\s*[:=]?\s*\(?([a-z])\)?\s*\.?\s*$"),  # "answer: c" at the very end
    re.compile(r"\(([A-Z])\)"),
    re.compile(r"^\s*([A-Z])\s*(?:[.):]|$)"),
]
_LETTER = re.compile(r"(?<![A-Za-z0-9])[A-Z](?![A-Za-z0-9])")
#: A capital that opens a sentence ("A quick check", "I think") is a word, not another option.
_OPENS_SENTENCE = re.compile(r"[ \t]+(?!(?:" + "|".join(_HEDGES) + r")\b)[a-z]")
_LETTER_GAP = re.compile(rf"(?:{_SEPARATOR}|\b(?:options?|choices?)\b)*", re.IGNORECASE)


def _read_choice(text: Any, choices: list[str] | None) -> tuple[str | None, list[str]]:
    """(the chosen letter, the distinct option letters listed beside it, itself included)."""
    text = str(text).strip()
    boxed = _BOXED.findall(text)
    if boxed:
        text = boxed[-1]
    valid = string.ascii_uppercase[: len(choices)] if choices else string.ascii_uppercase
    for pattern in _LETTER_PATTERNS:
        found = list(pattern.finditer(text))
        if found:
            own = (found[-1].start(1), found[-1].end(1), found[-1].group(1).upper())
            others = [(m.start(), m.end(), m.group()) for m in _LETTER.finditer(text)
                      if m.group() in valid and m.start() != own[0] and not _OPENS_SENTENCE.match(text, m.end())]
            letters = sorted([own, *others])
            return own[2], sorted(set(_listed_with(letters, letters.index(own), text, _LETTER_GAP)))
    if choices:
        norm = normalize_answer(final_part(text))
        for i, option in enumerate(choices):
            if norm == normalize_answer(option):
                return (string.ascii_uppercase[i], [string.ascii_uppercase[i]]) if i < 26 else (None, [])
    return None, []


def extract_choice(text: Any, choices: list[str] | None = None) -> str | None:
    """The one chosen letter, from "The answer is (B)", "(C)", "D." or the full text of an option;
    None when there is none or the answer lists several ("A or B", "(A) (B) (C)", "A, B")."""
    letter, listed = _read_choice(text, choices)
    return letter if len(listed) <= 1 else None


def choice_match(answer: Any, reference: str, choices: list[str] | None = None) -> GradeResult:
    """Is the one chosen letter the reference? Letters named in reasoning before a final "Answer: C"
    do not count; letters listed beside the chosen one ("Answer: A or B") fail the answer."""
    letter, listed = _read_choice(answer, choices)
    if letter is None:
        return _verdict(False, "no choice letter found")
    if len(listed) > 1:
        return _verdict(False, "lists several choices: " + ", ".join(listed))
    return _verdict(letter == str(reference).upper(), f"chose {letter}, expected {reference}")


# ---- actions (tau2) --------------------------------------------------------------------------------


def actions_match(task: Task, answer: Any, context: Any = None) -> GradeResult:
    """Final database of the rollout against golden: `context` is a `lab.env.state.Session`, or a
    ToolContext holding one under the task's domain (`context.state["bookshop"]`). The answer text is
    not read; an answer given as an action list is graded through the session it would leave
    (`lab.world.domain_tools.replayed_session`)."""
    session = context.state.get(getattr(task, "domain", None)) if isinstance(context, ToolContext) else context
    if isinstance(session, Session):
        return _verdict(*state_check(task, session))
    return _verdict(False, "no domain session to check against")


# ---- dispatch --------------------------------------------------------------------------------------


def grade(task: Task, answer: Any, context: Any = None) -> GradeResult:
    """Grade one answer by the task's answer type; never calls a model."""
    blank = answer is None or (isinstance(answer, str) and not answer.strip())
    if blank and task.answer_type != "actions":  # tau2 is judged by the database, not the final message
        return _verdict(False, "empty answer")
    kind = task.answer_type
    if kind == "exact":
        # a task may list accepted spellings in meta["aliases"] (none of today's loaders do)
        return exact_match(answer, task.answer, aliases=(getattr(task, "meta", None) or {}).get("aliases", ()))
    if kind == "numeric":
        # benchmark tasks may carry no tolerance (FRAMES numbers are exact); world tasks always do
        return numeric_match(answer, task.answer, getattr(task, "tolerance", 0.0))
    if kind == "multiple_choice":
        return choice_match(answer, task.answer, task.choices)
    if kind == "actions":
        return actions_match(task, answer, context)
    raise ValueError(f"task '{task.task_id}': unknown answer_type '{kind}'")
