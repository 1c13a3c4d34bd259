"""Tests for lab.rollout.engine.

The rollout engine: what a user sees in the logged steps and trajectory for each kind of turn.

Also a trajectory through every tool family lands in the store with its tokens, cost and latency.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

from lab.rollout import PolicyOutput, RolloutConfig, RolloutRequest, TokenTrajectory, run_rollout
from lab.rollout.parse import format_tool_call
from lab.store import Store, queries
from lab.testing import OpenAICompatServer
from lab.toolkit import build_tools, load_toolkit
from lab.tools.base import Observation, ToolContext
from lab.toolspec import Toolkit, ToolSpec


@dataclass
class Task:
    task_id: str = "t1"
    question: str = "What is the answer?"


class Echo:
    """A priced tool that takes `delay` real seconds and reports `latency` seconds."""

    def __init__(self, name: str, latency: float = 1.0, delay: float = 0.0) -> None:
        self.spec = ToolSpec(name=name, description="echo", category="generalist", model="gpt-5",
                             input_per_mtok=1.25, output_per_mtok=10.0,
                             parameters={"type": "object", "properties": {"text": {"type": "string"}},
                                         "required": ["text"], "additionalProperties": False})
        self.latency, self.delay, self.running, self.max_running = latency, delay, 0, 0

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        await asyncio.sleep(self.delay)
        self.running -= 1
        return Observation(text=f"echo {arguments['text']}", input_tokens=100, output_tokens=10,
                           cost_usd=self.spec.cost(100, 10), latency_s=self.latency, model="gpt-5")


class Broken(Echo):
    async def execute(self, arguments, context=None):
        raise RuntimeError("disk on fire")


class Turns:
    """A policy that plays fixed turn texts and records what it was shown."""

    name = "test:turns"

    def __init__(self, *turns: str) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict]] = []

    def session(self, task, specs, seed):
        policy = self

        class Session:
            async def generate(self, messages, **_):
                policy.seen.append([dict(m) for m in messages])
                if not policy.turns:
                    return PolicyOutput(text="<think>still thinking</think>", output_tokens=3)
                return PolicyOutput(text=policy.turns.pop(0), input_tokens=50, output_tokens=5, latency_s=0.5)

            def token_trajectory(self):
                return None

        return Session()


async def right_if_42(task, answer, context) -> float:
    return float(answer == "42")


def rollout(policy, tools, config=None):
    request = RolloutRequest(run_id="r", task=Task(), preference={"outcome": 1.0})
    return asyncio.run(run_rollout(policy, {t.spec.name: t for t in tools}, request, right_if_42, config))


def test_calls_then_answer_are_logged_with_costs_and_critical_path_latency():
    a, b = Echo("a", latency=2.0, delay=0.05), Echo("b", latency=3.0, delay=0.05)
    policy = Turns(format_tool_call("a", {"text": "x"}) + format_tool_call("b", {"text": "y"}), "<answer>42</answer>")
    result = rollout(policy, [a, b])
    traj, steps = result.trajectory, result.steps
    assert traj.outcome == 1.0 and traj.final_answer == "42" and traj.format_ok and traj.valid_output
    assert [(s.turn, s.call_idx, s.kind, s.tool_name) for s in steps] == [(0, 0, "tool", "a"), (0, 1, "tool", "b"),
                                                                          (1, 0, "answer", None)]
    assert a.max_running + b.max_running == 2  # the two calls of one turn overlapped
    assert traj.cost_usd == 2 * a.spec.cost(100, 10)
    assert traj.latency_s == 0.5 + 3.0 + 0.5  # orchestrator + slowest call, per turn
    assert json.loads(traj.tool_counts_json) == {"a": 1, "b": 1}
    # the orchestrator saw both observations before answering, with the tool catalog in its system prompt
    second = policy.seen[1]
    assert '"name": "a"' in second[0]["content"] and "Price: $1.25 per 1M input tokens" in second[0]["content"]
    assert [m["content"] for m in second if m["role"] == "tool"] == [
        '<tool_response name="a">\necho x\n</tool_response>', '<tool_response name="b">\necho y\n</tool_response>']


def test_malformed_calls_are_format_errors_the_model_can_recover_from():
    policy = Turns(
        '<tool_call>{"name": "a", "arguments": {"text": }</tool_call>',
        format_tool_call("nope", {}),
        format_tool_call("a", {"text": 3}),
        "<answer>42</answer>",
    )
    result = rollout(policy, [Echo("a")])
    kinds = [(s.kind, s.error) for s in result.steps]
    assert kinds[0][0] == "format_error" and "not valid JSON" in kinds[0][1]
    assert kinds[1] == ("format_error", "unknown tool 'nope' (available: a)")
    assert kinds[2] == ("format_error", "tool 'a': argument 'text' must be string, got integer")
    assert result.trajectory.outcome == 1.0 and not result.trajectory.format_ok
    # one definition of tool counts (reward features and report): executed calls only; malformed ones
    # are format errors and count toward no tool
    assert json.loads(result.trajectory.tool_counts_json) == {}
    assert "argument 'text' must be string" in policy.seen[3][-1]["content"]  # shown to the model


def test_a_failing_tool_is_an_observation_not_a_crash():
    result = rollout(Turns(format_tool_call("a", {"text": "x"}), "<answer>42</answer>"), [Broken("a")])
    assert result.steps[0].error == "tool 'a' failed: RuntimeError: disk on fire"
    assert result.trajectory.outcome == 1.0


def test_turn_limit_and_cost_cap_stop_the_rollout_without_an_answer():
    limited = rollout(Turns(), [Echo("a")], RolloutConfig(max_turns=3))
    assert limited.trajectory.n_turns == 3 and not limited.trajectory.valid_output
    assert limited.trajectory.error == "turn limit 3 reached without an answer"
    assert limited.trajectory.outcome == 0.0 and limited.trajectory.status == "no_answer"
    calls = [format_tool_call("a", {"text": str(i)}) for i in range(10)]
    capped = rollout(Turns(*calls), [Echo("a")], RolloutConfig(cost_cap_usd=0.0005))
    assert capped.trajectory.error == "cost cap $0.0005 reached"
    assert capped.trajectory.cost_usd >= 0.0005 and len(capped.steps) < 10
    assert capped.trajectory.status == "cut"  # stopped by a budget: no result, not a wrong answer


def test_calls_beyond_the_per_turn_limit_are_not_run():
    a = Echo("a")
    text = "".join(format_tool_call("a", {"text": str(i)}) for i in range(4))
    result = rollout(Turns(text, "<answer>42</answer>"), [a], RolloutConfig(max_calls_per_turn=2))
    errors = [s.error for s in result.steps if s.tool_name == "a"]
    assert errors[:2] == [None, None] and all("more than 2 tool calls" in e for e in errors[2:])
    assert not result.trajectory.format_ok


class Raising:
    """A policy whose every turn raises `error` (its server is down, or it has a bug)."""

    name = "raising"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def session(self, task, specs, seed):
        error = self.error

        class S:
            async def generate(self, messages, **_):
                raise error

            def token_trajectory(self):
                return None
        return S()


def test_a_conversation_is_one_token_record_outside_any_round():
    """The conversation's tokens are one record at round -1 (no validity: malformed turns sit inside it);
    a policy without tokens stores none."""
    result = rollout(Turns("<answer>42</answer>"), [])
    assert result.token_records() == []
    result.tokens = TokenTrajectory(prompt_ids=[1], completion_ids=[2, 3], mask=[1, 1], logprobs=[-0.5, -0.25])
    (record,) = result.token_records()
    assert (record.task_id, record.round_idx, record.valid, record.completion_ids) == ("t1", -1, None, [2, 3])


def test_a_policy_that_raises_ends_only_its_rollout():
    result = rollout(Raising(ConnectionError("endpoint unreachable")), [Echo("a")])
    assert result.trajectory.error == "policy failed: ConnectionError: endpoint unreachable"
    assert result.trajectory.outcome == 0.0 and result.trajectory.status == "error" and result.unavailable is None


def test_an_unavailable_endpoint_is_an_outage_not_a_result():
    from lab.errors import EndpointUnavailable

    result = rollout(Raising(EndpointUnavailable("openai:m@http://127.0.0.1:9/v1: ClientConnectorError")), [Echo("a")])
    assert result.unavailable == "endpoint unavailable: openai:m@http://127.0.0.1:9/v1: ClientConnectorError"
    assert result.trajectory.error == result.unavailable and result.trajectory.final_answer is None


def test_a_policy_sees_the_question_not_the_task():
    @dataclass
    class Secret(Task):
        answer: str = "42"
        evidence: tuple = ("the answer is 42",)

    seen = []

    class Spy(Turns):
        privileged = False

        def session(self, task, specs, seed):
            seen.append(task)
            return super().session(task, specs, seed)

    class Oracle(Spy):
        privileged = True

    request = RolloutRequest(run_id="r", task=Secret())
    for policy in (Spy("<answer>42</answer>"), Oracle("<answer>42</answer>")):
        asyncio.run(run_rollout(policy, {}, request, right_if_42))
    view, whole = seen
    assert (view.task_id, view.question) == ("t1", "What is the answer?")
    assert not hasattr(view, "answer") and not hasattr(view, "evidence")
    assert whole.answer == "42"  # only a policy that declares itself privileged gets the task


class Answerer(Echo):
    """A tool that answers for the orchestrator (like the paper toolkit's `answer`) and counts as a slot."""

    async def execute(self, arguments, context=None):
        obs = await super().execute(arguments, context)
        return obs.model_copy(update={"meta": {"final_answer": arguments["text"], "counted_as": "answer-1"}})


def test_a_tool_that_answers_ends_the_episode_and_counts_as_its_slot():
    policy = Turns(format_tool_call("a", {"text": "hi"}), format_tool_call("answer", {"text": "42"}),
                   "<answer>never</answer>")
    result = rollout(policy, [Echo("a"), Answerer("answer")])
    assert result.trajectory.final_answer == "42" and result.trajectory.outcome == 1.0
    assert result.trajectory.n_turns == 2 and policy.turns == ["<answer>never</answer>"]
    assert [s.kind for s in result.steps] == ["tool", "tool", "answer"]
    assert json.loads(result.trajectory.tool_counts_json) == {"a": 1, "answer-1": 1}


def test_findings_are_what_tools_returned_minus_their_own_arguments():
    class Search(Echo):
        async def execute(self, arguments, context=None):
            return Observation(text=f'No passages found for "{arguments["text"]}".')

    captured = {}

    async def grade(task, answer, context):
        captured["findings"] = list(context.findings)
        return 0.0

    request = RolloutRequest(run_id="r", task=Task())
    policy = Turns(format_tool_call("s", {"text": "1834"}), format_tool_call("s", {"x": 1}), "<answer>1</answer>")
    asyncio.run(run_rollout(policy, {"s": Search("s")}, request, grade))
    assert len(captured["findings"]) == 1 and "1834" not in captured["findings"][0]  # echo stripped, malformed skipped


def test_a_grader_that_raises_is_recorded_on_the_trajectory():
    async def broken(task, answer, context):
        raise KeyError("reference")

    request = RolloutRequest(run_id="r", task=Task())
    result = asyncio.run(run_rollout(Turns("<answer>42</answer>"), {}, request, broken))
    assert result.trajectory.error == "grader failed: KeyError: 'reference'" and result.trajectory.outcome == 0.0


class Script:
    name = "test:families"

    def __init__(self, turns):
        self.turns = list(turns)

    def session(self, task, specs, seed):
        turns = self.turns

        class Session:
            async def generate(self, messages, **_):
                return PolicyOutput(text=turns.pop(0) if turns else "<answer>done</answer>")

            def token_trajectory(self):
                return None

        return Session()


def test_each_tool_family_writes_priced_timed_steps(tmp_path, world):
    torch = pytest.importorskip("torch")
    task = world.select(family="frames", split="test")[0]
    with OpenAICompatServer(reply="ANSWER: remote", usage=(200, 40)) as server:
        remote = {"name": "remote-llama", "category": "generalist", "model": "llama-3.3-70b-instruct",
                  "description": "Llama 3.3 70B behind an OpenAI-compatible server.",
                  "backend": {"kind": "openai", "base_url": server.base_url, "model": "llama",
                              "api_key_env": "NO_SUCH_KEY"}}
        default = load_toolkit("default")
        kit = Toolkit.from_dict({"name": "families", "tools": [s.model_dump() for s in default.tools
                                                               if s.name in ("local_search", "code_interpreter",
                                                                             "sim:gpt-5", "smollm2")] + [remote]})
        tools = build_tools(kit)
        turns = [
            format_tool_call("local_search", {"query": task.question}),
            format_tool_call("code_interpreter", {"code": "print(2 ** 10)"}),
            format_tool_call("sim:gpt-5", {"prompt": task.question}),
            format_tool_call("remote-llama", {"prompt": task.question}),
            format_tool_call("smollm2", {"prompt": "Say hello."}),
        ]
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            result = asyncio.run(run_rollout(Script(turns), tools, RolloutRequest(run_id="fam", task=task),
                                             _grade_none))
        finally:
            torch.set_num_threads(threads)
    store = Store(tmp_path / "fam.duckdb")
    store.write_trajectory(result.trajectory, result.steps)
    steps = queries.steps_df(store, "fam").set_index("tool_name")
    assert steps.loc["code_interpreter", "observation"].strip() == "1024"
    assert "[" in steps.loc["local_search", "observation"] and steps.loc["local_search", "latency_s"] > 0
    sim = steps.loc["sim:gpt-5"]
    assert bool(sim.simulated) and sim.model == "gpt-5" and sim.output_tokens > 0
    assert sim.cost_usd == pytest.approx((sim.input_tokens * 1.25 + sim.output_tokens * 10.0) / 1e6)
    remote_step = steps.loc["remote-llama"]
    assert (remote_step.input_tokens, remote_step.output_tokens) == (200, 40) and not bool(remote_step.simulated)
    assert remote_step.cost_usd == pytest.approx(kit.get("remote-llama").cost(200, 40)) and remote_step.latency_s > 0
    local = steps.loc["smollm2"]
    assert (local.output_tokens > 0 and local.latency_s > 0 and local.cost_usd == 0
            and local.model == "smollm2-135m-instruct")
    traj = queries.trajectories_df(store, ["fam"]).iloc[0]
    assert traj.cost_usd == pytest.approx(steps.cost_usd.sum())


async def _grade_none(task, answer, context) -> float:
    return 0.0
