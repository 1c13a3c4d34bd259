"""Tests for lab.tools.openai_llm.

OpenAIChatTool over real HTTP against the scriptable local server (no network, no mocks).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import openai
import pytest

from lab.errors import LabInputError
from lab.testing import OpenAICompatServer, unused_port
from lab.tools.base import Observation, Tool
from lab.tools.openai_llm import OpenAIChatTool
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec

KEY_ENV = "LAB_TEST_OPENAI_KEY"
SECRET = "sk-test-SECRET-5f3a9c0d7e21"
#: Slack for scheduling on a loaded 2-core machine; the point is "bounded", not "exact".
MARGIN_S = 0.75


def spec(base_url: str, **backend: Any) -> ToolSpec:
    return ToolSpec(
        name="gpt",
        description="A generalist LLM.",
        parameters=LLM_TOOL_PARAMETERS,
        category="generalist",
        model="openai/GPT-5",
        input_per_mtok=1.25,
        output_per_mtok=10.0,
        backend={"kind": "openai", "base_url": base_url, "model": "gpt-5-2025-08-07", "api_key_env": KEY_ENV,
                 "backoff_s": 0.01, **backend},
    )


def call(tool_spec: ToolSpec, arguments: Any = None) -> tuple[Observation, float]:
    """Run one call in a fresh loop; returns the observation and the measured wall time."""

    async def go() -> Observation:
        tool = OpenAIChatTool(tool_spec)
        try:
            return await tool.execute({"prompt": "What is the capital of France?"} if arguments is None else arguments)
        finally:
            await tool.aclose()

    start = time.monotonic()
    obs = asyncio.run(go())
    return obs, time.monotonic() - start


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


def test_success_is_priced_from_usage_and_spec_prices() -> None:
    with OpenAICompatServer(reply="Paris.", usage=(1200, 345)) as srv:
        obs, _ = call(spec(srv.base_url, system_prompt="Be brief.", max_tokens=64, temperature=0.0))
    assert obs.error is None
    assert obs.text == "Paris."
    assert (obs.input_tokens, obs.output_tokens) == (1200, 345)
    assert obs.cost_usd == pytest.approx(1200 * 1.25e-6 + 345 * 10e-6, rel=1e-12)
    assert obs.model == "gpt-5"  # canonical id for repricing, not the served name
    assert obs.latency_s > 0
    sent = srv.bodies[0]
    assert sent["model"] == "gpt-5-2025-08-07"
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["messages"][1]["content"] == "What is the capital of France?"
    assert (sent["max_tokens"], sent["temperature"]) == (64, 0.0)


def test_one_client_is_reused_across_calls() -> None:
    async def go(base_url: str) -> list[Observation]:
        tool = OpenAIChatTool(spec(base_url))
        try:
            return [await tool.execute({"prompt": f"q{i}"}) for i in range(3)]
        finally:
            await tool.aclose()

    with OpenAICompatServer(echo=True) as srv:
        observations = asyncio.run(go(srv.base_url))
    assert [o.text for o in observations] == ["q0", "q1", "q2"]
    assert len(set(srv.client_ports)) == 1  # one pooled keep-alive connection


def test_429_is_retried_until_success() -> None:
    with OpenAICompatServer(fail_first=2, fail_status=429, reply="ok") as srv:
        obs, _ = call(spec(srv.base_url))
    assert obs.error is None and obs.text == "ok"
    assert srv.requests == 3
    assert obs.meta["attempts"] == 3


def test_500_is_retried() -> None:
    with OpenAICompatServer(fail_first=1, fail_status=500, reply="ok") as srv:
        obs, _ = call(spec(srv.base_url))
    assert obs.error is None
    assert srv.requests == 2


def test_retries_stop_after_max_retries() -> None:
    with OpenAICompatServer(fail_first=100, fail_status=503) as srv:
        obs, _ = call(spec(srv.base_url, max_retries=2))
    assert obs.error is not None and "HTTP 503" in obs.error
    assert srv.requests == 3
    assert obs.cost_usd == 0


def test_400_is_not_retried() -> None:
    with OpenAICompatServer(fail_first=100, fail_status=400) as srv:
        obs, _ = call(spec(srv.base_url))
    assert obs.error is not None and "HTTP 400" in obs.error
    assert obs.text.startswith("Error: ")
    assert srv.requests == 1


def test_malformed_reply_is_an_error_observation() -> None:
    with OpenAICompatServer(malformed=True) as srv:
        obs, _ = call(spec(srv.base_url))
    assert obs.error is not None
    assert srv.requests == 1


def test_unreachable_endpoint_fails_within_the_timeout() -> None:
    obs, elapsed = call(spec(f"http://127.0.0.1:{unused_port()}/v1", timeout_s=2.0))
    assert obs.error is not None and "connection" in obs.error.lower()
    assert obs.meta["attempts"] == 4  # refused connections are retried (max_retries=3)
    assert elapsed < 2.0 + MARGIN_S


def test_hanging_server_fails_within_the_timeout() -> None:
    with OpenAICompatServer(hang=True) as srv:
        obs, elapsed = call(spec(srv.base_url, timeout_s=1.0))
    assert obs.error is not None and "timed out" in obs.error
    assert 1.0 - 0.05 <= elapsed < 1.0 + MARGIN_S
    assert obs.latency_s == pytest.approx(elapsed, abs=MARGIN_S)


def test_timed_out_attempts_are_retried_within_the_call_timeout() -> None:
    with OpenAICompatServer(hang=True) as srv:
        obs, elapsed = call(spec(srv.base_url, timeout_s=1.5, attempt_timeout_s=0.3))
    assert obs.error is not None
    assert srv.requests >= 2
    assert elapsed < 1.5 + MARGIN_S


def test_api_key_never_leaks_into_observations_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # The server puts the request headers (Authorization: Bearer <key>) in its errors and replies.
    with OpenAICompatServer(echo_headers=True, fail_first=1, fail_status=429) as srv:
        ok, _ = call(spec(srv.base_url))
    with OpenAICompatServer(echo_headers=True, fail_first=100, fail_status=401) as srv:
        failed, _ = call(spec(srv.base_url))
    assert "Authorization" in ok.text and "***" in ok.text  # the echo arrived, redacted
    assert failed.error is not None and "***" in failed.error
    for obs in (ok, failed):
        assert SECRET not in obs.model_dump_json()
    assert any("attempt 1 failed" in r.getMessage() for r in caplog.records)
    assert all(SECRET not in r.getMessage() for r in caplog.records)
    tool = OpenAIChatTool(spec("http://127.0.0.1:1/v1"))
    assert isinstance(tool, Tool)
    assert SECRET not in repr(tool)


def test_missing_key_env_sends_empty_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    with OpenAICompatServer(echo_headers=True) as srv:
        obs, _ = call(spec(srv.base_url))
    assert obs.error is None
    assert "Bearer EMPTY" in obs.text


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ({}, "missing required argument 'prompt'"),
        ({"prompt": 3}, "argument 'prompt' must be string"),
        ({"prompt": "hi", "model": "x"}, "unknown argument 'model'"),
        ("hi", "arguments must be a JSON object"),
        ({"prompt": "  "}, "argument 'prompt' is empty"),
    ],
)
def test_bad_arguments_are_error_observations_without_a_request(arguments: Any, problem: str) -> None:
    with OpenAICompatServer() as srv:
        obs, _ = call(spec(srv.base_url), arguments)
    assert obs.error is not None and problem in obs.error
    assert srv.requests == 0


def test_bad_backend_is_one_clear_input_error() -> None:
    bad = spec("http://x/v1", timeout_s=-1)
    with pytest.raises(LabInputError, match=r"tool 'gpt': backend.timeout_s: .*greater than 0"):
        OpenAIChatTool(bad)
    missing = spec("http://x/v1").model_copy(update={"backend": {"kind": "openai", "model": "m"}})
    with pytest.raises(LabInputError, match=r"backend.base_url: Field required"):
        OpenAIChatTool(missing)


def test_server_scripts_native_and_text_tool_calls() -> None:
    """The queue of scripted replies a policy test relies on, read through the official SDK."""
    script = [
        {"tool_calls": [{"name": "search", "arguments": {"query": "capital of France"}}]},
        '<tool_call>{"name": "answer", "arguments": {"answer": "Paris"}}</tool_call>',
        {"status": 500},
    ]
    tools = [ToolSpec(name="search", description="d", category="basic",
                      parameters={"type": "object", "properties": {}}).openai_schema()]

    async def go(base_url: str) -> list[Any]:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
        results: list[Any] = []
        try:
            for _ in range(3):
                try:
                    results.append(await client.chat.completions.create(
                        model="orch", messages=[{"role": "user", "content": "q"}], tools=tools))
                except openai.APIStatusError as exc:
                    results.append(exc.status_code)
        finally:
            await client.close()
        return results

    with OpenAICompatServer(script=script, reply="fallback") as srv:
        native, text, status = asyncio.run(go(srv.base_url))
    call0 = native.choices[0].message.tool_calls[0]
    assert (call0.function.name, call0.function.arguments) == ("search", '{"query": "capital of France"}')
    assert native.choices[0].finish_reason == "tool_calls"
    assert text.choices[0].message.content.startswith("<tool_call>")
    assert status == 500
    assert srv.bodies[0]["tools"][0]["function"]["name"] == "search"
