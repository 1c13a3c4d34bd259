"""Grading one rollout of a synthesized task as tau2 does (lab.synth.env.grade_synth).

What a user would notice: an agent that makes every right call but never tells the user what they
asked for fails the communicate criterion (and so the task), one that tells it passes; an agent
that tells the value but skips the write fails the database criterion; and the verdicts are stored
per criterion, so a report can say which one failed.
"""

from __future__ import annotations

import asyncio

from lab.eval.config import EvalConfig
from lab.eval.sources import load_source
from lab.synth.dataset import write_dataset
from lab.tools.base import AGENT_MESSAGES, ToolContext


def _play(source, task, calls, said: list[str]) -> tuple[float, dict]:
    tools, context = source.tools_for(task), ToolContext(task_id=task.task_id, task=task)

    async def run() -> float:
        for action in calls:
            await tools[action["name"]].execute(action["arguments"], context)
        context.state[AGENT_MESSAGES] = said
        return await source.grader(task, said[-1], context)

    return asyncio.run(run()), context.criteria


def test_the_told_value_and_the_writes_are_each_their_own_criterion(tmp_path):
    write_dataset(tmp_path / "ts", ["railway", "bank"], n_tasks=30, seed=0)
    source = load_source(EvalConfig.build(benchmark=f"toolscale:{tmp_path / 'ts'}", split="base",
                                          orchestrator="scripted:oracle"))
    tools_of = source.tools_for
    task = next(t for t in source.tasks if t.meta["communicate_info"]
                and any(tools_of(t)[a["name"]].writes for a in t.answer))
    info = task.meta["communicate_info"]

    outcome, criteria = _play(source, task, task.answer, ["All done, anything else?"])
    assert outcome == 0.0 and criteria["communicate"] is False and criteria["db"] is True

    outcome, criteria = _play(source, task, task.answer, [f"Done: {', '.join(info)}."])
    assert outcome == 1.0 and criteria == {"db": True, "communicate": True, "actions": True, "nl": True}

    reads = [a for a in task.answer if not tools_of(task)[a["name"]].writes]
    outcome, criteria = _play(source, task, reads, [f"Done: {', '.join(info)}."])
    assert outcome == 0.0 and criteria["db"] is False and criteria["communicate"] is True and criteria["actions"] is False
