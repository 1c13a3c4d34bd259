"""Tests for lab.tools.replicas, and an `openai` model tool with several base URLs.

Parsing is checked with hypothesis (any list of distinct http(s) URLs reads back as itself; one bad entry
anywhere is one `LabInputError` line). Choosing, failing over and the cool-down are checked on `Replicas`
with a fake clock and requests held by events (nothing waits on time). The tool runs over real HTTP
against two local OpenAI-compatible servers (`lab.testing.OpenAICompatServer`); a replica that is down is
a port nothing listens on, or a server answering 503.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.testing import OpenAICompatServer, unused_port
from lab.toolkit import load_toolkit
from lab.tools.base import Observation
from lab.tools.openai_llm import OpenAIChatTool
from lab.tools.replicas import AllReplicasFailed, ReplicaDown, Replicas, replica_urls
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec

KEY_ENV = "LAB_TEST_REPLICA_KEY"
SECRET = "sk-test-REPLICA-91c2e0f4b7"

hosts = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z]{2,5})?", fullmatch=True),
    st.tuples(*[st.integers(0, 255)] * 4).map(lambda ip: ".".join(map(str, ip))),
)
urls = st.builds(
    lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
    st.sampled_from(["http", "https"]), hosts,
    st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}")),
    st.sampled_from(["", "/v1", "/openai/v1", "/serve/m1/v1"]),
)
replica_lists = st.lists(urls, min_size=1, max_size=5, unique=True)


# -- parsing --------------------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(replica_lists, st.data())
def test_any_list_of_distinct_urls_reads_back_as_itself(listed: list[str], data: st.DataObject) -> None:
    # as a user may write them: trailing slashes, spaces after commas
    written = [u + data.draw(st.sampled_from(["", "/"])) for u in listed]
    text = data.draw(st.sampled_from([",", ", "])).join(written)
    assert replica_urls(text) == listed
    assert replica_urls(written) == listed
    assert Replicas(written).urls == tuple(listed)


def _bad(listed: list[str], data: st.DataObject) -> tuple[list[str], str]:
    """`listed` with one bad entry put somewhere, and the words its error must contain."""
    kind = data.draw(st.sampled_from(["empty", "blank", "no scheme", "other scheme", "no host", "twice"]))
    bad, words = {
        "empty": ("", "is empty"),
        "blank": ("  ", "is empty"),
        "no scheme": ("h1:8000/v1", "must start with http:// or https://"),
        "other scheme": ("ftp://h1/v1", "must start with http:// or https://"),
        "no host": ("http:///v1", "not a URL with a host"),
        "twice": (data.draw(st.sampled_from(listed)) + data.draw(st.sampled_from(["", "/"])), "listed twice"),
    }[kind]
    at = data.draw(st.integers(0, len(listed)))
    return [*listed[:at], bad, *listed[at:]], words


@settings(max_examples=80, deadline=None)
@given(replica_lists, st.data())
def test_one_bad_entry_anywhere_is_one_input_error_line(listed: list[str], data: st.DataObject) -> None:
    entries, words = _bad(listed, data)
    for value in (",".join(entries), entries):
        with pytest.raises(LabInputError, match=words) as caught:
            replica_urls(value)
        assert "\n" not in str(caught.value)


@settings(max_examples=40, deadline=None)
@given(replica_lists, st.data())
def test_a_bad_tool_backend_list_is_refused_when_the_tool_is_built(listed: list[str], data: st.DataObject) -> None:
    entries, words = _bad(listed, data)
    with pytest.raises(LabInputError, match=rf"^tool 'qwen': backend\.base_url: .*{words}") as caught:
        OpenAIChatTool(_spec(entries))
    assert "\n" not in str(caught.value)


def test_a_toolkit_file_names_the_entry_with_the_bad_list(tmp_path: Path) -> None:
    path = tmp_path / "replicas.yaml"
    entry = {"name": "qwen", "model": "qwen3-32b", "category": "generalist", "description": "Qwen3-32B on vLLM.",
             "backend": {"kind": "openai", "model": "Qwen/Qwen3-32B",
                         "base_url": ["http://h1:8000/v1", "http://h2:8000/v1"]}}
    path.write_text(yaml.safe_dump({"name": "replicas", "tools": [entry]}))
    (spec,) = load_toolkit(str(path)).tools
    assert spec.backend["base_url"] == ["http://h1:8000/v1", "http://h2:8000/v1"]
    entry["backend"]["base_url"] = ["http://h1:8000/v1", "http://h1:8000/v1/"]
    path.write_text(yaml.safe_dump({"name": "replicas", "tools": [entry]}))
    with pytest.raises(LabInputError, match=r"replicas\.yaml: tools\[0\]\.backend\.base_url: replica "
                                            r"'http://h1:8000/v1' is listed twice"):
        load_toolkit(str(path))


# -- choosing and failing over (no HTTP) ------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _served(replicas: Replicas, down: set[str], log: list[str]):
    """A request that records the URL it was sent to; replicas in `down` raise ReplicaDown."""

    async def request(url: str) -> str:
        log.append(url)
        if url in down:
            raise ReplicaDown(f"connection refused by {url}")
        return url

    return request


def test_sequential_requests_alternate_and_concurrent_ones_go_to_the_least_busy() -> None:
    replicas = Replicas(["http://a/v1", "http://b/v1", "http://c/v1"])
    log: list[str] = []
    served = [asyncio.run(replicas.send(_served(replicas, set(), log))) for _ in range(6)]
    assert served == ["http://a/v1", "http://b/v1", "http://c/v1"] * 2

    async def held() -> list[str]:
        gate = asyncio.Event()
        started: list[str] = []

        async def slow(url: str) -> str:
            started.append(url)
            await gate.wait()
            return url

        first = [asyncio.create_task(replicas.send(slow)) for _ in range(4)]  # a, b, c, then the 4th
        await asyncio.sleep(0)  # let each task reach its request (a yield, not a wait for time)
        assert sorted(started[:3]) == ["http://a/v1", "http://b/v1", "http://c/v1"]
        gate.set()
        return await asyncio.gather(*first)

    assert sorted(asyncio.run(held())).count("http://a/v1") == 2  # 4 over 3: one replica gets a second


def test_a_replica_that_is_down_hands_the_same_request_on_and_is_skipped_during_its_cooldown() -> None:
    clock = Clock()
    replicas = Replicas(["http://a/v1", "http://b/v1"], cooldown_s=10, clock=clock)
    log: list[str] = []
    request = _served(replicas, {"http://a/v1"}, log)
    assert asyncio.run(replicas.send(request)) == "http://b/v1"  # a failed, then b at once, in one call
    assert log == ["http://a/v1", "http://b/v1"] and replicas.down() == ["http://a/v1"]
    log.clear()
    for _ in range(4):
        assert asyncio.run(replicas.send(request)) == "http://b/v1"
    assert log == ["http://b/v1"] * 4  # a is not asked while it cools down
    clock.now += 10.5
    log.clear()
    healthy = _served(replicas, set(), log)  # a is back
    assert {asyncio.run(replicas.send(healthy)) for _ in range(2)} == {"http://a/v1", "http://b/v1"}
    assert replicas.down() == []


def test_all_down_is_one_line_naming_every_url_and_its_error_and_all_are_tried_again() -> None:
    clock = Clock()
    replicas = Replicas(["http://a/v1", "http://b/v1"], clock=clock)
    log: list[str] = []
    request = _served(replicas, {"http://a/v1", "http://b/v1"}, log)
    with pytest.raises(AllReplicasFailed) as caught:
        asyncio.run(replicas.send(request))
    assert str(caught.value) == ("all 2 replicas failed: http://a/v1 (connection refused by http://a/v1); "
                                 "http://b/v1 (connection refused by http://b/v1)")
    log.clear()
    # both cooling down: a request still tries each once rather than failing without asking
    assert asyncio.run(replicas.send(_served(replicas, {"http://b/v1"}, log))) == "http://a/v1"
    assert replicas.down() == ["http://b/v1"]  # a answered: no longer down


def test_other_failures_pass_through_and_mark_nothing_down() -> None:
    replicas = Replicas(["http://a/v1", "http://b/v1"])

    async def busy(url: str) -> str:
        raise RuntimeError(f"HTTP 429 from {url}")

    with pytest.raises(RuntimeError, match="HTTP 429 from http://a/v1"):
        asyncio.run(replicas.send(busy))
    assert replicas.down() == []


def test_one_replica_fails_with_its_own_error_alone() -> None:
    replicas = Replicas(["http://a/v1"])
    with pytest.raises(AllReplicasFailed) as caught:
        asyncio.run(replicas.send(_served(replicas, {"http://a/v1"}, [])))
    assert str(caught.value) == "connection refused by http://a/v1"  # as before replicas: the policy names the URL


# -- an openai model tool over real HTTP ------------------------------------------------------------------


def _spec(base_url: Any, **backend: Any) -> ToolSpec:
    return ToolSpec(
        name="qwen", description="Qwen3-32B on vLLM replicas.", parameters=LLM_TOOL_PARAMETERS,
        category="generalist", model="qwen3-32b",
        backend={"kind": "openai", "base_url": base_url, "model": "Qwen/Qwen3-32B", "api_key_env": KEY_ENV,
                 "backoff_s": 0.01, **backend},
    )


def _calls(tool_spec: ToolSpec, n: int) -> list[Observation]:
    async def go() -> list[Observation]:
        tool = OpenAIChatTool(tool_spec)
        try:
            return [await tool.execute({"prompt": f"q{i}"}) for i in range(n)]
        finally:
            await tool.aclose()

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


def test_tool_calls_are_spread_over_both_replicas() -> None:
    with OpenAICompatServer(echo=True) as a, OpenAICompatServer(echo=True) as b:
        observations = _calls(_spec([a.base_url, b.base_url]), 6)
    assert [o.text for o in observations] == [f"q{i}" for i in range(6)]
    assert a.requests == b.requests == 3


def test_a_replica_that_is_down_costs_the_tool_no_call_and_is_named_in_none() -> None:
    down = f"http://127.0.0.1:{unused_port()}/v1"
    with OpenAICompatServer(echo=True) as up:
        observations = _calls(_spec(f"{down},{up.base_url}", max_retries=0), 5)
    assert [o.error for o in observations] == [None] * 5 and up.requests == 5
    assert all(o.meta["attempts"] == 1 for o in observations)  # failed over within the attempt, no back-off
    assert all(down not in o.model_dump_json() for o in observations)


def test_every_replica_down_is_one_error_line_naming_each_url_and_never_the_key() -> None:
    closed = f"http://127.0.0.1:{unused_port()}/v1"
    with OpenAICompatServer(fail_first=100, fail_status=503, echo_headers=True) as unwell:
        (obs,) = _calls(_spec([unwell.base_url, closed], max_retries=1), 1)
        assert unwell.requests == 2  # the first attempt and its retry, each going on to the closed port
    assert obs.error is not None and "\n" not in obs.error
    assert obs.error.startswith("tool 'qwen': all 2 replicas failed: ")
    assert f"{unwell.base_url} (HTTP 503: " in obs.error and f"{closed} (connection failed: " in obs.error
    assert SECRET not in obs.model_dump_json() and "***" in obs.error  # the 503 echoed the key; redacted
    assert obs.meta["attempts"] == 2
