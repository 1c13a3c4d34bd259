"""Plausible wrong answers of simulated models, by answer type: what a model writes when it is wrong.

Why care: an orchestrator learns from what it reads. A wrong answer must look like a right one (a
perturbed number, another option, a distractor name from the same world, an action plan that changes
the wrong thing), so the only way to tell them apart is the one a real orchestrator has: evidence.
"""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

from lab.graders import grade
from lab.task import Task
from lab.toolspec import is_read_action
from lab.world.wrong_programs import candidate_slips

_SYLLABLES = ("ka", "ren", "vo", "li", "mar", "del", "to", "sen", "bra", "qui", "no", "vel", "dor", "an", "is")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def format_answer(value: Any, answer_type: str) -> str:
    """The text after `ANSWER:`; action plans as compact JSON, numbers without a spurious `.0`."""
    if answer_type == "actions":
        return json.dumps(value, sort_keys=True)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def graded_wrong_answer(task: Task, rng: random.Random, attempts: int = 8) -> Any:
    """A wrong answer the task's own grader rejects (a distractor can contain the reference, a perturbed
    number can round back onto it); action plans are judged by the shop, so they are returned as made."""
    value = wrong_answer(task, rng)
    if task.answer_type == "actions":
        return value
    for _ in range(attempts):
        if not grade(task, f"ANSWER: {format_answer(value, task.answer_type)}").correct:
            return value
        value = wrong_answer(task, rng)
    return _fake_name(str(task.answer), rng)


def wrong_answer(task: Task, rng: random.Random) -> Any:
    """A plausible answer that differs from the reference, by answer type."""
    kind = task.answer_type
    if kind == "actions":
        return _corrupt_actions(task.answer, rng)
    if kind == "multiple_choice":
        return _other_choice(task.answer, task.choices, rng)
    if kind == "numeric" or _as_number(task.answer) is not None:
        return _perturb_number(task.answer, task.tolerance, rng)
    pool = [c for c in [*task.choices, *task.meta.get("distractors", [])] if str(c).lower() != str(task.answer).lower()]
    if pool:
        return rng.choice(pool)
    return _fake_name(str(task.answer), rng)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _perturb_number(answer: Any, tolerance: float, rng: random.Random) -> Any:
    x = _as_number(answer)
    if x is None:
        return _fake_name(str(answer), rng)
    integral = x.is_integer()
    # Off by a typical slip: a factor or an off-by-some; always outside the grading tolerance.
    factor = rng.choice((0.5, 0.8, 0.9, 1.1, 1.25, 2.0))
    wrong = x * factor if x != 0 else rng.choice((-2.0, -1.0, 1.0, 2.0))
    if integral:
        wrong = float(round(wrong))
    margin = max(tolerance * abs(x), 0.0)
    if abs(wrong - x) <= margin or wrong == x:
        wrong = x + (margin + max(1.0, abs(x) * 0.1)) * rng.choice((-1, 1))
        if integral:
            wrong = float(math.floor(wrong) if wrong < x else math.ceil(wrong))
    return int(wrong) if integral else round(wrong, 6)


def _other_choice(answer: Any, choices: list[str], rng: random.Random) -> str:
    text = str(answer)
    if choices and text in choices:  # the reference is an option's text
        others = [c for c in choices if c != text]
    else:  # the reference is a letter
        letters = _LETTERS[: max(len(choices), 4)]
        others = [c for c in letters if c != text.strip().upper()]
    return rng.choice(others) if others else text + "?"


def _fake_name(answer: str, rng: random.Random) -> str:
    """A made-up name with as many words as the reference (deterministic given the RNG)."""
    words = max(1, len(answer.split()))
    for _ in range(10):
        name = " ".join(
            "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize() for _ in range(words)
        )
        if name.lower() != answer.lower():
            return name
    return answer + " (unsure)"


#: The tempting mistake when the right plan changes nothing (e.g. a cancel the policy forbids): act anyway.
#: Keyed by an argument the reads carried; these are the offline world's bookshop names (tau2 retail-like).
_TEMPTING_WRITES = {"order_id": ("cancel_order", {"reason": "no longer needed"})}


def _corrupt_actions(golden: Any, rng: random.Random) -> list[Any]:
    """A plan whose *effect* differs from the golden one (graders replay plans and compare databases).

    With write actions in the golden plan: drop one, or change one of its arguments. With none (the right
    outcome is to change nothing): add the tempting write, or a hand-off when none applies.
    """
    plan = copy.deepcopy(list(golden) if isinstance(golden, (list, tuple)) else [])
    actions = [a for a in plan if isinstance(a, dict)]
    writes = [a for a in actions if not is_read_action(a.get("name", ""))]
    if writes:
        action = rng.choice(writes)
        args = action.get("arguments")
        if isinstance(args, dict) and args and rng.random() < 0.5:
            key = rng.choice(sorted(args))
            args[key] = _changed_value(args[key], rng)
        else:
            plan.remove(action)
        return plan
    for action in actions:
        for arg, (name, extra) in _TEMPTING_WRITES.items():
            if arg in action.get("arguments", {}):
                return [*plan, {"name": name, "arguments": {arg: action["arguments"][arg], **extra}}]
    return [*plan, {"name": "transfer_to_human_agents", "arguments": {"summary": "unsure how to proceed"}}]


def _changed_value(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + rng.choice((-1, 1)) * max(1, abs(value) // 10)
    if isinstance(value, list):
        return value[:-1] if value else ["unknown"]
    return f"{value}-{rng.randint(1, 9)}" if value else "unknown"


def lookup_plan(golden: Any, known_text: str) -> list[dict[str, Any]]:
    """The golden plan's read actions whose arguments are all known (in `known_text`, i.e. the question
    and what tools found): what a model that lacks the record ids proposes first (look them up)."""
    low = known_text.lower()
    reads = []
    for action in golden if isinstance(golden, list) else []:
        if not isinstance(action, dict) or not is_read_action(action.get("name", "")):
            continue
        values = [str(v).lower() for v in (action.get("arguments") or {}).values()]
        if all(v in low for v in values):
            reads.append(copy.deepcopy(action))
    return reads


def wrong_program(task: Task, rng: random.Random) -> str:
    """A slipped copy of the task's reference program: one of those the world build verified wrong, or
    (for tasks made outside a world build) an unverified one-token slip."""
    verified = task.meta.get("wrong_programs") or []
    if verified:
        return rng.choice(verified)
    slipped = candidate_slips(task)
    return rng.choice(slipped) if slipped else task.reference_code
