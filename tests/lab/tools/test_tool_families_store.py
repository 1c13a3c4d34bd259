"""A trajectory through every tool family lands in the store with its tokens, cost and latency."""

from __future__ import annotations

import asyncio

import pytest

from lab.rollout import PolicyOutput, RolloutRequest, run_rollout
from lab.rollout.parse import format_tool_call
from lab.store import Store, queries
from lab.testing import OpenAICompatServer
from lab.toolkit import build_tools, load_toolkit
from lab.toolspec import Toolkit


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
                  "backend": {"kind": "openai", "base_url": server.base_url, "model": "llama", "api_key_env": "NO_SUCH_KEY"}}
        default = load_toolkit("default")
        kit = Toolkit.from_dict({"name": "families", "tools": [s.model_dump() for s in default.tools
                                                               if s.name in ("local_search", "code_interpreter", "sim:gpt-5", "smollm2")] + [remote]})
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
            result = asyncio.run(run_rollout(Script(turns), tools, RolloutRequest(run_id="fam", task=task), _grade_none))
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
    assert local.output_tokens > 0 and local.latency_s > 0 and local.cost_usd == 0 and local.model == "smollm2-135m-instruct"
    traj = queries.trajectories_df(store, ["fam"]).iloc[0]
    assert traj.cost_usd == pytest.approx(steps.cost_usd.sum())


async def _grade_none(task, answer, context) -> float:
    return 0.0
