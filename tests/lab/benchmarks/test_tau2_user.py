"""Tests for lab.benchmarks.tau2_user.

A tau2 rollout is a conversation: the simulated user opens it, answers questions, and ends it.

The policies here are what an orchestrator would write, turn by turn; the user and the tools are the
real ones of `--benchmark tau2:retail`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from lab.benchmarks.tau2_user import REFUSAL, STOP, LLMUser, ScriptedUser
from lab.eval.config import EvalConfig
from lab.eval.sources import load_source
from lab.rollout import RolloutConfig, RolloutRequest, run_rollout
from lab.rollout.parse import format_tool_call
from lab.rollout.policy import PolicyOutput
from lab.tools.base import Observation


class Task:
    def __init__(self, known: str | None, unknown: str | None, reason: str = "I want to cancel an order.") -> None:
        self.task_id = "t"
        self.meta = {"user_scenario": {"instructions": {"reason_for_call": reason, "known_info": known,
                                                         "unknown_info": unknown}}}


def talk(user: Any, *messages: str) -> list[Any]:
    async def go() -> list[Any]:
        return [await user.reply(m) for m in messages]
    return asyncio.run(go())


def test_the_scripted_user_opens_with_its_reason_answers_from_known_info_and_refuses_the_unknown():
    session = ScriptedUser().session(Task("My name is Yara Muller, zip 19122.",
                                          "You do not remember your email address."))
    assert "I want to cancel an order." in session.opening()
    email, name, done = talk(session, "What is your email address?", "Can you tell me your name and zip code?",
                             "Your order is cancelled.")
    assert email.text == REFUSAL and not email.ended
    assert name.text == "My name is Yara Muller, zip 19122." and not name.ended
    assert done.ended and STOP in done.text


def test_a_policy_that_only_asks_cannot_keep_the_call_open_forever():
    session = ScriptedUser().session(Task("My name is Yara.", None))
    replies = talk(session, *["Anything else?"] * 12)
    assert not replies[0].ended and replies[-1].ended


class Conversation:
    """A policy scripted by turn; it records every message list it was shown."""

    def __init__(self, turns: list[str]) -> None:
        self.turns, self.seen = turns, []

    def session(self, task: Any, specs: Any, seed: int) -> Conversation:
        return self

    async def generate(self, messages: list[dict[str, Any]], **_: Any) -> PolicyOutput:
        self.seen.append([dict(m) for m in messages])
        return PolicyOutput(text=self.turns[len(self.seen) - 1])

    def token_trajectory(self) -> None:
        return None


@pytest.fixture(scope="module")
def retail():
    return load_source(EvalConfig.build(benchmark="tau2:retail", split="base"))


def run(source: Any, task_id: str, policy: Conversation, max_turns: int = 20) -> Any:
    task = next(t for t in source.tasks if t.task_id == task_id)
    request = RolloutRequest(run_id="r", task=task, benchmark="tau2", user=source.user_for(task))
    return asyncio.run(run_rollout(policy, source.tools_for(task), request, source.grader,
                                   RolloutConfig(max_turns=max_turns)))


def test_the_agent_must_ask_for_what_the_user_knows_then_acts_and_the_user_ends_the_call(retail):
    """Task 78: the user opens with its requests but gives its email only when asked."""
    task = next(t for t in retail.tasks if t.task_id == "retail-78")
    golden = [format_tool_call(a["name"], a.get("arguments") or {}) for a in task.answer]
    policy = Conversation(["<answer>Could you tell me your email address?</answer>", *golden,
                           "<answer>All three changes are done.</answer>"])
    result = run(retail, "retail-78", policy)
    first_user = policy.seen[0][1]["content"]
    assert "#W5056519" in first_user and "yara.muller9246@example.com" not in first_user  # not handed the scenario
    assert policy.seen[1][-1] == {"role": "user",
                                  "content": "Your name is Yara Muller and your email is yara.muller9246@example.com."}
    kinds = [s.kind for s in result.steps]
    assert kinds.count("user") == 2 and kinds[-1] == "user" and STOP in result.steps[-1].observation
    assert result.trajectory.outcome == 1.0 and json.loads(result.trajectory.criteria_json)["db"] is True
    assert result.trajectory.final_answer == "All three changes are done."


def test_a_call_the_user_never_ended_scores_0_even_after_the_right_writes(retail):
    task = next(t for t in retail.tasks if t.task_id == "retail-78")
    golden = [format_tool_call(a["name"], a.get("arguments") or {}) for a in task.answer]
    asking = ["<answer>Is there anything else I can do?</answer>"] * 3
    result = run(retail, "retail-78", Conversation([*golden, *asking]), max_turns=len(golden) + len(asking))
    assert [s.kind for s in result.steps].count("user") == 3  # the user kept answering: the call is not over
    assert result.trajectory.status == "no_answer" and result.trajectory.outcome == 0.0


class Echo:
    """An LLM tool that replies with a fixed text and records the prompt it was given."""

    def __init__(self, text: str) -> None:
        self.text, self.prompts = text, []

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Observation:
        self.prompts.append(arguments["prompt"])
        return Observation(text=self.text)


def test_the_llm_user_gets_the_scenario_and_the_conversation_and_ends_on_a_marker():
    tool = Echo(f"Thanks, bye. {STOP}")
    session = LLMUser(tool).session(Task("My name is Yara.", "You do not know your email."))
    assert session.opening().startswith("Hi.")
    (reply,) = talk(session, "Your order is cancelled.")
    assert reply.ended
    prompt = tool.prompts[0]
    assert "known_info: My name is Yara." in prompt and "agent: Your order is cancelled." in prompt and STOP in prompt


def test_an_llm_tool_of_the_toolkit_can_play_the_user_and_a_wrong_name_is_one_line(tmp_path):
    from rich.console import Console

    from lab.errors import LabInputError
    from lab.eval.harness import run_eval
    from lab.store import Store, queries

    store, quiet = Store(tmp_path / "u.duckdb"), Console(quiet=True)
    base = dict(benchmark="tau2:retail", split="test", orchestrator="scripted:oracle", limit=1, max_turns=[8])
    with pytest.raises(LabInputError) as info:
        run_eval(EvalConfig.build(**base, user="nope"), store, quiet)
    assert "--user 'nope': not an LLM tool" in str(info.value) and "\n" not in str(info.value)
    (summary,) = run_eval(EvalConfig.build(**base, user="sim:gpt-5-mini"), store, quiet)
    steps = queries.steps_df(store, summary.run_id)
    replies = steps[steps.kind == "user"].observation
    assert len(replies) and all(r.startswith("[simulated gpt-5-mini]") for r in replies)
