"""How a simulated model decides whether one call is right: a latent per (task, model, role), not a coin per prompt.

Why latents: real models fail on a task for a reason (they lack the fact, they get the formula wrong),
so asking the same model the same question again, however reworded, usually gives the same wrong
answer. A per-prompt coin would make "re-ask the cheap model until it sounds sure" as good as the
strongest model, and GRPO would learn to spam retries instead of routing. So each call compares

    u = Phi(rho * z_task + sqrt(1 - rho^2) * z_model)        (a uniform: z_* are standard normals)

with P(correct | domain, difficulty, evidence) from the profile. `z_task` is shared by every model
(a task that is hard for one model tends to be hard for all, so asking several models and voting
buys less than independent coins would), `z_model` belongs to one (model, task, role). Both are fixed
by sha256 of the task's identity, so they are the same in every rollout, sample and process. Because
u does not depend on the evidence, handing a model the decisive facts flips exactly the tasks with
P(without) <= u < P(with): retrieval and code help where they should, and nowhere else.

A small share of calls (`CALL_NOISE`) is decided by a fresh draw seeded by the call itself (rollout
seed, prompt): models are not perfectly consistent either, and without it a re-ask could never help.
Stated confidence follows its own latent the same way, so it stays informative and a re-ask rarely
changes it.

All numbers below are assumptions (no paper reports them); `tests/lab/sim/test_draws.py` measures
what they imply (re-roll gain, confidence informativeness).
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from lab.task import Task

#: Share of calls decided by a fresh per-call draw instead of the model's latent (assumption).
CALL_NOISE = 0.04
#: Weight rho of the task's shared hardness in every model's latent (assumption: moderate correlation).
TASK_SHARE = 0.5
#: P(states high confidence) when right / when wrong (assumption; the signal a cascade escalates on).
CONFIDENT_WHEN_RIGHT = 0.85
CONFIDENT_WHEN_WRONG = 0.40

_NORMAL = NormalDist()


def stable_seed(*parts: Any) -> int:
    """A 64-bit seed from the parts (sha256, so it is the same in every process; never Python's hash())."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _normal(*parts: Any) -> float:
    """A standard normal fixed by the parts (inverse CDF of a hash-derived uniform in (0, 1))."""
    return _NORMAL.inv_cdf((stable_seed(*parts) + 0.5) / 2**64)


def task_identity(task: Task) -> tuple[str, str]:
    """What fixes a task's latents: its id and its question (ids repeat across world seeds, questions do not)."""
    return str(task.task_id), str(task.question)


def latent_uniform(task: Task, model: str, role: str) -> float:
    """The model's fixed uniform for this task and role, correlated across models through the task."""
    ident = task_identity(task)
    z = TASK_SHARE * _normal("task", *ident, role) + math.sqrt(1 - TASK_SHARE**2) * _normal("model",
                                                                                            model, *ident, role)
    return _NORMAL.cdf(z)


@dataclass(frozen=True)
class Draw:
    """The outcome of one decision and the RNG that shapes what the model writes around it.

    `rng` is seeded by the latent when the latent decided (so a model repeats the same wrong answer)
    and by the call when the per-call noise decided."""

    correct: bool
    confident: bool
    from_latent: bool
    rng: random.Random


def decide(task: Task, model: str, role: str, p_correct: float, call_rng: random.Random) -> Draw:
    """Right or wrong, confident or not, for one call of `model` in `role` with success probability p."""
    noisy = call_rng.random() < CALL_NOISE
    if noisy:
        u, c = call_rng.random(), call_rng.random()
        rng = random.Random(call_rng.getrandbits(64))
    else:
        u, c = latent_uniform(task, model, role), latent_uniform(task, model, f"{role}:confidence")
        rng = random.Random(stable_seed("writes", model, *task_identity(task), role, u < p_correct))
    correct = u < p_correct
    confident = c < (CONFIDENT_WHEN_RIGHT if correct else CONFIDENT_WHEN_WRONG)
    return Draw(correct=correct, confident=confident, from_latent=not noisy, rng=rng)
