"""Tests for an `openai:` orchestrator with several base URLs (replicas of one model, `lab.tools.replicas`).

`openai:<model>@<url>,<url>` parses back to its URLs (hypothesis) and refuses a bad list with one line
naming the spec. Over real HTTP, against two local OpenAI-compatible servers: rollouts are spread over both;
with one replica stopped mid-run or never listening, every rollout still answers and the down replica
appears in no result; with every replica down the rollout is `unavailable` (not stored, resumed later)
with one line naming each URL and its error, and the eval harness counts it so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.policies import make_policy
from lab.policies.openai_policy import OpenAIPolicy
from lab.rollout import RolloutRequest, RolloutResult, run_rollout
from lab.store import Store, queries
from lab.testing import OpenAICompatServer, unused_port

SECRET = "sk-test-ORCH-REPLICA-3e8d1a"
ANSWER = "<think>six sevens</think><answer>42</answer>"

urls = st.builds(
    lambda scheme, host, port: f"{scheme}://{host}:{port}/v1",
    st.sampled_from(["http", "https"]), st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), st.integers(1, 65535),
)


class _Task:
    def __init__(self, i: int) -> None:
        self.task_id = f"replica-{i}"
        self.question = "What is 6 x 7?"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


async def _grade(task, answer, context) -> float:
    return float(answer == "42")


async def _play(policy: OpenAIPolicy, first: int, n: int) -> list[RolloutResult]:
    """`n` one-turn rollouts, one after another, on one policy (its replica state carries over)."""
    return [await run_rollout(policy, {}, RolloutRequest(run_id="r", task=_Task(i)), _grade)
            for i in range(first, first + n)]


def _rollouts(policy: OpenAIPolicy, n: int) -> list[RolloutResult]:
    """`_play` in a fresh event loop, closing the policy's connections after (they belong to that loop)."""

    async def go() -> list[RolloutResult]:
        try:
            return await _play(policy, 0, n)
        finally:
            await policy.aclose()

    return asyncio.run(go())


def _answered_without_naming(results: list[RolloutResult], url: str) -> None:
    for result in results:
        assert result.unavailable is None and result.trajectory.error is None
        assert result.trajectory.final_answer == "42" and result.trajectory.outcome == 1.0
        stored = [result.trajectory.model_dump_json(), *(step.model_dump_json() for step in result.steps)]
        assert not any(url in text for text in stored)


# -- the spec ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(urls, min_size=1, max_size=4, unique=True), st.sampled_from([",", ", "]))
def test_the_spec_reads_back_its_replicas(listed: list[str], comma: str) -> None:
    policy = make_policy(f"openai:qwen3-8b@{comma.join(u + '/' for u in listed)}")
    assert policy.replicas.urls == tuple(listed)
    assert policy.name == f"openai:qwen3-8b@{','.join(listed)}"  # what runs record as the orchestrator


@settings(max_examples=60, deadline=None)
@given(st.lists(urls, min_size=1, max_size=3, unique=True), st.data())
def test_a_bad_replica_list_is_one_line_naming_the_spec(listed: list[str], data: st.DataObject) -> None:
    bad = data.draw(st.sampled_from(["", "gpu1:8000/v1", "ftp://gpu1/v1", data.draw(st.sampled_from(listed))]))
    at = data.draw(st.integers(0, len(listed)))
    spec = f"openai:qwen3-8b@{','.join([*listed[:at], bad, *listed[at:]])}"
    with pytest.raises(LabInputError) as caught:
        make_policy(spec)
    message = str(caught.value)
    assert message.startswith(f"--orchestrator '{spec}': replica ") and "\n" not in message
    assert any(words in message for words in ("is empty", "must start with http://", "listed twice"))


# -- over real HTTP ---------------------------------------------------------------------------------------


def test_rollouts_are_spread_over_both_replicas() -> None:
    with OpenAICompatServer(reply=ANSWER) as a, OpenAICompatServer(reply=ANSWER) as b:
        results = _rollouts(make_policy(f"openai:qwen3-8b@{a.base_url},{b.base_url}"), 6)
    assert all(r.trajectory.final_answer == "42" for r in results)
    assert a.requests == b.requests == 3


