"""Tests for lab.world.selfcheck: every reference program prints its answer, also in the code interpreter, and the
self-check catches a wrong stored answer.
"""

from __future__ import annotations

import asyncio

import pytest

from lab.graders import grade
from lab.tools.code_interpreter import CodeInterpreter
from lab.world.build import generate
from lab.world.selfcheck import printed_answer_ok, run_reference_programs, self_check
from lab.world.tasks import WorldSize

SMALL = WorldSize.small()


@pytest.fixture(scope="module")
def world():
    return generate(0, SMALL)


def test_every_reference_program_prints_its_answer(world):
    _, tasks, _ = world
    outputs = run_reference_programs(tasks)
    coded = [t for t in tasks if t.reference_code]
    assert len(outputs) == len(coded) >= 20
    assert all(printed_answer_ok(t, outputs[t.task_id]) for t in coded)


def test_sample_of_reference_programs_runs_in_the_code_interpreter(world):
    _, tasks, _ = world
    sandbox = CodeInterpreter(timeout_s=20)
    sample = [t for t in tasks if t.reference_code][::5][:6]

    async def run_all():
        return await asyncio.gather(*(sandbox.execute({"code": t.reference_code}) for t in sample))

    observations = asyncio.run(run_all())
    for task, obs in zip(sample, observations):
        if obs.error and "sandbox unavailable" in obs.error:
            pytest.skip(obs.error)
        assert obs.error is None, obs.text
        assert grade(task, obs.text).correct, (task.task_id, obs.text, task.answer)


def test_self_check_catches_a_wrong_stored_answer(world):
    docs, tasks, db = world
    assert self_check(docs, tasks, db) == []
    i = next(i for i, t in enumerate(tasks) if t.reference_code and t.tolerance == 0)
    broken = list(tasks)
    broken[i] = tasks[i].model_copy(update={"answer": tasks[i].answer + 1})
    problems = self_check(docs, broken, db)
    assert len(problems) == 1 and tasks[i].task_id in problems[0]
