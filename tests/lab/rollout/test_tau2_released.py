"""Tests for lab.rollout.tau2_released.

The released tau2 agent (`--tau2-agent released`): what it is shown, how its replies are read, what
call_expert does, and where tau2's step count stops it.

The orchestrators here are scripted, turn by turn; the retail tools, the grader and the scripted user are
the real ones of `--benchmark tau2:retail`.

Also `orchestra eval --benchmark tau2:retail --tau2-agent released` end to end: the agent recorded in the
run's config, the experts' costs in the run's cost, and what it cannot run refused.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from lab.benchmarks.tau2_experts import CallExpert, released_tools
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.eval.sources import load_source
from lab.rollout import PolicyOutput, RolloutConfig, RolloutRequest, run_rollout
from lab.rollout.parse import format_tool_call
from lab.rollout.tau2_released import EXPERT_RULE, GREETING, MAX_STEPS, TRANSFER_RULE, message_of, read_turn
from lab.store import Store, queries
from lab.testing import OpenAICompatServer
from lab.tools.base import Observation
from lab.tools.openai_llm import OpenAIChatTool
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec
from tests.conftest import orchestra

RELEASED = RolloutConfig(tau2_agent="released")

# text that holds none of the tags a reply is read by
plain = st.text(max_size=60).filter(lambda t: not any(tag in t for tag in ("<think>", "</think>", "<message>",
                                                                           "</message>")))


@settings(max_examples=200, deadline=None)
@given(plain, plain, plain, plain)
def test_the_message_inside_the_tags_is_what_the_user_gets_and_the_reasoning_never_is(reasoning, before, message,
                                                                                      after):
    reply = f"<think>{reasoning}</think>{before}<message>{message}</message>{after}"
    assert message_of(reply) == message.strip()
    assert read_turn(reply).message == message.strip() and read_turn(reply).calls == []


@settings(max_examples=200, deadline=None)
@given(plain, plain)
def test_an_untagged_reply_goes_to_the_user_whole_without_its_reasoning(reasoning, text):
    assert message_of(text) == text.strip()
    assert message_of(f"<think>{reasoning}</think>{text}") == text.strip()


@settings(max_examples=100, deadline=None)
@given(plain, plain)
def test_of_two_tagged_messages_the_last_is_sent(first, second):
    assert message_of(f"<message>{first}</message> <message>{second}</message>") == second.strip()


def test_a_reply_with_a_tool_call_is_a_call_not_a_message():
    turn = read_turn('<think>look up</think>'
                     '<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W1"}}</tool_call>')
    assert [c.name for c in turn.calls] == ["get_order_details"] and turn.message == ""


class Script:
    """An orchestrator that plays fixed replies and records what it was shown each turn."""

    name = "test:released-script"

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.seen, self.catalogs = replies, [], []

    def session(self, task: Any, specs: Any, seed: int) -> Script:
        return self

    async def generate(self, messages: list[dict[str, Any]], tools: Any = None, **_: Any) -> PolicyOutput:
        self.seen.append([dict(m) for m in messages])
        self.catalogs.append(tools)
        reply = self.replies[min(len(self.seen), len(self.replies)) - 1]  # the last reply repeats
        return PolicyOutput(text=reply, input_tokens=100, output_tokens=20, cost_usd=0.001)

    def token_trajectory(self) -> None:
        return None


@pytest.fixture(scope="module")
def retail():
    return load_source(EvalConfig.build(benchmark="tau2:retail", split="base"))


def task_of(source: Any, task_id: str) -> Any:
    return next(t for t in source.tasks if t.task_id == task_id)


def play(source: Any, task_id: str, policy: Script, experts: dict[str, Any] | None = None) -> Any:
    task = task_of(source, task_id)
    request = RolloutRequest(run_id="r", task=task, benchmark="tau2", user=source.user_for(task))
    tools = released_tools(task, source.tools_for(task), experts or {})
    return asyncio.run(run_rollout(policy, tools, request, source.grader, RELEASED))


def golden_calls(task: Any) -> list[str]:
    return [format_tool_call(a["name"], a.get("arguments") or {}) for a in task.answer]


def test_retail_78_solved_in_the_released_format_with_the_policy_in_the_prompt(retail):
    """The agent asks for the email in a <message>, acts, and tells the user; the user ends the call."""
    task = task_of(retail, "retail-78")
    policy = Script(["<think>authenticate first</think><message>Could you tell me your email address?</message>",
                     *golden_calls(task), "<think>all done</think><message>All three changes are done.</message>"])
    result = play(retail, "retail-78", policy)
    system, greeting, opening = policy.seen[0]
    assert "<policy>" in system["content"] and "# Retail agent policy" in system["content"]
    assert EXPERT_RULE in system["content"] and TRANSFER_RULE not in system["content"]  # the transfer rule is replaced
    assert greeting == {"role": "assistant", "content": GREETING} and "#W5056519" in opening["content"]
    offered = {entry["function"]["name"] for entry in policy.catalogs[0]}
    assert "call_expert" in offered and "transfer_to_human_agents" not in offered and "cancel_pending_order" in offered
    # the user saw the message without tags or reasoning, and answered it
    assert policy.seen[1][-2] == {"role": "assistant", "content": "Could you tell me your email address?"}
    assert "yara.muller9246@example.com" in policy.seen[1][-1]["content"]
    assert result.trajectory.outcome == 1.0 and json.loads(result.trajectory.criteria_json)["db"] is True
    assert result.trajectory.final_answer == "All three changes are done."
    users = [s for s in result.steps if s.kind == "user"]
    assert len(users) == 2 and all(s.simulated for s in users)  # the scripted user is labelled simulated
    assert result.trajectory.cost_usd == pytest.approx(0.001 * len(policy.seen))  # the orchestrator's turns are priced


class Expert:
    """An expert model that replies with a fixed turn, priced, and records the prompt it was given."""

    def __init__(self, reply: str, model: str = "gpt-5") -> None:
        self.spec = ToolSpec(name=f"fake-{model}", description="expert", category="generalist", model=model,
                             input_per_mtok=1.25, output_per_mtok=10.0, parameters={"type": "object"})
        self.reply, self.prompts = reply, []

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Observation:
        self.prompts.append(arguments["prompt"])
        return Observation(text=self.reply, input_tokens=2000, output_tokens=100, cost_usd=self.spec.cost(2000, 100),
                           model=self.spec.model, simulated=True)


def test_the_experts_reply_is_the_agents_turn_and_its_cost_is_kept(retail):
    lookup = ('<tool_call>{"name": "find_user_id_by_email", "arguments": {"email": "yara.muller9246@example.com"}}'
              '</tool_call>')
    expert = Expert(f"<think>find the user</think>{lookup}")
    policy = Script([format_tool_call("call_expert", {"expert": "expert-1"}), "<message>You are verified.</message>"])
    result = play(retail, "retail-78", policy, experts={"expert-1": expert})
    prompt = expert.prompts[0]  # the domain's own prompt and tools, and the conversation so far
    assert TRANSFER_RULE in prompt and "call_expert" not in prompt and '"transfer_to_human_agents"' in prompt
    assert f"assistant: {GREETING}" in prompt and "#W5056519" in prompt
    said = policy.seen[1][-2:]  # the conversation keeps what the expert did, not the orchestrator's call_expert
    assert said[0] == {"role": "assistant", "content": lookup} and said[1]["content"] == "yara_muller_8652"
    (call,) = [s for s in result.steps if s.tool_name == "call_expert"]
    assert (call.model, call.simulated, call.cost_usd) == ("gpt-5", True, pytest.approx(0.0035))
    assert result.trajectory.cost_usd == pytest.approx(0.0035 + 0.001 * 2)  # not reset to 0
    assert json.loads(result.trajectory.tool_counts_json) == {"fake-gpt-5": 1, "find_user_id_by_email": 1}


def test_a_gpt5_expert_is_asked_as_openai_accepts(retail):
    """The expert path against a server with OpenAI's rules (`strict`): GPT-5 is asked without a parameter it
    refuses, and its reply is the agent's turn, priced from the usage the server reports."""
    lookup = ('<tool_call>{"name": "find_user_id_by_email", "arguments": {"email": "yara.muller9246@example.com"}}'
              '</tool_call>')
    with OpenAICompatServer(strict=True, models=("gpt-5",), reply=lookup, usage=(2000, 100)) as server:
        expert = OpenAIChatTool(ToolSpec(
            name="gpt-5", description="GPT-5 on OpenAI.", category="generalist", model="gpt-5", input_per_mtok=1.25,
            output_per_mtok=10.0, parameters=LLM_TOOL_PARAMETERS,
            backend={"kind": "openai", "base_url": server.base_url, "model": "gpt-5", "provider": "openai",
                     "max_retries": 0}))
        policy = Script([format_tool_call("call_expert", {"expert": "expert-1"}), "<message>Verified.</message>"])
        result = play(retail, "retail-78", policy, experts={"expert-1": expert})
    assert server.refused == [] and len(server.bodies) == 1 and "max_tokens" not in server.bodies[0]
    (call,) = [s for s in result.steps if s.tool_name == "call_expert"]
    assert call.error is None and (call.model, call.simulated, call.cost_usd) == ("gpt-5", False, pytest.approx(0.0035))
    assert policy.seen[1][-1]["content"] == "yara_muller_8652"  # the expert's lookup ran as the agent's turn


