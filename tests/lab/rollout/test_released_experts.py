"""The released expert protocol inside rollouts: what each slot's model receives on the offline world, the
released training's round behaviours, and how long an expert call may take.

Prompts are compared with the authors' construction (`tests/helpers/released_experts.py`) on the state
the environment had gathered when the call was made.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from lab.rollout import RolloutConfig, RolloutRequest, run_rollout
from lab.rollout.parse import ToolCall, format_tool_call
from lab.rollout.running import execute_call
from lab.testing import OpenAICompatServer
from lab.testing.virtual_clock import VirtualClockLoop
from lab.toolkit import build_tools, load_toolkit
from lab.tools.base import ModelRequest, Observation, ToolContext, estimate_tokens
from lab.tools.experts import ExpertSettings, Gathered, RoundView
from lab.tools.openai_llm import OpenAIChatTool
from lab.tools.paper import PaperTool, paper_parameters
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec
from tests.helpers.plays import Plays
from tests.helpers.released_experts import (
    released_answer_messages,
    released_code_prompt,
    released_context,
    released_search_prompt,
)


class Spy:
    """A slot model that records each request with the gathered state it was asked on, then answers as the
    model it wraps."""

    def __init__(self, model: Any, log: list[dict[str, Any]]) -> None:
        self.model, self.spec, self.log = model, model.spec, log

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        return await self.ask(ModelRequest(arguments["prompt"]), context)

    async def ask(self, request: ModelRequest, context: ToolContext | None = None) -> Observation:
        assert context is not None and context.round is not None
        self.log.append({"model": self.spec.model, "request": request,
                         "gathered": copy.deepcopy(context.round.gathered)})
        return await self.model.ask(request, context)


def spied_paper_tools(log: list[dict[str, Any]]) -> dict[str, Any]:
    tools = build_tools(load_toolkit("paper"))
    for tool in tools.values():
        tool.models = {slot: Spy(model, log) for slot, model in tool.models.items()}
    return tools


def test_each_slot_model_receives_the_released_prompt_for_the_state_gathered_so_far(world):
    task = next(t for t in world.select(family="frames", split="test") if t.meta["hops"] == 2)
    log: list[dict[str, Any]] = []
    turns = [("search", "search-3"), ("search", "search-1"), ("enhance_reasoning", "reasoner-3"),
             ("answer", "answer-4")]
    policy = Plays(*(format_tool_call(tool, {"model": slot}) for tool, slot in turns))

    async def grade(t, answer, context):
        return float(answer == str(t.answer))

    result = asyncio.run(run_rollout(policy, spied_paper_tools(log), RolloutRequest(run_id="r", task=task), grade,
                                     RolloutConfig(protocol="rounds")))
    assert [entry["model"] for entry in log] == ["qwen3-32b", "gpt-5", "qwen2.5-coder-32b-instruct", "qwen3-32b"]
    for (tool, _), entry in zip(turns, log):
        gathered, request = entry["gathered"], entry["request"]
        context = released_context(gathered.documents, gathered.programs, tool, entry["model"], task.question,
                                   frames=False, count=estimate_tokens)
        if tool == "search":
            assert (request.system, request.prompt) == (None, released_search_prompt(context, task.question, False))
        elif tool == "enhance_reasoning":
            assert (request.system, request.prompt) == (None, released_code_prompt(context, task.question))
        else:
            assert (request.system, request.prompt) == released_answer_messages(context, task.question,
                                                                                entry["model"], False)
    assert log[1]["gathered"].documents  # the second query writer read what the first search found
    # the simulated Qwen3 answered in \boxed{}, and the released reader took the answer from it
    answer_step = next(s for s in result.steps if s.tool_name == "answer")
    assert "\\boxed{" in answer_step.observation and result.trajectory.final_answer in answer_step.observation


def test_distinct_calls_of_a_round_run_together_on_the_context_gathered_before_the_round(world):
    task = next(t for t in world.select(family="frames", split="test") if t.meta["hops"] == 2)
    log: list[dict[str, Any]] = []
    both = (format_tool_call("search", {"model": "search-1"}) + "\n"
            + format_tool_call("search", {"model": "search-2"}) + "\n"
            + format_tool_call("enhance_reasoning", {"model": "reasoner-1"}))
    policy = Plays(both, format_tool_call("answer", {"model": "answer-1"}))

    async def grade(t, answer, context):
        return 1.0

    config = RolloutConfig(protocol="rounds", calls_per_round="distinct", document_order="interleaved")
    result = asyncio.run(run_rollout(policy, spied_paper_tools(log), RolloutRequest(run_id="r", task=task), grade,
                                     config))
    first_round = [s for s in result.steps if s.turn == 0 and s.kind == "tool"]
    # a second `search` of the round is not run (the released loop runs each tool once a round)
    assert [s.tool_name for s in first_round] == ["search", "enhance_reasoning"]
    assert [s.call_idx for s in first_round] == [0, 1]
    assert log[0]["gathered"].documents == [] and log[1]["gathered"].documents == []  # asked before either ran
    assert log[2]["gathered"].documents  # the answer, next round, reads the search's documents
    assert json.loads(result.trajectory.tool_counts_json) == {"search-1": 1, "reasoner-1": 1, "answer-1": 1}


def test_the_h100_config_trains_with_the_released_round_behaviours():
    from trainer.config import OrchestraGRPOConfig

    config = OrchestraGRPOConfig.from_yaml("configs/train/h100-qwen3-8b.yaml", use_vllm=False)
    rollout = config.rollout_config()
    assert (rollout.protocol, rollout.expert_protocol, rollout.calls_per_round, rollout.document_order) == (
        "rounds", "released", "distinct", "interleaved")
    assert (rollout.max_turns, rollout.context_tokens, rollout.document_chars, rollout.document_suffix) == (
        30, 24000, 4000, "")
    # a round without a valid call is dropped, as released (its stop_properly_penalty is never applied)
    assert config.retrieval_top_k == 30 and config.beta == pytest.approx(1e-4) and config.format_penalty == 0.0


# ---- waiting --------------------------------------------------------------------------------------------------


def answer_tool(base_url: str, **backend: Any) -> PaperTool:
    """The paper `answer` tool with one slot, GPT-5 behind a fixed-latency server."""
    model = OpenAIChatTool(ToolSpec(name="gpt-5", description="GPT-5", parameters=LLM_TOOL_PARAMETERS,
                                    category="generalist", model="gpt-5", input_per_mtok=1.25, output_per_mtok=10.0,
                                    backend={"kind": "openai", "base_url": base_url, "model": "gpt-5", **backend}))
    spec = ToolSpec(name="answer", description="answer", category="basic", parameters=paper_parameters(["answer-1"]))
    return PaperTool(spec, "answer", {"answer-1": model})


def slow_expert_call(tool_timeout_s: float | None, server_latency_s: float = 150.0,
                     **backend: Any) -> tuple[Observation, float]:
    """One `answer` call to a server that takes `server_latency_s`, on a clock that skips idle time:
    (observation, seconds the call took on that clock)."""
    loop = VirtualClockLoop()

    async def main() -> tuple[Observation, float]:
        server = OpenAICompatServer(latency_s=server_latency_s, usage=(40, 6),
                                    reply="<think>\nslow\n</think>\n<answer>\nParis\n</answer>")
        async with server.serving_here():
            tool = answer_tool(server.base_url, **backend)
            context = ToolContext(round=RoundView(Gathered(), "", estimate_tokens, ExpertSettings()))
            config = RolloutConfig(protocol="rounds", tool_timeout_s=tool_timeout_s)
            started = loop.time()
            call = ToolCall(name="answer", arguments={"model": "answer-1"})
            observation, _ = await execute_call(call, 0, {"answer": tool}, context, config)
            await tool.models["answer-1"].aclose()
            return observation, loop.time() - started

    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


def test_an_expert_call_longer_than_two_minutes_completes_when_the_toolkit_allows_it():
    observation, took = slow_expert_call(tool_timeout_s=None)
    assert observation.error is None, observation.text
    assert observation.meta["final_answer"] == "Paris" and took >= 150


def test_a_rollout_ceiling_cuts_the_call_and_the_observation_names_the_tool_and_the_limit():
    observation, took = slow_expert_call(tool_timeout_s=120.0)
    assert observation.error == "tool 'answer' timed out after 120 s (the run's tool_timeout_s)"
    assert 120 <= took < 150


def test_a_backend_timeout_the_toolkit_sets_is_kept_under_the_experts_longer_ceiling():
    observation, took = slow_expert_call(tool_timeout_s=None, timeout_s=100.0)
    assert observation.error is not None and "timed out after 100s" in observation.error
    assert took < 150


def test_interleaved_document_order_merges_each_search_into_the_earlier_documents(world):
    from lab.tools.experts import merge_documents

    task = next(t for t in world.select(family="frames", split="test") if t.meta["hops"] == 2)
    log: list[dict[str, Any]] = []
    policy = Plays(format_tool_call("search", {"model": "search-1"}), format_tool_call("search", {"model": "search-3"}),
                   format_tool_call("answer", {"model": "answer-1"}))

    async def grade(t, answer, context):
        return 1.0

    result = asyncio.run(run_rollout(policy, spied_paper_tools(log), RolloutRequest(run_id="r", task=task), grade,
                                     RolloutConfig(protocol="rounds", document_order="interleaved")))
    searches = [s for s in result.steps if s.tool_name == "search"]
    assert len(searches) == 2 and len(log) == 3
    first = log[1]["gathered"].documents  # what the first search gathered, least relevant first
    found = [d for d in log[2]["gathered"].documents if d not in first]
    assert first and found and log[2]["gathered"].documents == merge_documents(first, found)
    assert log[2]["gathered"].documents != first + found  # interleaved, not appended
