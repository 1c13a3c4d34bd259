"""Scripted orchestrators run over a benchmark source through the real engine (policy tests)."""

from __future__ import annotations

import asyncio

from lab.policies import make_policy
from lab.rollout import RolloutRequest, run_rollout


def run_policy(name: str, source, tools, seed: int = 0):
    policy = make_policy(f"scripted:{name}", tools=tools, grader=source.grader, task_tools=source.tools_for)

    async def go():
        out = []
        for i, task in enumerate(source.tasks):
            request = RolloutRequest(run_id=name, task=task, seed=seed, sample_idx=i)
            out.append(await run_rollout(policy, {**tools, **source.tools_for(task)}, request, source.grader))
        return out

    return asyncio.run(go())