def test_an_unknown_expert_is_an_error_the_agent_reads_and_no_model_is_called(retail):
    expert = Expert("<message>never</message>")
    policy = Script([format_tool_call("call_expert", {"expert": "expert-9"}), "<message>Sorry about that.</message>"])
    result = play(retail, "retail-5", policy, experts={"expert-1": expert})
    assert expert.prompts == [] and policy.seen[1][-1]["content"].startswith("Error: unknown expert 'expert-9'")
    assert result.trajectory.cost_usd == pytest.approx(0.002)


def test_tau2_steps_stop_the_conversation_at_200(retail):
    """Each reply and each execution of its calls is a step: 100 lookups are 200 steps."""
    result = play(retail, "retail-5", Script([format_tool_call("list_all_product_types", {})]))
    assert MAX_STEPS == 200 and result.trajectory.n_turns == 100
    assert result.trajectory.error.startswith("step limit 200") and result.trajectory.status == "no_answer"
    assert result.trajectory.outcome == 0.0


def test_ten_tool_errors_end_the_conversation(retail):
    result = play(retail, "retail-5", Script([format_tool_call("get_order_details", {"order_id": "#nope"})]))
    assert result.trajectory.n_turns == 10 and "10 tool errors" in result.trajectory.error


def test_call_expert_describes_each_slot_with_its_price(retail):
    expert_1, expert_2 = Expert("x", "gpt-5"), Expert("x", "gpt-5-mini")
    spec = CallExpert({"expert-1": expert_1, "expert-2": expert_2}, {}, "").spec
    about = spec.parameters["properties"]["expert"]["description"]
    assert spec.parameters["required"] == ["expert"]
    assert "expert-1 | $1.25 | $10 |" in about and "expert-2 | $1.25 | $10 |" in about and "gpt-5" not in about


