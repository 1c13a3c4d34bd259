"""Tests for lab.policies.

Every orchestrator kind runs through the real engine: scripted baselines on the offline world,
an `openai:` policy over real HTTP, and an `hf:` policy whose token trajectory the trainer can use.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from lab.eval.config import EvalConfig
from lab.eval.sources import load_source
from lab.policies import make_policy
from lab.policies.scripted import SCRIPTS, delegation_biases
from lab.rollout import RolloutRequest, run_rollout
from lab.rollout.parse import format_tool_call
from lab.testing import OpenAICompatServer
from lab.toolkit import build_tools, load_toolkit
from lab.world.bookshop import OPERATIONS as BOOKSHOP_TOOLS


@pytest.fixture(scope="module")
def offline(world):
    source = load_source(EvalConfig(benchmark="world", split="test", limit=30))
    toolkit = load_toolkit("default")
    return source, build_tools(toolkit.subset([n for n in toolkit.names if n != "smollm2"]))


def run_policy(name: str, source, tools, seed: int = 0):
    policy = make_policy(f"scripted:{name}", tools=tools, grader=source.grader, task_tools=source.tools_for)

    async def go():
        out = []
        for i, task in enumerate(source.tasks):
            request = RolloutRequest(run_id=name, task=task, seed=seed, sample_idx=i)
            out.append(await run_rollout(policy, {**tools, **source.tools_for(task)}, request, source.grader))
        return out

    return asyncio.run(go())


@pytest.mark.parametrize("name", [*SCRIPTS, "oracle"])
def test_every_scripted_baseline_answers_through_the_engine(name, offline):
    source, tools = offline
    results = run_policy(name, source, tools)
    assert all(r.trajectory.valid_output for r in results)
    # scripts write well-formed calls; only a (simulated) model's wrong action plan may hold bad arguments
    assert all(r.trajectory.format_ok for r in results if not r.trajectory.task_id.startswith("tau2"))
    assert all(r.trajectory.error is None for r in results)
    assert sum(r.trajectory.outcome for r in results) > 0
    assert any(s.tool_name == "local_search" for r in results for s in r.steps)  # multi-hop tasks search
    assert any(s.tool_name == "code_interpreter" and s.error is None for r in results for s in r.steps)
    shop = [r for r in results if r.trajectory.task_id.startswith("tau2")]
    # plans are carried out
    assert shop and any(s.tool_name in BOOKSHOP_TOOLS and s.error is None for r in shop for s in r.steps)


def assert_oracle_bounds_the_baselines(source, tools) -> None:
    """At least as accurate as each baseline, and never dearer on a task both solve."""
    oracle = run_policy("oracle", source, tools)
    for name in ("cheapest-first", "always-strongest"):
        other = run_policy(name, source, tools)
        assert sum(r.trajectory.outcome for r in oracle) >= sum(r.trajectory.outcome for r in other)
        both = [(o, b) for o, b in zip(oracle, other) if o.trajectory.outcome and b.trajectory.outcome]
        assert all(o.trajectory.cost_usd <= b.trajectory.cost_usd + 1e-12 for o, b in both)


def test_oracle_is_an_upper_bound_at_lowest_cost(offline):
    assert_oracle_bounds_the_baselines(*offline)


def test_always_strongest_calls_only_the_most_expensive_generalist(offline):
    source, tools = offline
    models = {s.tool_name for r in run_policy("always-strongest", source, tools) for s in r.steps if s.model}
    assert models - {"sim:qwen2.5-coder-32b"} == {"sim:gpt-5"}  # the coder writes programs, gpt-5 answers


def test_cheapest_first_escalates_only_when_unsure(offline):
    source, tools = offline
    for result in run_policy("cheapest-first", source, tools):
        # answers and final plans (not query replies, programs, or the lookups a model asks for first)
        answers = [s for s in result.steps if s.model and s.tool_name != "sim:qwen2.5-coder-32b"
                   and "ANSWER:" in s.observation and "look these up" not in s.observation]
        for earlier in answers[:-1]:
            assert "CONFIDENCE: low" in earlier.observation


def test_biased_emulations_follow_the_papers_delegation_shares(offline):
    source, tools = offline
    shares = delegation_biases()["gpt-5-prompted"]["shares"]
    calls = Counter()
    for seed in range(4):
        for r in run_policy("gpt-5-prompted", source, tools, seed=seed):
            calls.update(s.model for s in r.steps
                         if s.model and s.model != "qwen2.5-coder-32b-instruct" and s.kind == "tool")
    total = sum(calls.values())
    own_family = (calls["gpt-5"] + calls["gpt-5-mini"]) / total
    assert own_family > 0.9 and calls["gpt-5-mini"] > calls["gpt-5"]  # paper: 98% own family, mostly mini
    assert abs(calls["gpt-5-mini"] / total - shares["gpt-5-mini"]) < 0.2


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


@pytest.fixture(scope="module")
def offline_paper(world):
    source = load_source(EvalConfig(benchmark="world", split="test", limit=15))
    return source, build_tools(load_toolkit("paper"))


@pytest.mark.parametrize("name", ["cheapest-first", "always-strongest", "qwen3-8b-prompted", "oracle"])
def test_baselines_run_on_the_papers_toolkit_shape(name, offline_paper):
    source, tools = offline_paper
    results = run_policy(name, source, tools)
    assert all(r.trajectory.valid_output and r.trajectory.error is None for r in results)
    assert sum(r.trajectory.outcome for r in results) > 0
    called = {s.tool_name for r in results for s in r.steps if s.kind == "tool"}
    assert called - set(BOOKSHOP_TOOLS) <= {"search", "enhance_reasoning", "answer"} and "answer" in called
    slots = {slot for tool in tools.values() for slot in tool.spec.slots}
    for r in results:  # the reward's tool features are slots (and the shop's own functions)
        assert set(json.loads(r.trajectory.tool_counts_json)) <= slots | set(BOOKSHOP_TOOLS)


def test_oracle_on_the_paper_shape_is_never_dearer_than_a_baseline_that_solves(offline_paper):
    assert_oracle_bounds_the_baselines(*offline_paper)


def test_explore_takes_routes_whose_next_call_cannot_be_predicted(offline_paper):
    """Warm-start data from `explore`: on some tasks it answers at once, on others it searches without
    computing or computes without searching, with varied answering slots."""
    source, tools = offline_paper
    results = [r for r in run_policy("explore", source, tools) if not r.trajectory.task_id.startswith("tau2")]
    assert all(r.trajectory.valid_output and r.trajectory.format_ok for r in results)
    routes = [tuple(s.tool_name for s in r.steps if s.kind == "tool") for r in results]
    assert {"search", "enhance_reasoning", "answer"} <= {route[0] for route in routes}
    assert any("search" in route and "enhance_reasoning" not in route for route in routes)
    assert len({s.arguments_json for r in results for s in r.steps if s.tool_name == "answer"}) >= 2
