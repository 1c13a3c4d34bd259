"""One chat template, two engines: the lab's `hf:` policy and a vLLM server see the same token ids.

The same model folder is run in-process by transformers and served by vLLM; the same rollout (same
tools, same task, greedy) is played by `hf:` and by `openai:` against the server. The token records
of the `openai:` run come from the server (`return_token_ids`, logprobs), so equal records mean the
server rendered the conversation exactly as the trainer's tokenizer does, and sampled what the
in-process model would have.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any

import pytest

from lab.policies.hf_policy import HFPolicy
from lab.policies.openai_policy import OpenAIPolicy
from lab.rollout import RolloutConfig, RolloutRequest, run_rollout
from lab.toolkit import load_toolkit
from lab.tools.base import Observation, ToolContext
from lab.toolspec import ToolSpec
from trainer.fixed_caller import CALL

pytestmark = pytest.mark.slow


@dataclass
class Task:
    task_id: str = "t1"
    question: str = "Which year did the lantern guild of Osk first light the harbour?"


class Slot:
    """A paper-small tool (its spec, so the catalog is the one the served model was fitted on) whose
    `answer` withholds its answer on the first call: a conversation then has two turns, and the second
    turn's prompt must extend the first's tokens."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        self.calls = 0

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        self.calls += 1
        meta: dict[str, Any] = {"counted_as": arguments["model"]}
        if self.spec.name == "answer" and self.calls > 1:
            meta["final_answer"] = "1834"
        return Observation(text="The guild lit the harbour in 1834." if self.calls > 1 else "No answer yet.", meta=meta)


async def right(task, answer, context) -> float:
    return float(answer == "1834")


def play(policy: Any, protocol: str) -> Any:
    tools = {spec.name: Slot(spec) for spec in load_toolkit("paper-small").tools}
    request = RolloutRequest(run_id="r", task=Task(), preference={"outcome": 1.0}, seed=3)
    config = RolloutConfig(protocol=protocol, max_turns=2, context_tokens=2000)
    return asyncio.run(run_rollout(policy, tools, request, right, config))


def test_round_prompts_render_to_the_same_ids_and_the_server_scores_what_transformers_scores(caller_model,
                                                                                             caller_server):
    served = play(OpenAIPolicy("caller", caller_server.base_url, max_tokens=48), "rounds")
    local = play(HFPolicy(caller_model, max_new_tokens=48), "rounds")
    assert [json_call(s) for s in served.steps if s.kind == "tool"] == [CALL, CALL]
    assert len(served.rounds) == len(local.rounds) == 2
    for remote, here in zip(served.rounds, local.rounds):
        assert remote.tokens.prompt_ids == here.tokens.prompt_ids  # one chat template, two engines
        assert remote.tokens.completion_ids == here.tokens.completion_ids
        assert all(math.isclose(a, b, abs_tol=2e-3) for a, b in zip(remote.tokens.logprobs, here.tokens.logprobs))
    assert served.trajectory.input_tokens == sum(len(r.tokens.prompt_ids) for r in served.rounds)


def test_a_conversation_token_trajectory_from_the_server_equals_the_in_process_one(caller_model, caller_server):
    served = play(OpenAIPolicy("caller", caller_server.base_url, max_tokens=48), "conversation")
    local = play(HFPolicy(caller_model, max_new_tokens=48), "conversation")
    remote, here = served.tokens, local.tokens
    assert remote is not None and here is not None
    assert served.trajectory.n_turns == 2 and served.trajectory.final_answer == "1834"
    assert remote.prompt_ids == here.prompt_ids
    assert remote.completion_ids == here.completion_ids
    assert remote.mask == here.mask and 0 in remote.mask  # the tool response between the turns is context
    sampled = [(a, b) for a, b, m in zip(remote.logprobs, here.logprobs, remote.mask) if m]
    assert all(math.isclose(a, b, abs_tol=2e-3) for a, b in sampled)


def json_call(step: Any) -> dict[str, Any]:
    import json

    return {"name": step.tool_name, "arguments": json.loads(step.arguments_json)}