TASKS = ["retail-5", "retail-9", "retail-36"]


class Golden:
    """A privileged orchestrator in the released format: the task's golden calls, then a closing message."""

    name = "test:golden-released"
    privileged = True

    def session(self, task: Any, specs: Any, seed: int) -> _Replies:
        calls = [format_tool_call(a["name"], a.get("arguments") or {}) for a in task.answer]
        closing = " ".join(task.meta["communicate_info"]) or "Everything is done."
        return _Replies([*calls, f"<think>done</think><message>{closing}</message>"])


class _Replies:
    def __init__(self, replies: list[str]) -> None:
        self.replies = replies

    async def generate(self, messages: list[dict[str, Any]], **_: Any) -> PolicyOutput:
        return PolicyOutput(text=self.replies.pop(0), input_tokens=50, output_tokens=10)

    def token_trajectory(self) -> None:
        return None


class AskExpert:
    """Hands its first turn to expert-2 (the default toolkit's simulated GPT-5-mini)."""

    name = "test:ask-expert"

    def session(self, task: Any, specs: Any, seed: int) -> _Replies:
        return _Replies([format_tool_call("call_expert", {"expert": "expert-2"})])


def test_retail_tasks_run_end_to_end_and_the_run_records_the_released_agent(tmp_path: Path):
    store = Store(tmp_path / "r.duckdb")
    config = EvalConfig.build(benchmark="tau2:retail", split="test", tasks=TASKS, tau2_agent="released")
    (summary,) = run_eval(config, store, Console(quiet=True), policy=Golden())
    trajs = queries.trajectories_df(store, [summary.run_id])
    assert sorted(trajs.task_id) == sorted(TASKS) and list(trajs.outcome) == [1.0, 1.0, 1.0]
    stored = json.loads(queries.run(store, summary.run_id).config_json)
    assert stored["tau2_agent"] == "released"
    lab_agent = config.model_copy(update={"tau2_agent": "lab"})  # both agents stay selectable, as separate runs
    assert lab_agent.run_id(None, 50) != config.run_id(None, 50)


def test_an_expert_call_is_a_priced_simulated_step_counted_in_the_runs_cost(tmp_path: Path):
    store = Store(tmp_path / "c.duckdb")
    config = EvalConfig.build(benchmark="tau2:retail", split="test", tasks=["retail-5"], tau2_agent="released")
    (summary,) = run_eval(config, store, Console(quiet=True), policy=AskExpert())
    steps = queries.steps_df(store, summary.run_id)
    (expert,) = steps[steps.tool_name == "call_expert"].itertuples()
    assert expert.model == "gpt-5-mini" and expert.simulated and expert.cost_usd > 0
    # its reply went to the user
    assert steps[steps.kind == "answer"].observation.iloc[0].startswith("[simulated gpt-5-mini]")
    run_cost = queries.runs_summary_df(store).set_index("run_id").cost_usd[summary.run_id]
    assert run_cost == pytest.approx(expert.cost_usd) and run_cost > 0
    assert json.loads(queries.trajectories_df(store,
                                              [summary.run_id]).tool_counts_json.iloc[0]) == {"sim:gpt-5-mini": 1}


def test_a_bad_or_misplaced_tau2_agent_is_one_line_and_exit_2(tmp_path: Path):
    for args, message in [
        (["--benchmark", "tau2:retail", "--tau2-agent", "nope"], "tau2_agent: Input should be 'lab' or 'released'"),
        (["--benchmark", "frames", "--tau2-agent", "released"], "--tau2-agent released runs tau2 conversations"),
    ]:
        result = orchestra("eval", *args, "--limit", "1", db=tmp_path / "x.duckdb", timeout=300)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
