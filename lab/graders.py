"""Graders: is an answer right? Exact match, numbers with tolerance, choices, database state, LLM judge.

`grade(task, answer, context)` dispatches on `task.answer_type` and never calls a model, so logged
answers can be regraded offline. `grade_async(..., judge=LLMJudge(tool))` adds the paper's LLM judge
(GPT-5 in the paper) for free-text answers that exact match rejects.

- exact: SQuAD/FRAMES normalisation (lowercase, drop punctuation and articles, squeeze whitespace) on
  the answer's final part ("... the answer is X"), accepting a short answer that contains the reference.
- numeric: the last number in the answer (`1,234.5`, `3.2e4`, `-7`, `3/4`, `\\boxed{12}`) within the
  task's relative tolerance; integers compare exactly, however large.
- multiple_choice: a letter extracted from "(B)", "answer: B", "B." or the text of an option.
- actions: the tau2 check, final database against golden actions replayed (`lab.world.domain_tools`).

>>> normalize_answer("The  Velmar-Guild!")
'velmarguild'
>>> parse_number("about 1,234.5 metres")
1234.5
"""

from __future__ import annotations

import re
import string
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, Field

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


def exact_match(answer: Any, reference: Any) -> GradeResult:
    ref = normalize_answer(reference)
    got = normalize_answer(final_part(answer))
    if got == ref:
        return _verdict(True, "exact match")
    # A short answer that contains the whole reference ("Velmar, in the north") is accepted; a long one
    # is not, and neither is a hedge or a negation ("Velmar or Tarn", "not Velmar"), so listing
    # candidates cannot game the grader.
    words = set(got.split())
    if (ref and f" {ref} " in f" {got} " and len(got.split()) <= len(ref.split()) + 4
            and not words & {"or", "not", "nor", "either", "neither"} - set(ref.split())):
        return _verdict(True, "reference contained in a short answer")
    return _verdict(False, f"expected '{reference}', got '{final_part(answer)[:80]}'")


# ---- numbers ---------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s*/\s*\d+)?|[-+]?\.\d+")


