"""Tests for lab.policies.scripted: each scripted baseline answers through the engine, on both toolkit shapes."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from lab.policies.scripted import SCRIPTS, delegation_biases
from lab.world.bookshop import OPERATIONS as BOOKSHOP_TOOLS
from tests.helpers.scripted_runs import run_policy


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