def test_a_replica_stopped_mid_run_is_never_a_failure_of_a_rollout() -> None:
    with OpenAICompatServer(reply=ANSWER) as a, OpenAICompatServer(reply=ANSWER) as b:
        policy = OpenAIPolicy.from_spec(f"openai:qwen3-8b@{a.base_url},{b.base_url}", max_retries=0,
                                        replica_cooldown_s=3600)  # nothing here depends on the clock

        async def go() -> tuple[list[RolloutResult], list[RolloutResult]]:
            try:
                before = await _play(policy, 0, 2)
                assert a.requests == b.requests == 1  # both served, their pooled connections left open
                b.stop()  # returns once b's server has closed its socket and connections
                return before, await _play(policy, 2, 4)
            finally:
                await policy.aclose()

        before, after = asyncio.run(go())
    _answered_without_naming(before + after, b.base_url)
    assert a.requests == 1 + 4 and b.requests == 1
    assert policy.replicas.down() == [b.base_url]


def test_a_replica_nothing_listens_on_is_skipped_and_every_rollout_answers() -> None:
    closed = f"http://127.0.0.1:{unused_port()}/v1"
    with OpenAICompatServer(reply=ANSWER) as up:
        policy = OpenAIPolicy.from_spec(f"openai:qwen3-8b@{closed},{up.base_url}", max_retries=0,
                                        replica_cooldown_s=3600)
        results = _rollouts(policy, 5)
    _answered_without_naming(results, closed)
    assert up.requests == 5


def test_every_replica_down_makes_the_rollout_unavailable_with_one_line_naming_each() -> None:
    closed = f"http://127.0.0.1:{unused_port()}/v1"
    with OpenAICompatServer(fail_first=100, fail_status=502, echo_headers=True) as unwell:
        policy = OpenAIPolicy.from_spec(f"openai:qwen3-8b@{unwell.base_url},{closed}", max_retries=0)
        (result,) = _rollouts(policy, 1)
    line = result.unavailable
    assert line is not None and "\n" not in line
    assert line.startswith(f"endpoint unavailable: openai:qwen3-8b@{unwell.base_url},{closed}: all 2 replicas failed: ")
    assert f"{unwell.base_url} (HTTP 502: " in line and f"{closed} (ClientConnectorError: " in line
    assert SECRET not in line and "***" in line  # the 502 body echoed the key
    assert result.trajectory.final_answer is None and not result.steps


def test_the_harness_counts_a_run_whose_replicas_all_go_down_as_unavailable_and_stores_nothing(
        tmp_path: Path, world) -> None:
    store = Store(tmp_path / "down.duckdb")
    with (OpenAICompatServer(fail_first=10_000, fail_status=503) as a,
          OpenAICompatServer(fail_first=10_000, fail_status=502) as b):
        down = [a.base_url, b.base_url]  # both answer the check before work, then fail every turn
        config = EvalConfig(benchmark="world", split="test", orchestrator=f"openai:qwen3-8b@{','.join(down)}",
                            limit=2, concurrency=2)
        (summary,) = run_eval(config, store)
    assert summary.unavailable == 2 and summary.trajectories == 0
    assert all("endpoint unavailable" in e and all(url in e for url in down) for e in summary.errors)
    assert queries.trajectories_df(store, include_cut=True).empty
    assert queries.run(store, summary.run_id).status == "interrupted"  # the same command resumes it


def test_a_run_whose_replicas_nobody_answers_is_refused_before_work(tmp_path: Path, world) -> None:
    down = [f"http://127.0.0.1:{unused_port()}/v1" for _ in range(2)]
    config = EvalConfig(benchmark="world", split="test", orchestrator=f"openai:qwen3-8b@{','.join(down)}", limit=2)
    with pytest.raises(LabInputError, match=f"^--orchestrator: {down[0]}: cannot be reached"):
        run_eval(config, Store(tmp_path / "down.duckdb"))