def parse_exact(text: Any) -> Fraction | None:
    """The last number in `text` as an exact fraction, or None. Booleans are not numbers."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, Fraction)):
        return Fraction(text)
    if isinstance(text, float):
        # repr gives the shortest decimal that round-trips, so 187.74 compares as 18774/100, not binary.
        return Fraction(repr(text)) if text == text and abs(text) != float("inf") else None
    part, marked = _final(text)
    found = _NUMBER.findall(part)
    if not found:
        return None
    # After "the answer is" the first number is the answer; in bare text the last one usually is.
    token = found[0 if marked else -1].replace(",", "").replace("\u2212", "-").replace(" ", "")
    try:
        if "/" in token:
            num, den = token.split("/")
            return Fraction(_decimal(num), 1) / _decimal(den) if _decimal(den) != 0 else None
        return _decimal(token)
    except (ValueError, ZeroDivisionError):
        return None


def _decimal(token: str) -> Fraction:
    # Fraction parses "1.5e3" and "-7" exactly (no float rounding of big integers).
    return Fraction(token)


def parse_number(text: Any) -> float | None:
    """The last number in `text` as a float, or None."""
    value = parse_exact(text)
    return None if value is None else float(value)


def numeric_match(answer: Any, reference: Any, tolerance: float = 0.0) -> GradeResult:
    got, want = parse_exact(answer), parse_exact(reference)
    if want is None:
        return _verdict(False, f"reference '{reference}' is not a number")
    if got is None:
        return _verdict(False, "no number in the answer")
    slack = Fraction(tolerance) * abs(want) if tolerance else Fraction(0)
    if tolerance and want == 0:
        slack = Fraction(tolerance)  # relative tolerance around zero degrades to absolute
    ok = abs(got - want) <= slack
    return _verdict(ok, f"{float(got):g} vs {float(want):g} (rel tol {tolerance:g})")


# ---- multiple choice -------------------------------------------------------------------------------

_LETTER_PATTERNS = [
    re.compile(r"(?i:answer)\s*(?i:is)?\s*[:=]?\s*\(?([A-Z])\)?(?![A-Za-z])"),
    re.compile(r"(?i:answer)\s*(?i:is)?\s*[:=]?\s*\(?([a-z])\)?\s*\.?\s*$"),  # "answer: c" at the very end
    re.compile(r"\(([A-Z])\)"),
    re.compile(r"^\s*([A-Z])\s*(?:[.):]|$)"),
]


def extract_choice(text: Any, choices: list[str] | None = None) -> str | None:
    """The chosen letter, from "The answer is (B)", "(C)", "D." or the full text of an option."""
    text = str(text).strip()
    boxed = _BOXED.findall(text)
    if boxed:
        text = boxed[-1]
    for pattern in _LETTER_PATTERNS:
        found = pattern.findall(text)
        if found:
            return found[-1].upper()
    if choices:
        norm = normalize_answer(final_part(text))
        for i, option in enumerate(choices):
            if norm == normalize_answer(option):
                return string.ascii_uppercase[i] if i < 26 else None
    return None


def choice_match(answer: Any, reference: str, choices: list[str] | None = None) -> GradeResult:
    letter = extract_choice(answer, choices)
    if letter is None:
        return _verdict(False, "no choice letter found")
    return _verdict(letter == str(reference).upper(), f"chose {letter}, expected {reference}")


# ---- actions (tau2) --------------------------------------------------------------------------------


def actions_match(task: Any, answer: Any, context: Any = None) -> GradeResult:
    """Final database of the rollout (a `DomainSession`, or a ToolContext holding one) against golden.

    Without a session, an answer given as an action list is replayed on `context` as the base database.
    """
    from lab.world.domain_tools import DOMAIN, DomainSession, check_actions, check_db

    session = context.state.get(DOMAIN) if isinstance(context, ToolContext) else context
    if isinstance(session, DomainSession):
        return _verdict(*check_db(task, session))
    if isinstance(context, dict) and "orders" in context:
        return _verdict(*check_actions(task, answer, context))
    return _verdict(False, "no bookshop session or base database to check against")


# ---- dispatch --------------------------------------------------------------------------------------


def grade(task: Any, answer: Any, context: Any = None) -> GradeResult:
    """Grade one answer by the task's answer type; never calls a model."""
    blank = answer is None or (isinstance(answer, str) and not answer.strip())
    if blank and task.answer_type != "actions":  # tau2 is judged by the database, not the final message
        return _verdict(False, "empty answer")
    kind = task.answer_type
    if kind == "exact":
        return exact_match(answer, task.answer)
    if kind == "numeric":
        # benchmark tasks may carry no tolerance (FRAMES numbers are exact); world tasks always do
        return numeric_match(answer, task.answer, getattr(task, "tolerance", 0.0))
    if kind == "multiple_choice":
        return choice_match(answer, task.answer, task.choices)
    if kind == "actions":
        return actions_match(task, answer, context)
    raise ValueError(f"task '{task.task_id}': unknown answer_type '{kind}'")


async def grade_async(task: Any, answer: Any, context: Any = None, judge: "LLMJudge | None" = None) -> GradeResult:
    """`grade`, then (for free-text tasks that failed) the LLM judge when one is given."""
    result = grade(task, answer, context)
    if result.correct or judge is None or task.answer_type != "exact" or answer is None:
        return result
    return await judge.judge(task.question, str(task.answer), str(answer))


# ---- LLM judge -------------------------------------------------------------------------------------

JUDGE_PROMPT = """You are grading an answer to a question against the reference answer.
Question: {question}
Reference answer: {reference}
Candidate answer: {candidate}
Does the candidate answer mean the same as the reference answer (same entity, value or choice; extra
explanation is fine, hedging between several answers is not)? Reply with exactly one word: yes or no."""

_VERDICT = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


class LLMJudge:
    """Ask any configured LLM tool (async `execute({"prompt": ...})`) a fixed yes/no equivalence question."""

    def __init__(self, tool: Any) -> None:
        self.tool = tool

    async def judge(self, question: str, reference: str, candidate: str) -> GradeResult:
        prompt = JUDGE_PROMPT.format(question=question, reference=reference, candidate=candidate)
        obs = await self.tool.execute({"prompt": prompt})
        if getattr(obs, "error", None):
            return _verdict(False, f"judge error: {obs.error}")
        return parse_verdict(getattr(obs, "text", ""))


def parse_verdict(text: str) -> GradeResult:
    """The judge's first yes/no word decides; anything else is counted as not correct."""
    found = _VERDICT.search(text or "")
    if not found:
        return _verdict(False, f"judge gave no verdict: '{(text or '')[:60]}'")
    ok = found.group(1).lower() == "yes"
    return _verdict(ok, f"judge said {found.group(1).lower()}")
