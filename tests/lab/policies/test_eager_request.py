"""Tests for lab.policies.eager_request: a request's body leaves in the sending coroutine's own step.

Over real HTTP against the lab's OpenAI-compatible test server (its own thread): bodies of every size
arrive whole, and a request reaches the server while another coroutine keeps the event loop busy, which
with aiohttp's own request on Python 3.11 it does only after.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import aiohttp
import pytest

from lab.policies.eager_request import EagerRequest, request_class
from lab.testing import OpenAICompatServer


def _body(chars: int) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "é" + "x" * chars}]}


def test_json_bodies_of_every_size_arrive_whole() -> None:
    bodies = [_body(n) for n in (0, 10, 70_000, 300_000)]  # the last two pass aiohttp's 64 KiB write limit

    async def post_all(url: str) -> list[str]:
        async with aiohttp.ClientSession(request_class=EagerRequest) as http:
            replies = []
            for body in bodies:
                async with http.post(f"{url}/chat/completions", json=body) as response:
                    replies.append((await response.json())["choices"][0]["message"]["content"])
            return replies

    with OpenAICompatServer(echo=True) as server:
        replies = asyncio.run(post_all(server.base_url))
        assert server.bodies == bodies
    assert replies == [b["messages"][0]["content"] for b in bodies]


def _arrival_vs_busy_end(request: type[aiohttp.ClientRequest]) -> float:
    """Seconds from the server reading a request to the end of 0.5 s of other work the client's event loop
    had ready when it sent it (positive: the request arrived during that work)."""
    arrived: list[float] = []

    def responder(text: str) -> str:
        arrived.append(time.monotonic())
        return "ok"

    async def main(url: str) -> float:
        async with aiohttp.ClientSession(request_class=request) as http:

            async def post() -> None:
                async with http.post(f"{url}/chat/completions", json=_body(100)) as response:
                    await response.read()

            def busy() -> float:
                end = time.monotonic() + 0.5
                while time.monotonic() < end:
                    pass
                return end

            await post()  # a pooled connection, so the next post sends without waiting to connect
            sending = asyncio.create_task(post())
            await asyncio.sleep(0)  # the post runs its first step, then this task keeps the loop busy
            end = busy()
            await sending
            return end

    with OpenAICompatServer(responder=responder) as server:
        end = asyncio.run(main(server.base_url))
    return end - arrived[-1]


def test_a_request_reaches_the_server_while_the_loop_is_busy_with_other_work() -> None:
    assert _arrival_vs_busy_end(request_class()) > 0.2


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="aiohttp starts its body writer eagerly on 3.12+")
def test_aiohttps_own_request_waits_for_the_loops_other_work_on_python_3_11() -> None:
    assert _arrival_vs_busy_end(aiohttp.ClientRequest) < 0.05  # why EagerRequest exists
