"""Tests for lab.tools.web_search.

WebSearch without network: key handling, formatting, pricing, errors and timeouts with fake clients.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from lab.errors import LabInputError
from lab.pricing import PriceTable
from lab.tools import web_search as ws
from lab.tools.base import Tool, ToolContext

FAKE_KEY = "tvly-test-SECRET-0123456789"

CANNED = {
    "query": "capital of australia",
    "answer": "Canberra is the capital of Australia.",
    "response_time": 0.42,
    "results": [
        {"title": "Canberra - Wikipedia", "url": "https://en.wikipedia.org/wiki/Canberra",
         "content": "Canberra is the capital city of Australia.", "score": 0.93, "raw_content": None},
        {"title": "Australian Capital Territory", "url": "https://example.org/act",
         "content": "x" * 5000, "score": 0.71, "raw_content": None},
        {"title": "Sydney", "url": "https://example.org/sydney",
         "content": "Sydney is the largest city.", "score": 0.40, "raw_content": None},
    ],
}


class FakeClient:
    """Stands in for AsyncTavilyClient; records what it was given."""

    instances: list[FakeClient] = []

    def __init__(self, api_key: str | None = None, **kwargs) -> None:
        self.api_key = api_key
        self.calls: list[dict] = []
        FakeClient.instances.append(self)

    async def search(self, query: str, **kwargs) -> dict:
        self.calls.append({"query": query, **kwargs})
        return CANNED


class FailingClient(FakeClient):
    async def search(self, query: str, **kwargs) -> dict:
        raise ConnectionError(f"401 Unauthorized for key {self.api_key}")


class HangingClient(FakeClient):
    async def search(self, query: str, **kwargs) -> dict:
        await asyncio.Event().wait()  # never set: only the tool's timeout ends this call
        return CANNED


@pytest.fixture
def with_key(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", FAKE_KEY)
    FakeClient.instances = []
    monkeypatch.setattr(ws, "AsyncTavilyClient", FakeClient)


def test_without_key_tool_is_not_offered_with_one_line_reason(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    assert ws.web_search_available() is False
    tool, message = ws.web_search_or_none()
    assert tool is None
    assert message == "web_search not offered: TAVILY_API_KEY is not set"
    monkeypatch.setenv("TAVILY_API_KEY", "   ")  # a blank key is no key
    assert ws.web_search_or_none() == (None, message)
    with pytest.raises(LabInputError, match="TAVILY_API_KEY is not set"):
        ws.WebSearch()


def test_with_key_results_are_formatted_and_priced_per_call(with_key):
    tool, message = ws.web_search_or_none()
    assert message is None and isinstance(tool, Tool)
    assert tool.spec.name == "web_search" and tool.spec.category == "basic"
    price = PriceTable.load().price("tavily-search-basic").per_call
    assert tool.spec.per_call == price > 0

    obs = asyncio.run(tool.execute({"query": "capital of australia", "max_results": 2}, ToolContext()))
    assert obs.error is None
    assert obs.cost_usd == price
    assert obs.latency_s > 0
    assert "Answer: Canberra is the capital of Australia." in obs.text
    assert "Canberra - Wikipedia" in obs.text and "https://en.wikipedia.org/wiki/Canberra" in obs.text
    assert "Sydney" not in obs.text  # only max_results results are shown
    assert len(obs.text) < 2000  # long snippets are cut
    assert obs.meta == {"urls": [r["url"] for r in CANNED["results"][:2]], "scores": [0.93, 0.71]}
    client = FakeClient.instances[-1]
    assert client.api_key == FAKE_KEY
    assert client.calls[0]["query"] == "capital of australia" and client.calls[0]["max_results"] == 2
    assert FAKE_KEY not in obs.text and FAKE_KEY not in repr(tool)


def test_advanced_depth_uses_the_advanced_price(with_key):
    tool = ws.WebSearch(search_depth="advanced")
    assert tool.spec.per_call == PriceTable.load().price("tavily-search-advanced").per_call
    asyncio.run(tool.execute({"query": "q"}))
    assert FakeClient.instances[-1].calls[0]["search_depth"] == "advanced"


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ({}, "missing required argument 'query'"),
        ({"query": 3}, "'query' must be string"),
        ({"query": "x", "engine": "bing"}, "unknown argument 'engine'"),
        ({"query": "   "}, "'query' is empty"),
        ({"query": "x", "max_results": 0}, "'max_results' must be between 1 and"),
    ],
)
def test_bad_arguments_become_error_observations_without_a_call(with_key, arguments, fragment):
    tool, _ = ws.web_search_or_none()
    obs = asyncio.run(tool.execute(arguments))
    assert obs.error is not None and fragment in obs.error
    assert obs.text.startswith("Error:") and obs.cost_usd == 0
    assert all(not c.calls for c in FakeClient.instances)


def test_client_error_is_an_observation_and_never_shows_the_key(with_key, monkeypatch):
    monkeypatch.setattr(ws, "AsyncTavilyClient", FailingClient)
    tool, _ = ws.web_search_or_none()
    obs = asyncio.run(tool.execute({"query": "anything"}))
    assert obs.error is not None and "ConnectionError" in obs.error and "401 Unauthorized" in obs.error
    assert FAKE_KEY not in obs.error and FAKE_KEY not in obs.text
    assert obs.cost_usd == 0


def test_hanging_client_times_out_within_the_limit(with_key, monkeypatch):
    monkeypatch.setattr(ws, "AsyncTavilyClient", HangingClient)
    tool, _ = ws.web_search_or_none(timeout_s=0.3)
    started = time.perf_counter()
    obs = asyncio.run(tool.execute({"query": "slow"}))
    elapsed = time.perf_counter() - started
    assert obs.error is not None and "timed out after 0.3s" in obs.error
    assert 0.3 <= elapsed < 2.0
    assert obs.cost_usd == 0 and obs.latency_s >= 0.3


def test_empty_response_says_so(with_key, monkeypatch):
    class EmptyClient(FakeClient):
        async def search(self, query: str, **kwargs) -> dict:
            return {"query": query, "results": []}

    monkeypatch.setattr(ws, "AsyncTavilyClient", EmptyClient)
    tool, _ = ws.web_search_or_none()
    obs = asyncio.run(tool.execute({"query": "zzqx"}))
    assert obs.error is None and obs.text == 'No web results for "zzqx".' and obs.meta["urls"] == []
