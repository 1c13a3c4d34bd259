"""`openai:<model>@<base_url>`: an orchestrator served by any OpenAI-compatible endpoint.

This is how vLLM-served checkpoints, OpenAI and Together models orchestrate, and how prompted baselines
such as GPT-5-as-orchestrator run.

Under the conversation protocol no `tools` parameter is sent: the engine's system prompt
(`lab.rollout.prompt.system_prompt`) already holds the priced tool catalog, and a server renders `tools`
into the prompt again, so the orchestrator would read the catalog twice and `openai:` runs would see a
different prompt from `hf:` runs of the same checkpoint. The messages go out as the engine built them
(results of text calls as user turns, see `_wire_message`); calls come back as `<tool_call>` text,
which `lab.rollout.parse` reads. Under the round protocol (`lab.rollout.rounds`) the catalog is sent
as `tools=`, as the released evaluation sends it to vLLM (`--enable-auto-tool-choice
--tool-call-parser hermes`); the server's `tool_calls` are read first and `<tool_call>` text in the
content is parsed when a server returns none.

Why raw aiohttp rather than the `openai` SDK here: the orchestrator call is the hot loop of an
evaluation, which is latency-bound; the SDK spends about 1.5 ms of CPU per call on a 2-core machine
(see `benchmarks/eval_throughput.py`), a third of the budget at concurrency 64. The wire format is the
same chat-completions JSON. Tools that are LLMs keep the SDK (`lab.tools.openai_llm`).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from typing import Any

import aiohttp
import orjson

from lab.errors import EndpointUnavailable, LabInputError
from lab.pricing import ModelPrice, PriceTable
from lab.rollout.policy import PolicyOutput, TokenTrajectory, sampling_seed
from lab.toolspec import ToolSpec

RETRYABLE = {408, 409, 429, 500, 502, 503, 504}


class PolicyUnavailable(EndpointUnavailable):
    """The endpoint could not produce a turn (after retries): not written, re-run on resume."""


class OpenAIPolicy:
    """An orchestrator behind an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 2048,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        price: ModelPrice | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.name = f"openai:{model}@{self.base_url}"
        self._api_key_env = api_key_env
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.price = price
        self._http: aiohttp.ClientSession | None = None

    @classmethod
    def from_spec(cls, spec: str, pricing: str = "default", **kwargs: Any) -> "OpenAIPolicy":
        """Parse `openai:<model>@<base_url>`; the model is priced when the table knows it. `kwargs` go to
        the constructor (temperature, top_p, max_tokens...)."""
        body = spec.removeprefix("openai:")
        model, sep, base_url = body.partition("@")
        if not model or not sep or not base_url.startswith(("http://", "https://")):
            raise LabInputError(f"--orchestrator '{spec}': expected openai:<model>@<http(s) base url>")
        table = PriceTable.load(pricing)
        return cls(model=model, base_url=base_url, price=table.price(model) if table.has(model) else None, **kwargs)

    def session(self, task: Any, specs: list[ToolSpec], seed: int) -> "_OpenAISession":
        return _OpenAISession(self, sampling_seed(seed, task.task_id) % 2**31)  # servers take a 32-bit seed

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self._api_key_env) or "EMPTY"  # local vLLM servers take any key
        return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    async def chat(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST one chat completion with retries on 429/5xx/timeouts; raises PolicyUnavailable at the end."""
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                json_serialize=lambda value: orjson.dumps(value).decode(),
            )
        url = f"{self.base_url}/chat/completions"
        problem = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)) * (0.5 + random.random()))
            try:
                async with self._http.post(url, json=payload, headers=self._headers()) as response:
                    if response.status == 200:
                        return orjson.loads(await response.read())
                    problem = f"HTTP {response.status}: {(await response.text())[:200]}"
                    if response.status not in RETRYABLE:
                        break
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise PolicyUnavailable(f"{self.name}: {problem}")

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()


class _OpenAISession:
    def __init__(self, policy: OpenAIPolicy, seed: int) -> None:
        self.policy = policy
        self.seed = seed

    async def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       observations: list[str] | None = None) -> PolicyOutput:
        payload: dict[str, Any] = {
            "model": self.policy.model,
            "messages": [_wire_message(m) for m in messages],
            "temperature": self.policy.temperature,
            "top_p": self.policy.top_p,
            "max_tokens": self.policy.max_tokens,
            "seed": self.seed,  # the rollout seed differs per sample, so sampled turns differ too
        }
        if tools is not None:  # the round protocol: the server renders the catalog and parses the calls
            payload["tools"] = tools
        started = time.monotonic()
        body = await self.policy.chat(payload)
        latency = time.monotonic() - started
        try:
            message = body["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise PolicyUnavailable(f"{self.policy.name}: response has no choices[0].message") from None
        usage = body.get("usage") or {}
        prompt_tokens, completion_tokens = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        price = self.policy.price
        return PolicyOutput(
            text=message.get("content") or "",
            native_calls=message.get("tool_calls") or None,
            input_tokens=prompt_tokens,
            output_tokens=completion_tokens,
            latency_s=latency,
            cost_usd=price.cost(prompt_tokens, completion_tokens) if price else 0.0,
        )

    def token_trajectory(self) -> TokenTrajectory | None:
        return None  # a remote endpoint returns text, not the ids the trainer needs


def _wire_message(message: dict[str, Any]) -> dict[str, Any]:
    """Engine message -> chat-completions message. Results of text (Hermes) calls have no call id,
    which the API requires for role "tool", so they travel as user turns holding <tool_response>."""
    if message["role"] == "tool":
        if message.get("tool_call_id"):
            return {"role": "tool", "tool_call_id": message["tool_call_id"], "content": message["content"]}
        return {"role": "user", "content": message["content"]}
    return message
