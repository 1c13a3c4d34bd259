"""Building blocks of the world's HLE-like questions: the `Item` a generator returns, and its helpers.

Why generated rather than written: answers must be known exactly and be unknowable from memory, so
each generator draws random parameters, computes the answer in Python at generation time, and (for
computational questions) also writes `reference_code` that prints it; the world build runs every
reference program in a fresh interpreter and checks its output against the stored answer.

Needs and difficulty: computational items need `code` (numbers too large or fiddly to do reliably in
one's head) and carry their printed answer as `evidence` (what a code-interpreter call would put in a
prompt); the others need `reasoning` and carry no evidence. Each generator scales its parameters with
the difficulty it is asked for (bigger numbers, more steps, closer distractors).

The generators live in `questions_science.py` and `questions_human.py`; `hle_like.py` turns their
items into tasks.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("easy", "medium", "hard")
LETTERS = "ABCDEFGH"


@dataclass
class Item:
    """A generated question before it becomes a `WorldTask`."""

    question: str
    answer: Any
    answer_type: str = "numeric"
    tolerance: float = 0.0
    choices: list[str] = field(default_factory=list)
    code: str | None = None


Generator = Callable[[random.Random, str], Item]


def computed(question: str, answer: Any, code: str, tolerance: float = 0.0) -> Item:
    """A computational item: numeric answer, reference program printing it."""
    return Item(question=question, answer=answer, answer_type="numeric", tolerance=tolerance, code=code.strip() + "\n")


def choice(rng: random.Random, question: str, correct: str, wrong: list[str]) -> Item:
    """A multiple-choice item; options are shuffled and listed as `(A) ...` lines in the question."""
    options = list(dict.fromkeys([correct, *wrong]))  # drop accidental duplicates, keep the correct one
    if len(options) < 3:
        raise ValueError("multiple-choice item needs at least two distinct distractors")
    rng.shuffle(options)
    listing = "\n".join(f"({LETTERS[i]}) {opt}" for i, opt in enumerate(options))
    return Item(question=f"{question}\n{listing}", answer=LETTERS[options.index(correct)],
                answer_type="multiple_choice", choices=options)


def scaled(level: str, easy: Any, medium: Any, hard: Any) -> Any:
    """Pick the parameter range for a difficulty level."""
    return {"easy": easy, "medium": medium, "hard": hard}[level]
