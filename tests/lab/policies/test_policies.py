"""Tests for lab.policies.

Orchestrators made by `make_policy` run through the real engine: an `openai:` policy over real HTTP,
and an `hf:` policy whose token trajectory the trainer can use (the scripted baselines and the oracle
have their own test files).
"""

from __future__ import annotations

import asyncio

import pytest

from lab.policies import make_policy
from lab.rollout import RolloutRequest, run_rollout
from lab.rollout.parse import format_tool_call
from lab.testing import OpenAICompatServer


class _Task:
    task_id = "http-1"
    question = "What is 6 x 7?"


def test_openai_policy_over_real_http_with_native_and_text_tool_calls():
    from lab.tools.code_interpreter import CodeInterpreter

    script = [
        {"content": "", "tool_calls": [{"name": "code_interpreter", "arguments": {"code": "print(6*7)"}}]},
        format_tool_call("code_interpreter", {"code": "print(7*6)"}),
        "<think>both say 42</think><answer>42</answer>",
    ]

    async def grade(task, answer, context):
        return float(answer == "42")

    with OpenAICompatServer(script=script, usage=(120, 30)) as server:
        policy = make_policy(f"openai:gpt-5@{server.base_url}")

        async def go():
            try:
                return await run_rollout(policy, {"code_interpreter": CodeInterpreter()},
                                         RolloutRequest(run_id="o", task=_Task()), grade)
            finally:
                await policy.aclose()

        result = asyncio.run(go())
        bodies = server.bodies
    traj = result.trajectory
    assert traj.outcome == 1.0 and traj.format_ok and traj.n_turns == 3
    assert [s.observation.strip() for s in result.steps if s.kind == "tool"] == ["42", "42"]
    assert traj.input_tokens == 360 and traj.output_tokens == 90
    assert traj.cost_usd == pytest.approx(3 * (120 * 1.25 + 30 * 10.0) / 1e6)  # gpt-5 priced as orchestrator
    assert all("tools" not in body for body in bodies)  # the catalog travels once, in the system prompt
    second = bodies[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"]  # native call answered by id
    assert bodies[2]["messages"][-1]["role"] == "user"  # text call answered as a user turn


def test_openai_policy_that_cannot_reach_its_endpoint_fails_the_rollout_quickly():
    from lab.policies.openai_policy import OpenAIPolicy
    from lab.testing.openai_server import unused_port

    policy = OpenAIPolicy("m", f"http://127.0.0.1:{unused_port()}/v1", max_retries=1, timeout_s=2)

    async def go():
        try:
            return await run_rollout(policy, {}, RolloutRequest(run_id="o", task=_Task()),
                                     lambda *a: asyncio.sleep(0, 0.0))
        finally:
            await policy.aclose()

    result = asyncio.run(go())
    # an outage is no result: flagged so the harness does not store it (a resume retries it)
    assert result.unavailable and result.unavailable.startswith("endpoint unavailable:")
    assert result.trajectory.outcome == 0 and result.trajectory.final_answer is None


def test_hf_policy_token_trajectory_concatenates_sampled_ids_and_tool_tokens(tmp_path):
    torch = pytest.importorskip("torch")
    from lab.policies.hf_policy import HFPolicy
    from lab.rollout.prompt import tool_response_text

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        policy = HFPolicy("smollm2", max_new_tokens=12)
        session = policy.session(_Task(), [], seed=0)
        messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": _Task.question}]
        first = asyncio.run(session.generate(messages))
        tokens = session.token_trajectory()
        sampled = list(tokens.completion_ids)
        assert first.output_tokens == sum(tokens.mask) > 0 and len(tokens.logprobs) == len(sampled)
        assert all(lp <= 0 for lp in tokens.logprobs)
        messages += [{"role": "assistant", "content": first.text},
                     {"role": "tool", "content": tool_response_text("calc", "RESULT-42", 1000)}]
        second = asyncio.run(session.generate(messages))
    finally:
        torch.set_num_threads(threads)
    tokens = session.token_trajectory()
    assert tokens.completion_ids[: len(sampled)] == sampled  # earlier sampled ids are never re-tokenized
    fragment = [t for t, m in zip(tokens.completion_ids[len(sampled):], tokens.mask[len(sampled):]) if m == 0]
    text = session.tokenizer.decode(fragment)
    assert "RESULT-42" in text and "assistant" in text  # tool response + the template's next-turn marker
    assert sum(tokens.mask) == first.output_tokens + second.output_tokens
    assert len(tokens.completion_ids) == len(tokens.mask) == len(tokens.logprobs)
    # what the trainer reads back from the store is exactly what was sampled
    from lab.records import TokenTrajectoryRecord, TrajectoryRecord
    from lab.store import Store, queries

    store = Store(tmp_path / "tokens.duckdb")
    record = TokenTrajectoryRecord(run_id="hf", task_id=_Task.task_id, **tokens.model_dump())
    store.write_trajectory(TrajectoryRecord(run_id="hf", task_id=_Task.task_id), [], record)
    row = queries.token_trajectories_df(store, "hf").iloc[0]
    assert list(row["completion_ids"]) == tokens.completion_ids and list(row["mask"]) == tokens.mask
    assert list(row["logprobs"]) == pytest.approx(tokens.logprobs)
