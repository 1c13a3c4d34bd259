"""Tests for lab.sim.draws.

Simulated models on the real offline world: errors correlate, so re-rolling does not beat routing.

These are the properties GRPO would otherwise exploit: re-asking a cheap model until it sounds sure, or
re-asking a coder until its program "computes something" (flooding a prompt with candidates:
`tests/lab/tools/test_findings.py`).
"""

from __future__ import annotations

import asyncio
import difflib

import pytest

from lab.sim.audit import confidence_table, evidence_accuracy, evidence_prompt, reroll_gain
from lab.sim.draws import CALL_NOISE
from lab.sim.model import SimModel
from lab.tools.base import ToolContext


@pytest.mark.parametrize("profile", ["qwen3-32b", "llama-3.3-70b-instruct", "gpt-5-mini"])
def test_reasking_until_confident_gains_at_most_five_points(world, profile):
    frames = reroll_gain(world.select(family="frames"), profile)
    code = reroll_gain([t for t in world.select(family="hle") if t.reference_code], profile)
    for result in (frames, code):
        assert result["gain"] <= 0.05, result
    # and it is no way to reach the strongest model: gpt-5 with the same evidence stays ahead
    assert frames["reroll"] < reroll_gain(world.select(family="frames"), "gpt-5", tries=1)["one_call"] + 0.01


def test_stated_confidence_stays_informative(world):
    table = confidence_table(world.select(family="frames"), "qwen3-32b")
    assert table["n_high"] > 20 and table["n_low"] > 20
    assert table["high"] > table["low"] + 0.2


def test_evidence_flips_exactly_the_tasks_it_should(world):
    """The latent does not depend on the evidence: a task a model gets right without the facts it also
    gets right with them (except the few calls the per-call noise decides)."""
    model = SimModel.from_profile("qwen3-32b")
    tasks = world.select(family="frames")
    regressions = 0
    helped = 0
    for task in tasks:
        bare = asyncio.run(model.execute({"prompt": task.question}, ToolContext(task_id=task.task_id, task=task)))
        with_facts = asyncio.run(model.execute({"prompt": evidence_prompt(task)}, ToolContext(
            task_id=task.task_id, task=task, findings=list(task.evidence))))
        regressions += bare.meta["sim_correct"] and not with_facts.meta["sim_correct"]
        helped += with_facts.meta["sim_correct"] and not bare.meta["sim_correct"]
    assert regressions <= 4 * CALL_NOISE * len(tasks)
    assert helped > 0.3 * len(tasks)


def test_cheap_models_with_evidence_compete_with_the_strongest_without(world):
    table = evidence_accuracy(world.tasks, ["gpt-5", "qwen3-32b", "qwen2.5-coder-32b-instruct"]).set_index(
        ["profile", "family"])
    assert table.loc[("qwen3-32b", "frames"), "with_evidence"] > table.loc[("gpt-5", "frames"),
                                                                           "without_evidence"] + 0.05
    # the specialists in their own domain: handed the program's output they beat gpt-5 without it
    for profile, domain in (("qwen2.5-coder-32b-instruct", "computer_science"),
                            ("qwen2.5-math-72b-instruct", "mathematics")):
        tasks = [t for t in world.tasks if t.domain == domain]
        mine = evidence_accuracy(tasks, [profile]).iloc[0]
        strongest = evidence_accuracy(tasks, ["gpt-5"]).iloc[0]
        assert mine.with_evidence > strongest.without_evidence + 0.05, (profile, mine, strongest)
    for profile in ("gpt-5", "qwen3-32b"):  # evidence is what tools are for: it helps every model a lot
        for family in ("frames", "hle", "tau2"):
            row = table.loc[(profile, family)]
            assert row.with_evidence > row.without_evidence + 0.15, (profile, family)


def test_world_wrong_programs_are_one_token_slips_that_compute(world):
    coded = [t for t in world.tasks if t.reference_code]
    assert coded and all(1 <= len(t.meta["wrong_programs"]) <= 3 for t in coded)
    for task in coded:
        for program in task.meta["wrong_programs"]:
            changed = [line for line in difflib.ndiff(task.reference_code.splitlines(), program.splitlines())
                       if line[:2] in ("- ", "+ ")]
            assert len(changed) == 2, (task.task_id, changed)  # one line out, one line in
            assert len(program.splitlines()) == len(task.reference_code.splitlines())


def test_a_wrong_coder_writes_one_of_the_verified_wrong_programs(world):
    model = SimModel.from_profile("qwen2.5-math-7b-instruct")  # usually wrong
    coded = [t for t in world.tasks if t.reference_code][:60]
    wrong = 0
    for task in coded:
        prompt = f"Write a Python program that prints the answer.\n{task.question}"
        reply = asyncio.run(model.execute({"prompt": prompt},
                                          ToolContext(task_id=task.task_id, task=task)))
        program = reply.text.split("```python\n")[1].split("```")[0].strip()
        if not reply.meta["sim_correct"]:
            wrong += 1
            assert program in [p.strip() for p in task.meta["wrong_programs"]]
        else:
            assert program == task.reference_code.strip()
    assert wrong > 10
