"""Audits of the simulated models on a world's tasks: accuracy with and without evidence, and the
re-roll gain (how much "ask the same model again until it sounds sure" buys).

Why these live in the lab and not only in tests: anyone who edits `lab/data/sim_profiles.yaml` or the
draw rules (`lab.sim.draws`) should see at once whether the world became gameable; the tests assert
bounds on exactly these numbers and the issue notes quote them.

    from lab.sim.audit import evidence_accuracy, reroll_gain
    evidence_accuracy(world.select(split="test"), ["gpt-5", "qwen3-32b"])   # DataFrame
    reroll_gain(world.select(family="frames", split="test"), "qwen3-32b")     # {'one_call': .., 'reroll': ..}
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pandas as pd

from lab.graders import grade
from lab.sim.model import SimModel
from lab.tools.base import Observation, ToolContext
from lab.world.task import WorldTask

#: Rewordings a re-asking orchestrator might use (the prompt text changes, the request does not).
REWORDINGS = ("", "Please answer carefully.", "Think again step by step.", "Double-check your answer.",
              "Be precise; this matters.", "Answer once more, independently.")


def evidence_prompt(task: WorldTask, extra: str = "") -> str:
    """The question with every key fact, as an orchestrator that found them would write it."""
    facts = "\n".join(f"- {fact}" for fact in task.evidence)
    return f"{task.question}\n\nRelevant facts:\n{facts}\n\n{extra}\nEnd your reply with a line 'ANSWER: <answer>'."


def _ask(model: SimModel, task: WorldTask, prompt: str, found: bool, seed: int = 0) -> Observation:
    context = ToolContext(task_id=task.task_id, task=task, seed=seed, findings=list(task.evidence) if found else [])
    return asyncio.run(model.execute({"prompt": prompt}, context))


def _right(task: WorldTask, obs: Observation) -> bool:
    return bool(obs.meta.get("sim_correct")) if task.answer_type == "actions" else grade(task, obs.text).correct


def evidence_accuracy(tasks: Sequence[WorldTask], profiles: Sequence[str]) -> pd.DataFrame:
    """One call per task and model, without and with the task's evidence (found by a tool and in the
    prompt). Columns: profile, family, tasks, without_evidence, with_evidence (accuracies in [0, 1])."""
    rows: list[dict[str, Any]] = []
    for name in profiles:
        model = SimModel.from_profile(name)
        for family in sorted({t.family for t in tasks}):
            subset = [t for t in tasks if t.family == family and t.evidence]
            if not subset:
                continue
            bare = [_right(t, _ask(model, t, t.question, found=False)) for t in subset]
            helped = [_right(t, _ask(model, t, evidence_prompt(t), found=True)) for t in subset]
            rows.append({"profile": name, "family": family, "tasks": len(subset),
                         "without_evidence": sum(bare) / len(subset), "with_evidence": sum(helped) / len(subset)})
    return pd.DataFrame(rows, columns=["profile", "family", "tasks", "without_evidence", "with_evidence"])


def reroll_gain(tasks: Sequence[WorldTask], profile: str, tries: int = 5, found: bool = True) -> dict[str, float]:
    """Accuracy of one call against "re-ask up to `tries` times with reworded prompts (and other
    seeds), keep the first high-confidence answer (else the last)". `gain` = reroll - one_call."""
    model = SimModel.from_profile(profile)
    one = reroll = 0
    for task in tasks:
        first = _ask(model, task, evidence_prompt(task), found)
        one += _right(task, first)
        kept = first
        for k in range(1, tries):
            if "CONFIDENCE: high" in kept.text:
                break
            kept = _ask(model, task, evidence_prompt(task, REWORDINGS[k % len(REWORDINGS)]), found, seed=k)
        reroll += _right(task, kept)
    n = max(len(tasks), 1)
    return {"tasks": len(tasks), "one_call": one / n, "reroll": reroll / n, "gain": (reroll - one) / n}


def confidence_table(tasks: Sequence[WorldTask], profile: str) -> dict[str, float]:
    """P(right | stated high confidence) and P(right | low), one call per task with its evidence."""
    model = SimModel.from_profile(profile)
    high: list[bool] = []
    low: list[bool] = []
    for task in tasks:
        obs = _ask(model, task, evidence_prompt(task), found=True)
        (high if "CONFIDENCE: high" in obs.text else low).append(_right(task, obs))
    return {"high": sum(high) / max(len(high), 1), "low": sum(low) / max(len(low), 1),
            "n_high": len(high), "n_low": len(low)}
