"""`openai:<model>@<base_url>`: an orchestrator served by any OpenAI-compatible endpoint.

This is how vLLM-served checkpoints, OpenAI and Together models orchestrate, and how prompted baselines
such as GPT-5-as-orchestrator run.

Under the conversation protocol no `tools` parameter is sent: the engine's system prompt
(`lab.rollout.prompt.system_prompt`) already holds the priced tool catalog, and a server renders `tools`
into the prompt again, so the orchestrator would read the catalog twice and `openai:` runs would see a
different prompt from `hf:` runs of the same checkpoint. The messages go out as the engine built them
(results of text calls as user turns for servers that require a call id, see `_wire_message`); calls
come back as `<tool_call>` text,
which `lab.rollout.parse` reads. Under the round protocol (`lab.rollout.rounds`) the catalog is sent
as `tools=`, as the released evaluation sends it to vLLM (`--enable-auto-tool-choice
--tool-call-parser hermes`); the server's `tool_calls` are read first and `<tool_call>` text in the
content is parsed when a server returns none.

A vLLM server (its `/models` says `owned_by: vllm`) is also asked for what it sampled: the prompt's and
the completion's token ids (`return_token_ids`) and each sampled token's logprob. Those are the
policy's token records, as the `hf:` policy's are: a round's `tokens`, and under the conversation
protocol the whole rollout's token trajectory, each turn's new prompt ids appended as context (mask 0)
when they extend what came before. Other servers (OpenAI, Together) are sent neither parameter, which
they refuse, and a run through them has no token records.

Every request follows the endpoint's provider contract (`lab.providers`): for GPT-5 on OpenAI the token limit
goes out as `max_completion_tokens`, `top_p` stays home and a temperature other than 1 is refused at
construction; vLLM and the hosts that follow it get `max_tokens`. A refused request (HTTP 400) is never
retried: its one line names the parameter the server named and the model.

Why raw aiohttp rather than the `openai` SDK here: the orchestrator call is the hot loop of an
evaluation, which is latency-bound; the SDK spends about 1.5 ms of CPU per call on a 2-core machine
(see `benchmarks/eval_throughput.py`), a third of the budget at concurrency 64. The wire format is the
same chat-completions JSON. Tools that are LLMs keep the SDK (`lab.tools.openai_llm`). Requests are
`lab.policies.eager_request.EagerRequest`s: on Python 3.11 aiohttp would send each turn only after all
the other work the event loop has ready, which at high concurrency makes every turn wait for a whole
burst of rollouts.

Replicas: `openai:<model>@<url>,<url>,...` names several servers of one model (`lab.tools.replicas`).
Each turn goes to the replica with the fewest turns in flight (ties in turn); a refused, reset or
unresolvable connection or an HTTP 502/503/504 sends the same turn at once to the next replica, and the
failed one is skipped for `replica_cooldown_s`. Only when every replica failed does the attempt fail; the
usual back-off and retries follow, and the last failure is one `PolicyUnavailable` line naming every
URL and its error: the rollout is counted unavailable and not stored, as with one URL.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Sequence
from typing import Any

import aiohttp
import orjson

from lab.errors import EndpointUnavailable, LabInputError
from lab.policies.eager_request import request_class
from lab.pricing import ModelPrice, PriceTable
from lab.providers import Contract, contract_for, refusal_line
from lab.rollout.policy import PolicyOutput, TokenTrajectory, sampling_seed
from lab.task import Task
from lab.tools.experts import tokenizer_counter
from lab.tools.replicas import COOLDOWN_S, FAILOVER_STATUS, AllReplicasFailed, ReplicaDown, Replicas, replica_urls
from lab.toolspec import ToolSpec

RETRYABLE = {408, 409, 429, 500, 502, 503, 504}
#: Connection failures that mean "this replica is not there" (refused, reset, DNS, connect timeout): the
#: turn moves to another replica at once. A total timeout is not one of them: the server may be working.
FAILOVER_ERRORS = (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError, aiohttp.ConnectionTimeoutError)


class PolicyUnavailable(EndpointUnavailable):
    """The endpoint could not produce a turn (after retries): not written, re-run on resume."""


class OpenAIPolicy:
    """An orchestrator behind an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str | Sequence[str],
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 2048,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        price: ModelPrice | None = None,
        replica_cooldown_s: float = COOLDOWN_S,
        tokenizer: str | None = None,
        provider: str | None = None,
        family: str | None = None,
    ) -> None:
        """`tokenizer`: a local copy of the served model's tokenizer; the round protocol then cuts the
        context in its tokens (`count_tokens`), else by the characters / 4 estimate. `provider`, `family`:
        the endpoint's request rules where the URL and the model id do not tell them (`lab.providers`)."""
        self.model = model
        #: `base_url`: one URL, or several replicas of the model (a list or comma-separated text).
        self.replicas = Replicas(replica_urls(base_url), cooldown_s=replica_cooldown_s)
        self.name = f"openai:{model}@{','.join(self.replicas.urls)}"
        #: what the endpoint accepts for this model; sampling settings it would refuse stop here, before any call
        self.contract: Contract = contract_for(model, list(self.replicas.urls), f"--orchestrator {self.name}",
                                               provider, family)
        self.contract.check(f"--orchestrator {self.name}", temperature=temperature,
                            top_p=None if top_p == 1.0 else top_p)
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.price = price
        self._http: aiohttp.ClientSession | None = None
        self.count_tokens = tokenizer_counter(tokenizer, "--orchestrator-tokenizer") if tokenizer else None
        self._is_vllm: bool | None = None
        self._vllm_probe: asyncio.Future[bool] | None = None

    @classmethod
    def from_spec(cls, spec: str, pricing: str = "default", **kwargs: Any) -> OpenAIPolicy:
        """Parse `openai:<model>@<base_url>[,<base_url>...]` (several: replicas of the model); the model is
        priced when the table knows it. `kwargs` go to the constructor (temperature, top_p, max_tokens...)."""
        body = spec.removeprefix("openai:")
        model, sep, base_url = body.partition("@")
        if not model or not sep or not base_url.strip():
            raise LabInputError(f"--orchestrator '{spec}': expected openai:<model>@<http(s) base url>[,<url>...]")
        try:
            urls = replica_urls(base_url)
        except LabInputError as exc:
            raise LabInputError(f"--orchestrator '{spec}': {exc} (expected openai:<model>@<http(s) base url>"
                                "[,<url>...])") from None
        table = PriceTable.load(pricing)
        return cls(model=model, base_url=urls, price=table.price(model) if table.has(model) else None, **kwargs)

    def session(self, task: Task, specs: list[ToolSpec], seed: int) -> _OpenAISession:
        return _OpenAISession(self, sampling_seed(seed, task.task_id) % 2**31)  # servers take a 32-bit seed

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env) or "EMPTY"  # local vLLM servers take any key
        return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def _redact(self, text: str) -> str:
        """Error text without the key, wherever a server echoed it (an error body holding the headers)."""
        key = os.environ.get(self.api_key_env) or "EMPTY"
        return text.replace(key, "***") if key != "EMPTY" else text

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(
                request_class=request_class(),  # each turn leaves at once, not after the loop's other work
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                json_serialize=lambda value: orjson.dumps(value).decode(),
            )
        return self._http

    async def is_vllm(self) -> bool:
        """Whether the endpoint is a vLLM server (asked once: `GET /models`, `owned_by: vllm`, of the first
        replica that answers). An endpoint without `/models`, or one that fails it, is taken as not vLLM: the
        chat call reports real failures. When no replica could be reached the answer is not kept, so an outage
        at the start of a run does not cost the rest of it its token records."""
        if self._is_vllm is None:
            # one GET for every rollout that asks before the answer is in (a run starts `concurrency` at once)
            probe = self._vllm_probe
            if probe is None or probe.get_loop() is not asyncio.get_running_loop():
                probe = self._vllm_probe = asyncio.ensure_future(self._probe_vllm())
            try:
                return await asyncio.shield(probe)
            finally:
                if probe.done() and self._vllm_probe is probe:
                    self._vllm_probe = None
        return self._is_vllm

    async def _probe_vllm(self) -> bool:
        try:
            body = await self.replicas.send(self._models)
        except AllReplicasFailed:
            return False
        models = body.get("data") if isinstance(body, dict) else None
        self._is_vllm = any(isinstance(m, dict) and m.get("owned_by") == "vllm" for m in models or [])
        return self._is_vllm

    async def _models(self, url: str) -> Any:
        """`GET <url>/models` of one replica; {} when it answers without a model list."""
        try:
            async with self._client().get(f"{url}/models", headers=self._headers()) as response:
                status = response.status
                body = orjson.loads(await response.read()) if status == 200 else {}
        except FAILOVER_ERRORS as exc:
            raise ReplicaDown(self._redact(_describe(exc))) from None
        except (TimeoutError, aiohttp.ClientError, orjson.JSONDecodeError):
            return {}
        if status in FAILOVER_STATUS:
            raise ReplicaDown(f"HTTP {status}")
        return body

    async def chat(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST one chat completion with retries on 429/5xx/timeouts; a replica that cannot be reached hands
        the request to the next one at once (`Replicas.send`). Raises PolicyUnavailable at the end."""
        problem = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)) * (0.5 + random.random()))
            try:
                return await self.replicas.send(lambda url: self._post(url, payload))
            except AllReplicasFailed as exc:
                problem = str(exc)
            except _AttemptFailed as exc:
                problem = str(exc)
                if not exc.retry:
                    break
        raise PolicyUnavailable(self._redact(f"{self.name}: {problem}"))

    async def _post(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        """One POST to one replica: the body, or `ReplicaDown` (try another) or `_AttemptFailed`."""
        try:
            async with self._client().post(f"{url}/chat/completions", json=payload,
                                           headers=self._headers()) as response:
                if response.status == 200:
                    return orjson.loads(await response.read())
                status, text = response.status, await response.text()
        except FAILOVER_ERRORS as exc:
            raise ReplicaDown(self._redact(_describe(exc))) from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _AttemptFailed(self._redact(_describe(exc)), retry=True) from None
        # a refused request names the parameter and the model; other statuses keep the body's start
        problem = self._redact(refusal_line(status, text, self.contract) if status == 400 else
                               " ".join(f"HTTP {status}: {text[:200]}".split()))
        if status in FAILOVER_STATUS:
            raise ReplicaDown(problem)
        raise _AttemptFailed(problem, retry=status in RETRYABLE)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()


class _AttemptFailed(Exception):
    """One attempt failed at a replica that answered (a status, a timeout); `retry`: worth another try."""

    def __init__(self, problem: str, retry: bool) -> None:
        super().__init__(problem)
        self.retry = retry


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _OpenAISession:
    def __init__(self, policy: OpenAIPolicy, seed: int) -> None:
        self.policy = policy
        self.seed = seed
        #: Conversation protocol on vLLM: the rollout's tokens so far; None once a turn's prompt did not
        #: extend them (the template re-rendered earlier turns), after which there is no trajectory.
        self._trajectory: TokenTrajectory | None = TokenTrajectory()

    async def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       observations: list[str] | None = None) -> PolicyOutput:
        vllm = await self.policy.is_vllm()
        payload: dict[str, Any] = {
            "model": self.policy.model,
            "messages": [_wire_message(m, keep_tool_role=vllm) for m in messages],
            **self.policy.contract.options(max_tokens=self.policy.max_tokens, temperature=self.policy.temperature,
                                           top_p=self.policy.top_p),
            "seed": self.seed,  # the rollout seed differs per sample, so sampled turns differ too
        }
        if tools is not None:  # the round protocol: the server renders the catalog and parses the calls
            payload["tools"] = tools
        if vllm:
            payload.update(logprobs=True, return_token_ids=True)
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
        tokens = server_tokens(body)
        if tools is None:
            self._extend(tokens)
        return PolicyOutput(
            text=message.get("content") or "",
            native_calls=message.get("tool_calls") or None,
            input_tokens=prompt_tokens,
            output_tokens=completion_tokens,
            latency_s=latency,
            cost_usd=price.cost(prompt_tokens, completion_tokens) if price else 0.0,
            tokens=tokens if tools is not None else None,
        )

    def _extend(self, turn: TokenTrajectory | None) -> None:
        """Append one conversation turn: the new prompt's ids past what came before (mask 0), then the
        sampled ids (mask 1, with their logprobs)."""
        trajectory = self._trajectory
        if trajectory is None:
            return
        if turn is None:
            self._trajectory = None
            return
        if not trajectory.prompt_ids:
            trajectory.prompt_ids = turn.prompt_ids
        else:
            so_far = trajectory.prompt_ids + trajectory.completion_ids
            if turn.prompt_ids[:len(so_far)] != so_far:
                self._trajectory = None
                return
            added = turn.prompt_ids[len(so_far):]
            trajectory.completion_ids += added
            trajectory.mask += [0] * len(added)
            trajectory.logprobs += [0.0] * len(added)
        trajectory.completion_ids += turn.completion_ids
        trajectory.mask += turn.mask
        trajectory.logprobs += turn.logprobs

    def token_trajectory(self) -> TokenTrajectory | None:
        trajectory = self._trajectory
        return trajectory if trajectory is not None and trajectory.completion_ids else None


def server_tokens(body: dict[str, Any]) -> TokenTrajectory | None:
    """The prompt and completion ids and the sampled tokens' logprobs a vLLM response carries
    (`prompt_token_ids`, `choices[0].token_ids`, `choices[0].logprobs.content`); None when it has none."""
    choice = (body.get("choices") or [{}])[0]
    prompt_ids, completion_ids = body.get("prompt_token_ids"), choice.get("token_ids")
    if not prompt_ids or completion_ids is None:
        return None
    scored = [entry.get("logprob", float("nan")) for entry in (choice.get("logprobs") or {}).get("content") or []]
    # vLLM scores every sampled id, the end-of-turn token included; any unscored tail is NaN, not invented.
    logprobs = ([float(v) for v in scored[:len(completion_ids)]]
                + [float("nan")] * max(0, len(completion_ids) - len(scored)))
    return TokenTrajectory(prompt_ids=list(prompt_ids), completion_ids=list(completion_ids),
                           mask=[1] * len(completion_ids), logprobs=logprobs)


def _wire_message(message: dict[str, Any], keep_tool_role: bool = False) -> dict[str, Any]:
    """Engine message -> chat-completions message. Results of text (Hermes) calls have no call id,
    which the OpenAI API requires for role "tool", so they travel as user turns holding <tool_response>.
    A vLLM server takes role "tool" without one (`keep_tool_role`) and renders it with the model's chat
    template, as the `hf:` policy does: the same checkpoint then reads the same ids in both."""
    if message["role"] == "tool":
        if keep_tool_role or message.get("tool_call_id"):
            wired = {"role": "tool", "content": message["content"]}
            return wired | ({"tool_call_id": message["tool_call_id"]} if message.get("tool_call_id") else {})
        return {"role": "user", "content": message["content"]}
    return message
