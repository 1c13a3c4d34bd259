"""Tests for lab.benchmarks.tau2_env: `--benchmark tau2:retail` executed and graded end to end.

The source's own tools run on the rollout's copy of the database and are graded by database as tau2-bench
does; the golden actions pass, the ways a policy could look right without doing the task fail, airline is
graded by actions alone, and with a judge the NL assertions are judged over the conversation.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.eval.sources import load_source
from lab.store import Store, queries
from lab.tools.base import ToolContext

TASK_78 = "retail-78"  # address change, item swap and a cancel (TOOLS.md §4): three writes


@pytest.fixture(scope="module")
def retail():
    return load_source(EvalConfig.build(benchmark="tau2:retail", split="base"))


def play(source: Any, task_id: str, calls: list[dict[str, Any]], answer: str | None = "Done.") -> tuple[float, dict]:
    """Run `calls` through the task's tools in one rollout context, then grade it."""
    task = next(t for t in source.tasks if t.task_id == task_id)
    tools = source.tools_for(task)
    context = ToolContext(task_id=task.task_id, task=task)

    async def go() -> float:
        for c in calls:
            await tools[c["name"]].execute(c.get("arguments") or {}, context)
        return await source.grader(task, answer, context)

    return asyncio.run(go()), context.criteria


def golden(source: Any, task_id: str) -> list[dict[str, Any]]:
    task = next(t for t in source.tasks if t.task_id == task_id)
    return [{"name": a["name"], "arguments": dict(a.get("arguments") or {})} for a in task.answer]


def test_the_golden_actions_pass_and_the_criteria_say_what_was_judged(retail):
    outcome, criteria = play(retail, TASK_78, golden(retail, TASK_78))
    assert outcome == 1.0 and criteria["db"] is True and criteria["actions"] is True
    assert criteria["nl"] is True  # task 78 has no NL assertions: nothing to judge
    with_nl = next(t for t in retail.tasks if t.meta["nl_assertions"])
    outcome, criteria = play(retail, with_nl.task_id, golden(retail, with_nl.task_id))
    assert outcome == 1.0 and criteria["nl"] is None  # no judge model: not judged, never passed silently


def test_skipping_a_write_fails_the_database_check(retail):
    calls = [c for c in golden(retail, TASK_78) if c["name"] != "cancel_pending_order"]
    outcome, criteria = play(retail, TASK_78, calls)
    assert outcome == 0.0 and criteria["db"] is False


def test_writing_another_value_fails(retail):
    calls = golden(retail, TASK_78)
    for c in calls:
        if c["name"] == "cancel_pending_order":
            c["arguments"]["reason"] = "no longer needed"  # the user said "ordered by mistake"
    assert play(retail, TASK_78, calls)[1]["db"] is False
    calls = golden(retail, TASK_78)
    for c in calls:
        if c["name"] == "modify_pending_order_address":
            c["arguments"]["zip"] = "92102"
    assert play(retail, TASK_78, calls)[1]["db"] is False


def test_acting_on_another_order_fails(retail):
    calls = golden(retail, TASK_78)
    other = next(o for o, order in _db()["orders"].items() if order["status"] == "pending" and o != "#W5995614"
                 and o != "#W5056519")
    for c in calls:
        if c["name"] == "cancel_pending_order":
            c["arguments"]["order_id"] = other
    assert play(retail, TASK_78, calls)[1]["db"] is False


def test_reading_everything_and_writing_nothing_fails(retail):
    reads = [c for c in golden(retail, TASK_78) if not retail.tools_for(retail.tasks[0])[c["name"]].writes]
    reads.append({"name": "get_order_details", "arguments": {"order_id": "#W5056519"}})
    outcome, criteria = play(retail, TASK_78, reads)
    assert outcome == 0.0 and criteria["db"] is False


def test_reads_run_on_the_shared_database_and_the_first_write_copies_it(retail):
    from lab.benchmarks.tau2_retail_db import retail_db_snapshot

    task = next(t for t in retail.tasks if t.task_id == TASK_78)
    tools, context = retail.tools_for(task), ToolContext(task_id=task.task_id, task=task)
    asyncio.run(tools["get_order_details"].execute({"order_id": "#W5995614"}, context))
    shared = retail_db_snapshot()
    assert context.state["tau2:retail"].db is shared
    cancel = {"order_id": "#W5995614", "reason": "ordered by mistake"}
    assert asyncio.run(tools["cancel_pending_order"].execute(cancel, context)).error is None
    session = context.state["tau2:retail"]
    assert session.db is not shared and session.db["orders"]["#W5995614"]["status"] == "cancelled"
    assert shared["orders"]["#W5995614"]["status"] == "pending" and session.initial is shared


def test_a_task_whose_golden_actions_only_read_passes_with_reads_alone_every_time(retail):
    task_id = "retail-10"  # its golden actions write nothing: the start state is the gold state
    calls = golden(retail, task_id)
    assert play(retail, task_id, calls)[1]["db"] is True
    assert play(retail, task_id, calls)[1]["db"] is True  # the kept verdict
    assert play(retail, TASK_78, [])[1]["db"] is False and play(retail, TASK_78, [])[1]["db"] is False


