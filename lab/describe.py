"""Capability descriptions of LLM tools, generated the way the paper does (§3.1).

The paper describes each model tool to the orchestrator with text written by an LLM: sample tasks,
run the tool on them, grade the answers, then have a describer LLM summarise what the tool is good and
bad at from those trajectories. The result replaces a hand-written `description` in a toolkit.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field

from lab.task import Task
from lab.tools.base import Tool, ToolContext

DESCRIBER_PROMPT = """Below are {n} tasks given to the model tool "{name}", its answers and whether each answer was \
correct. Write a short capability description of this tool for an orchestrator that must decide when to \
call it: what kinds of task it handles well, where it fails, and how it compares on cost (it costs \
${cost:.2f} per 1M output tokens). Two to four sentences, no preamble.

{samples}"""


class DescribedSample(BaseModel):
    task_id: str
    domain: str
    question: str
    reply: str
    correct: bool
    cost_usd: float
    latency_s: float


class ToolDescription(BaseModel):
    tool: str
    description: str = Field(description="What the describer wrote.")
    describer: str
    accuracy: float
    samples: list[DescribedSample]


async def describe_tool(
    tool: Tool,
    describer: Tool,
    tasks: list[Task],
    grade: Callable[[Any, str, ToolContext], Awaitable[bool]],
    n_tasks: int = 10,
    seed: int = 0,
) -> ToolDescription:
    """Run `tool` on `n_tasks` sampled tasks, grade them, and have `describer` describe the tool."""
    chosen = random.Random(seed).sample(tasks, min(n_tasks, len(tasks)))

    async def one(task: Task) -> DescribedSample:
        context = ToolContext(task_id=task.task_id, task=task, seed=seed)
        obs = await tool.execute({"prompt": f"{task.question}\n\nEnd your reply with "
                                            "a line 'ANSWER: <answer>'."}, context)
        correct = obs.error is None and await grade(task, obs.text, context)
        return DescribedSample(task_id=task.task_id, domain=task.domain, question=task.question, reply=obs.text,
                               correct=bool(correct), cost_usd=obs.cost_usd, latency_s=obs.latency_s)

    samples = list(await asyncio.gather(*(one(t) for t in chosen)))
    listing = "\n\n".join(
        f"Task {i + 1} ({s.domain}): {s.question}\nAnswer: {s.reply[-300:]}\nCorrect: {'yes' if s.correct else 'no'}"
        for i, s in enumerate(samples)
    )
    prompt = DESCRIBER_PROMPT.format(n=len(samples), name=tool.spec.name,
                                     cost=tool.spec.output_per_mtok, samples=listing)
    written = await describer.execute({"prompt": prompt}, ToolContext(seed=seed))
    accuracy = sum(s.correct for s in samples) / len(samples) if samples else 0.0
    text = written.text.strip() if written.error is None else f"(describer failed: {written.error})"
    return ToolDescription(tool=tool.spec.name, description=text, describer=describer.spec.name,
                           accuracy=accuracy, samples=samples)
