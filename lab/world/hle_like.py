"""The offline world's `hle` family: HLE-like synthetic questions across eight disciplines.

These are not HLE (Humanity's Last Exam) items: they are generated questions in its style (hard,
exact answers, mathematics to linguistics) with seeded parameters, so answers are known exactly and
cannot be recalled from pretraining. The generators are in `questions_science.py` (mathematics,
physics, chemistry, astronomy) and `questions_human.py` (computer science, biology, economics,
linguistics); their conventions are in `question_kit.py`. The family keeps the name `hle` (task ids
`hle-0042`, `--benchmark world:hle`) because it stands in for the paper's HLE benchmark.
"""

from __future__ import annotations

import random
from typing import Any

from lab.world import questions_human, questions_science
from lab.world.question_kit import LEVELS, Item
from lab.world.task import WorldTask

#: Every generator with its discipline, in the order they are cycled.
GENERATORS = [*questions_science.GENERATORS, *questions_human.GENERATORS]


def make_hle_like_tasks(n: int, rng: random.Random) -> list[WorldTask]:
    """`n` distinct items, generators cycled in order, difficulty drawn per item."""
    tasks: list[WorldTask] = []
    seen: set[str] = set()
    attempts = 0
    while len(tasks) < n and attempts < n * 20:
        domain, gen = GENERATORS[attempts % len(GENERATORS)]
        attempts += 1
        level = rng.choice(LEVELS)
        item = gen(rng, level)
        if item.question in seen:
            continue
        seen.add(item.question)
        tasks.append(_to_task(item, domain, level, len(tasks), gen.__name__))
    return tasks


def format_answer(value: Any) -> str:
    """How a reference program prints a numeric answer (ints plainly, floats via repr)."""
    return str(value)


def _to_task(item: Item, domain: str, level: str, index: int, generator: str) -> WorldTask:
    needs = ["code"] if item.code else ["reasoning"]
    return WorldTask(
        task_id=f"hle-{index:04d}",
        family="hle",
        domain=domain,
        difficulty=level,
        question=item.question,
        answer=item.answer,
        answer_type=item.answer_type,
        tolerance=item.tolerance,
        choices=item.choices,
        evidence=[format_answer(item.answer)] if item.code else [],
        reference_code=item.code,
        needs=needs,
        meta={"generator": generator},
    )