def test_the_kept_verdicts_are_the_hash_comparison_of_tau2(retail):
    from lab.benchmarks.tau2_env import db_verdict, gold_db, judge_retail, start_passes
    from lab.benchmarks.tau2_retail_db import retail_db_snapshot
    from lab.env.state import canonical_hash

    start = retail_db_snapshot()
    for task in retail.tasks:  # a rollout that wrote nothing: the start state against the gold state
        assert start_passes(task) is (canonical_hash(start) == canonical_hash(gold_db(task, start))), task.task_id
    assert {start_passes(t) for t in retail.tasks} == {True, False}
    for task_id in (TASK_78, "retail-10", "retail-5"):
        task = next(t for t in retail.tasks if t.task_id == task_id)
        gold = gold_db(task, start)
        for calls in (golden(retail, task_id), golden(retail, task_id)[:-1], []):
            assert db_verdict(task, calls) is judge_retail(task, start, gold, calls, [])["db"], (task_id, calls)


def test_a_rollout_without_an_answer_scores_0_even_with_the_right_writes(retail):
    assert play(retail, TASK_78, golden(retail, TASK_78), answer=None)[0] == 0.0


def test_rollouts_do_not_see_each_others_writes(retail):
    calls = golden(retail, TASK_78)
    first = play(retail, TASK_78, calls)
    second = play(retail, TASK_78, calls)  # would fail if the first rollout's cancel had stuck
    assert first[0] == second[0] == 1.0


def test_the_oracle_replays_golden_actions_end_to_end_and_the_store_keeps_the_criteria(tmp_path: Path):
    store = Store(tmp_path / "t.duckdb")
    config = EvalConfig.build(benchmark="tau2:retail", split="test", orchestrator="scripted:oracle",
                              tasks=["retail-5", "retail-9", "retail-36"])  # 36 has NL assertions
    (summary,) = run_eval(config, store, Console(quiet=True))
    trajs = queries.trajectories_df(store, [summary.run_id])
    assert len(trajs) == 3 and list(trajs.outcome) == [1.0, 1.0, 1.0]
    for row in trajs.itertuples():
        assert json.loads(row.criteria_json)["db"] is True
    # the run summary says what the accuracy does not rest on
    assert queries.runs_summary_df(store).set_index("run_id").unjudged[summary.run_id] == 1


def test_airline_has_no_database_and_says_so(tmp_path: Path):
    source = load_source(EvalConfig.build(benchmark="tau2:airline", split="base"))
    task = source.tasks[0]
    outcome, criteria = play(source, task.task_id, golden(source, task.task_id))
    assert outcome == 1.0 and criteria == {"db": None, "communicate": None, "actions": True, "nl": None}


def _db() -> dict:
    from lab.benchmarks.tau2_retail_db import load_retail_db

    return load_retail_db()


class Judge:
    """An LLM tool standing in for the judge model: replies with `reply`, records the prompt."""

    spec = SimpleNamespace(name="judge")

    def __init__(self, reply: str) -> None:
        self.reply, self.prompts = reply, []

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Any:
        from lab.tools.base import Observation

        self.prompts.append(arguments["prompt"])
        return Observation(text=self.reply)


def verdicts(*met: bool) -> str:
    return json.dumps({"results": [{"expectedOutcome": "x", "reasoning": "y", "metExpectation": m} for m in met]})


@pytest.mark.parametrize("reply, expected", [
    (verdicts(True, True), (True, None)),
    (verdicts(True, False), (False, None)),
    ("I think it went fine.", (None, "judge reply is not the asked JSON")),
    (verdicts(), (None, "judge judged 0 of 2 outcomes")),  # tau2 would score an empty list 1.0
])
def test_the_nl_judge_passes_only_a_full_positive_verdict(reply, expected):
    from lab.env.grading import judge_nl

    verdict, problem = asyncio.run(judge_nl(Judge(reply), ["a", "b"], [{"role": "user", "content": "hi"}]))
    assert verdict == expected[0] and (problem or "").startswith(expected[1] or "")


def test_with_a_judge_the_nl_criterion_is_judged_over_the_conversation_and_decides_the_outcome(retail):
    from lab.eval.judged import judged

    task = next(t for t in retail.tasks if t.meta["nl_assertions"] and "NL_ASSERTION" in t.meta["reward_basis"])
    for met, outcome in ((True, 1.0), (False, 0.0)):
        judge = Judge(verdicts(*[met] * len(task.meta["nl_assertions"])))
        graded = type(retail)(**{**retail.__dict__, "grader": judged(retail.grader, judge)})
        got, criteria = play(graded, task.task_id, golden(retail, task.task_id))
        assert (got, criteria["nl"], criteria["db"]) == (outcome, met, True)
        assert task.meta["nl_assertions"][0] in judge.prompts[0]
