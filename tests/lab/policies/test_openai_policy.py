"""Tests for lab.policies.openai_policy.

`openai:` and `hf:` orchestrators read one prompt: the engine's messages with the catalog once (no `tools=`
under the conversation protocol; only `tools=` under the round protocol).

The `openai:` side runs over real HTTP against the fake server (`lab.testing.OpenAICompatServer`), whose
`bodies` are exactly what the policy sent; a recording session shows what the engine handed the policy.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from lab.policies import make_policy
from lab.policies.openai_policy import _wire_message
from lab.rollout import RolloutConfig, RolloutRequest, run_rollout
from lab.rollout.parse import format_tool_call
from lab.rollout.policy import sampling_seed
from lab.rollout.prompt import system_prompt, tool_description
from lab.testing import OpenAICompatServer
from lab.tools.base import Observation
from lab.toolspec import ToolSpec

INSTRUCTION = "Correctness first, and please avoid expensive calls."


class _Task:
    task_id = "prompt-1"
    question = "What is the word for 42?"


class _Lookup:
    """A free, instant tool with a priced description, so the catalog line is easy to count."""

    spec = ToolSpec(
        name="lookup", description="Look a number's word up.", category="basic", per_call=0.001,
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    )

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Observation:
        return Observation(text=f"word-{arguments['n']}")


class _Recording:
    """Wraps a policy; keeps a copy of the messages the engine passes on each turn."""

    def __init__(self, policy: Any) -> None:
        self.policy, self.name, self.turns = policy, policy.name, []

    def session(self, task: Any, specs: list[ToolSpec], seed: int) -> Any:
        inner, turns = self.policy.session(task, specs, seed), self.turns

        class Session:
            async def generate(self, messages: list[dict[str, Any]], **kwargs: Any):
                turns.append(copy.deepcopy(messages))
                return await inner.generate(messages, **kwargs)

            def token_trajectory(self):
                return inner.token_trajectory()

        return Session()


def _rollout(server: OpenAICompatServer, config: RolloutConfig | None = None, tools: dict[str, Any] | None = None,
             **sampling: Any):
    policy = make_policy(f"openai:gpt-5@{server.base_url}", **sampling)
    recording = _Recording(policy)

    async def grade(task, answer, context):
        return float(answer == "forty-two")

    async def go():
        try:
            request = RolloutRequest(run_id="p", task=_Task(), preference_instruction=INSTRUCTION, seed=7)
            return await run_rollout(recording, tools or {"lookup": _Lookup()}, request, grade, config)
        finally:
            await policy.aclose()

    return asyncio.run(go()), recording.turns


def test_payload_messages_are_the_engines_with_the_catalog_once_and_no_tools_parameter():
    script = [
        format_tool_call("lookup", {"n": 42}),  # a call written as text, as a hf: model writes it
        {"content": "", "tool_calls": [{"name": "lookup", "arguments": {"n": 41}}]},  # a server-parsed call
        "<think>done</think><answer>forty-two</answer>",
    ]
    with OpenAICompatServer(script=script, usage=(10, 2)) as server:
        result, turns = _rollout(server)
        bodies = server.bodies
    assert result.trajectory.outcome == 1.0 and result.trajectory.format_ok and len(bodies) == len(turns) == 3
    expected_system = system_prompt([_Lookup.spec], INSTRUCTION)
    assert turns[0] == [{"role": "system", "content": expected_system}, {"role": "user", "content": _Task.question}]
    assert bodies[0]["messages"] == turns[0]  # the first request is the engine's messages verbatim
    for body, messages in zip(bodies, turns):
        assert "tools" not in body and "tool_choice" not in body
        assert body["messages"] == [_wire_message(m) for m in messages]
        assert body["messages"][0] == {"role": "system", "content": expected_system}
        text = "\n".join(str(m.get("content") or "") for m in body["messages"])
        assert text.count(tool_description(_Lookup.spec)) == 1 and text.count("<tools>") == 1
        assert text.count(INSTRUCTION) == 1
    assert bodies[1]["messages"][-1]["role"] == "user"  # a text call's result has no id: a user turn
    assert bodies[2]["messages"][-1]["role"] == "tool" and bodies[2]["messages"][-1]["tool_call_id"]  # native, by id
    assert [s.observation for s in result.steps if s.kind == "tool"] == ["word-42", "word-41"]


def test_sampling_options_reach_the_payload():
    with OpenAICompatServer(script=["<answer>forty-two</answer>"]) as server:
        _rollout(server, temperature=0.7, top_p=0.9, max_new_tokens=77)
        (body,) = server.bodies
    seed = sampling_seed(7, _Task.task_id) % 2**31  # the rollout's seed mixed with the task's id
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (0.7, 0.9, 77, seed)


def test_tasks_sampled_with_one_rollout_seed_send_different_seeds():
    """An evaluation seeds sample k of every task alike; a model policy must still sample each task on its
    own (before, every task's first turn drew the same random numbers)."""
    class Other(_Task):
        task_id = "prompt-2"

    with OpenAICompatServer(script=["<answer>a</answer>"] * 3) as server:
        policy = make_policy(f"openai:gpt-5@{server.base_url}", temperature=1.0)

        async def go():
            try:
                for task in (_Task(), Other(), _Task()):
                    await run_rollout(policy, {"lookup": _Lookup()}, RolloutRequest(run_id="s", task=task, seed=7),
                                      _never)
            finally:
                await policy.aclose()

        asyncio.run(go())
        first, other, again = (body["seed"] for body in server.bodies)
    assert first != other and first == again  # per task, and reproducible


async def _never(task, answer, context) -> float:
    return 0.0


def test_make_policy_gives_hf_policies_the_sampling_options():
    from lab.policies.hf_policy import HFPolicy

    policy = make_policy("hf:smollm2", temperature=0.7, top_p=0.9, max_new_tokens=64)  # builds, loads nothing
    assert isinstance(policy, HFPolicy) and (policy.temperature, policy.top_p, policy.max_new_tokens) == (0.7, 0.9, 64)
    default = make_policy("hf:smollm2")  # no --max-new-tokens: the policy keeps its own default
    assert (default.temperature, default.top_p, default.max_new_tokens) == (0.0, 1.0, HFPolicy("x").max_new_tokens)


def test_hf_policy_renders_the_same_system_prompt_with_the_catalog_once():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        policy = make_policy("hf:smollm2", max_new_tokens=1)
        session = policy.session(_Task(), [_Lookup.spec], seed=0)
        messages = [{"role": "system", "content": system_prompt([_Lookup.spec], INSTRUCTION)},
                    {"role": "user", "content": _Task.question}]
        asyncio.run(session.generate(messages))
    finally:
        torch.set_num_threads(threads)
    rendered = session.tokenizer.decode(session.token_trajectory().prompt_ids)
    assert rendered.count(messages[0]["content"]) == 1  # the chat template adds no second catalog
    assert rendered.count(tool_description(_Lookup.spec)) == 1 and rendered.count("<tools>") == 1


class _Answer:
    """The round protocol's `answer`: ends the task with the slot's answer."""

    spec = ToolSpec(name="answer", description="Give the final answer.", category="basic",
                    parameters={"type": "object", "properties": {"model": {"type": "string", "enum": ["answer-1"]}},
                                "required": ["model"]})

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Observation:
        return Observation(text="answer-1: forty-two", meta={"final_answer": "forty-two", "counted_as": "answer-1"})


def test_under_the_round_protocol_the_catalog_goes_as_tools_and_calls_come_back_native_or_as_text():
    from lab.rollout.rounds import ROUND_SYSTEM, round_catalog

    script = [
        {"content": "", "tool_calls": [{"name": "lookup", "arguments": {"n": 42}}]},   # the server parsed the call
        format_tool_call("answer", {"model": "answer-1"}),                           # no tool_calls: text is parsed
    ]
    tools = {"lookup": _Lookup(), "answer": _Answer()}
    with OpenAICompatServer(script=script, usage=(10, 2)) as server:
        result, turns = _rollout(server, RolloutConfig(protocol="rounds", max_turns=4), tools)
        bodies = server.bodies
    assert result.trajectory.outcome == 1.0 and [s.tool_name for s in result.steps if s.kind == "tool"] == ["lookup",
                                                                                                            "answer"]
    for body, messages in zip(bodies, turns, strict=True):
        assert body["tools"] == round_catalog([_Lookup.spec, _Answer.spec])
        assert body["messages"] == messages and messages[0] == {"role": "system", "content": ROUND_SYSTEM}
        assert "<tools>" not in str(body["messages"])  # the catalog travels once, as tools=
    # the server's usage, per round
    assert result.trajectory.input_tokens == 20 and result.trajectory.output_tokens == 4


def test_a_server_that_is_not_vllm_is_asked_for_no_token_ids_and_the_rollout_has_no_token_records():
    """Token ids and logprobs are asked of vLLM only (`/models` says `owned_by: vllm`): the fake server is
    not, so it is sent neither `return_token_ids` nor `logprobs` (which OpenAI refuses), and results of
    text calls travel as user turns."""
    call = format_tool_call("lookup", {"n": 42})
    with OpenAICompatServer(script=[call, "<answer>forty-two</answer>"]) as server:
        result, _ = _rollout(server)
        bodies = server.bodies
    assert result.trajectory.n_turns == 2 and result.tokens is None
    assert all("return_token_ids" not in body and "logprobs" not in body for body in bodies)
    assert bodies[1]["messages"][-1]["role"] == "user" and "<tool_response" in bodies[1]["messages"][-1]["content"]


def test_rollouts_that_start_together_ask_what_the_server_is_once_and_an_outage_is_asked_again():
    """A run starts `concurrency` rollouts at once: one `GET /models` answers them all, not one each."""
    from lab.policies.openai_policy import OpenAIPolicy
    from lab.tools.replicas import ReplicaDown

    policy, asked, down = OpenAIPolicy("m", "http://127.0.0.1:9/v1"), [], [True]

    async def models(url: str) -> dict[str, Any]:
        asked.append(url)
        await asyncio.sleep(0.01)
        if down[0]:
            raise ReplicaDown("connection refused")
        return {"data": [{"id": "m", "owned_by": "vllm"}]}

    policy._models = models

    async def ask() -> list[bool]:
        return list(await asyncio.gather(*(policy.is_vllm() for _ in range(64))))

    assert asyncio.run(ask()) == [False] * 64 and len(asked) == 1  # unreachable: not kept
    down[0] = False
    assert asyncio.run(ask()) == [True] * 64 and len(asked) == 2  # asked again, in a new event loop too
    assert asyncio.run(ask()) == [True] * 64 and len(asked) == 2  # then kept
