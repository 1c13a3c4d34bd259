"""Training examples: one task under one randomised environment (paper §3.3, "data augmentation").

Each example fixes, for all G rollouts of its group: a random subset of the toolkit's reward features
(tools, or slots of the paper toolkit's slot tools), a provider price table, and a training (PI, P)
pair whose tools are all in the subset. Fixing them per example is what makes Eq. 2 meaningful: the
group's rollouts compete under the same tools, prices and preference.

Draws are seeded by sha256 of (seed, task id, draw index), never Python's salted `hash()`, so the same
config gives the same examples in every process and on every rank. Evaluation uses what training never
draws: the held-out (PI, P) pairs and the held-out provider (DeepInfra by default).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any

from lab.errors import LabInputError
from lab.preference import PreferencePair, preference_pairs
from lab.pricing import providers
from lab.task import Task
from lab.toolspec import Toolkit


@dataclass(frozen=True)
class Example:
    """What one GRPO group is rolled out under."""

    example_id: str
    task_id: str
    question: str
    features: tuple[str, ...]      # reward features offered (a subset of the toolkit's, in its order)
    pricing: str                   # provider price table
    instruction: str               # the preference instruction (PI) shown in the system prompt
    preference: tuple[tuple[str, float], ...]  # P over the toolkit's full feature list (0 off the subset)

    def row(self) -> dict[str, Any]:
        """The dataset row TRL iterates over; `prompt` is what TRL logs, the rest the rollout reads."""
        return {"prompt": self.question, "example_id": self.example_id, "task_id": self.task_id,
                "features": list(self.features), "pricing": self.pricing, "instruction": self.instruction,
                "preference": dict(self.preference)}

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Example:
        return cls(example_id=row["example_id"], task_id=row["task_id"], question=row["prompt"],
                   features=tuple(row["features"]), pricing=row["pricing"], instruction=row["instruction"],
                   preference=tuple(row["preference"].items()))


def training_providers(toolkit_name: str, load: Any, wanted: list[str], held_out: str) -> list[str]:
    """Providers whose tables price every model of the toolkit (`load(pricing)` -> Toolkit), minus the
    held-out one; `wanted` (non-empty) restricts them and must all load."""
    candidates = wanted or [p for p in providers() if p not in ("default", held_out)]
    usable = []
    for provider in candidates:
        try:
            load(provider)
        except LabInputError as exc:
            if wanted:
                raise LabInputError(f"pricing_providers: {provider!r} cannot price "
                                    f"toolkit '{toolkit_name}': {exc}") from None
            continue
        usable.append(provider)
    if not usable:
        raise LabInputError(f"no provider table prices every model of toolkit '{toolkit_name}'")
    return usable


def training_pairs(tools: list[str], models: dict[str, str | None], instructions: list[str] | None = None
                   ) -> list[PreferencePair]:
    """The training (PI, P) pairs whose tools are all in `tools`, only those worded as in `instructions`
    when it lists any (a config's `training_instructions`): what examples draw from, and what the
    learning curve and the evidence evaluate by default."""
    return [p for p in preference_pairs("train", tools, models) if not instructions or p.instruction in instructions]


def draw_examples(tasks: list[Task], toolkit: Toolkit, pricings: list[str], per_task: int,
                  subset_min: float, seed: int, instructions: list[str] | None = None,
                  cycle: bool = False) -> list[Example]:
    """`per_task` randomised examples per task, in task order, each with a training pair drawn from those
    whose wording is in `instructions` (all of them when empty or None) and whose tools the example has;
    `cycle` (paired instructions): draw k of a task takes the applicable pairs in turn, so a task's
    examples hold each instruction."""
    features = toolkit.feature_names
    models = toolkit.feature_models()
    examples = []
    for task in tasks:
        for draw in range(per_task):
            rng = random.Random(int.from_bytes(hashlib.sha256(f"{seed}/{task.task_id}/{draw}".encode()).digest()[:8],
                                               "big"))
            kept = _feature_subset(toolkit, rng, subset_min)
            pairs = training_pairs(kept, models, instructions)
            if not pairs:
                raise LabInputError(f"no training preference pair {'of training_instructions ' if instructions else ''}"
                                    f"applies to tools {kept}")
            pair = pairs[draw % len(pairs)] if cycle else rng.choice(pairs)
            bound = pair.bind(kept, models).as_dict()
            preference = tuple((name, float(bound.get(name, 0.0))) for name in [*features, "outcome",
                                                                                "compute", "latency"])
            examples.append(Example(
                example_id=f"{task.task_id}#{draw}", task_id=task.task_id, question=task.question,
                features=tuple(kept), pricing=rng.choice(pricings), instruction=pair.instruction, preference=preference,
            ))
    return examples


def _feature_subset(toolkit: Toolkit, rng: random.Random, subset_min: float) -> list[str]:
    """A random subset of at least `subset_min` of the features; each slot tool keeps one slot or more."""
    features = toolkit.feature_names
    if subset_min >= 1:
        return list(features)
    size = rng.randint(max(1, round(subset_min * len(features))), len(features))
    required = [rng.choice(list(t.slots)) for t in toolkit.tools if t.slots]
    rest = [f for f in features if f not in required]
    chosen = set(required) | set(rng.sample(rest, max(0, min(len(rest), size - len(required)))))
    return [f for f in features if f in chosen]
