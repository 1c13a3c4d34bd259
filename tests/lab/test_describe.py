"""Tests for lab.describe.

Tool descriptions written by a describer LLM from sampled, graded trajectories (paper §3.1).
"""

from __future__ import annotations

import asyncio

from lab.describe import describe_tool
from lab.graders import grade
from lab.sim.model import SimModel
from lab.testing import OpenAICompatServer
from lab.tools.openai_llm import OpenAIChatTool
from lab.toolspec import Toolkit


async def graded(task, text, context) -> bool:
    return grade(task, text, context).correct


def test_describer_sees_ten_graded_samples_and_its_text_becomes_the_description(world):
    tasks = [t for t in world.select(split="train") if t.family != "tau2"]
    subject = SimModel.from_profile("qwen2.5-math-7b-instruct")
    with OpenAICompatServer(reply="Strong at arithmetic, weak at multi-hop lookups.") as server:
        kit = Toolkit.from_dict({"name": "d", "tools": [{
            "name": "describer", "category": "generalist", "model": "gpt-5", "description": "writes descriptions",
            "backend": {"kind": "openai", "base_url": server.base_url, "model": "gpt-5"}}]})
        describer = OpenAIChatTool(kit.tools[0])
        result = asyncio.run(describe_tool(subject, describer, tasks, graded, n_tasks=10, seed=3))
        prompt = server.bodies[-1]["messages"][-1]["content"]
    assert result.description == "Strong at arithmetic, weak at multi-hop lookups."
    assert len(result.samples) == 10 and len({s.task_id for s in result.samples}) == 10
    assert result.accuracy == sum(s.correct for s in result.samples) / 10
    for sample in result.samples:
        assert sample.question in prompt
    assert prompt.count("Correct: yes") == sum(s.correct for s in result.samples)
    again = asyncio.run(describe_tool(subject, subject, tasks, graded, n_tasks=10, seed=3))
    assert [s.task_id for s in again.samples] == [s.task_id for s in result.samples]  # seeded sample
