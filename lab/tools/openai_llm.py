"""An LLM behind an OpenAI-compatible endpoint, exposed as a tool (paper §3.1: other LLMs are tools).

The same class serves a vendor API (GPT-5) and a local vLLM server (Qwen3-32B): only the spec's
`backend` differs. Why the retry loop is ours and not the SDK's: the reward charges latency, so the
policy (which errors retry, how long to back off, the hard deadline per call) must be visible and
testable here. The SDK runs with `max_retries=0`.

Toolkit entry:

    - name: qwen3-32b
      model: qwen3-32b                  # canonical id, priced from the pricing table
      backend:
        kind: openai
        base_url: http://127.0.0.1:8000/v1
        model: Qwen/Qwen3-32B           # name the server serves
        api_key_env: VLLM_API_KEY       # unset -> "EMPTY" (what vLLM accepts)
        timeout_s: 60                   # hard limit for the whole call, retries included
        provider: openai                # optional: placed from the URL (`lab.providers`) when left out
        model_family: reasoning         # optional: placed from the model id on OpenAI when left out

Several servers of one model (replicas, `lab.tools.replicas`) are a list, `base_url: [http://h1:8000/v1,
http://h2:8000/v1]` (or one comma-separated string): calls are spread over them, and a call whose replica
refuses, resets or answers 502/503/504 goes at once to the next; the call fails (an error observation
naming every URL and its error) only when every replica failed, after the usual retries.

Every request is built by the endpoint's provider contract (`lab.providers`): `max_completion_tokens` and no
sampling value the model refuses for GPT-5 on OpenAI, `max_tokens` for vLLM and the hosts that follow it. A
setting in the backend that the model would refuse is refused at construction, in one line; an HTTP 400 is
never retried, and its observation names the parameter the server named and the model.

The API key is read from the environment at construction and never leaves the client: every error
text and log line is redacted before it is stored or shown.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Callable
from functools import cached_property
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lab.errors import LabInputError, first_error
from lab.pricing import canonical_model
from lab.providers import Contract, contract_for, refusal_line
from lab.tools.base import ModelRequest, Observation, ToolContext, validate_arguments
from lab.tools.experts import tokenizer_counter
from lab.tools.replicas import COOLDOWN_S, FAILOVER_STATUS, AllReplicasFailed, ReplicaDown, Replicas, replica_urls
from lab.toolspec import ToolSpec

logger = logging.getLogger(__name__)

#: What a local server accepts when no key is configured (vLLM's convention).
NO_KEY = "EMPTY"
#: HTTP statuses worth another try: rate limits, timeouts at a proxy, and server faults.
RETRYABLE_STATUS = frozenset({408, 409, 429})
#: Longest error text kept in an observation or log line; bodies can be large.
MAX_ERROR_CHARS = 300


class OpenAIBackend(BaseModel):
    """The `backend` options of an OpenAI-compatible LLM tool."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field("openai", description="Backend kind; the registry dispatches on it.")
    base_url: str | list[str] = Field(
        description="Endpoint root, e.g. `https://api.openai.com/v1` or a vLLM `/v1`; several replicas of the model: "
                    "a list (or comma-separated). Read as the list of URLs."
    )
    model: str = Field(description="Model name the server serves (sent as `model`).")
    api_key_env: str | None = Field(None, description="Environment variable holding the key; unset -> 'EMPTY'.")
    timeout_s: float = Field(60.0, gt=0, description="Hard limit for one tool call, retries included.")
    attempt_timeout_s: float | None = Field(
        None, gt=0, description="Limit per HTTP attempt; shorter than timeout_s lets timed-out attempts retry."
    )
    max_retries: int = Field(3, ge=0, description="Retries after the first attempt (429, 5xx, timeouts, resets).")
    backoff_s: float = Field(0.5, ge=0, description="First backoff; doubles per retry, with jitter x[0.5, 1.5).")
    backoff_max_s: float = Field(8.0, ge=0, description="Cap on one backoff.")
    max_tokens: int | None = Field(None, gt=0, description="Completion token limit sent to the server.")
    temperature: float | None = Field(None, ge=0, description="Sampling temperature; None -> server default.")
    reasoning_effort: str | None = Field(
        None, description="`reasoning_effort` for models that take it (OpenAI's reasoning models: minimal, low, "
                          "medium, high); None: the model's default.")
    provider: str | None = Field(
        None, description="Whose rules the requests follow: openai or compatible (vLLM and the hosts that follow "
                          "it); None: placed from the URL (`lab.providers`).")
    model_family: str | None = Field(
        None, description="The model's family at its provider (openai: reasoning or chat); None: placed from "
                          "the model id. Name it for a model the lab does not know.")
    system_prompt: str | None = Field(None, description="System message put before the delegated prompt.")
    cooldown_s: float = Field(COOLDOWN_S, gt=0, description="With replicas: how long one that failed is skipped.")
    context_window: int | None = Field(
        None, gt=0, description="Tokens the server holds (vLLM `--max-model-len`); the released expert protocol's "
                                "budget for this model must fit it. None: the model card's window.")
    tokenizer: str | None = Field(
        None, description="A local tokenizer folder for this model (e.g. the served weights' folder): budgets are "
                          "then counted in its tokens, not the orchestrator's.")

    @field_validator("base_url")
    @classmethod
    def _replicas(cls, value: str | list[str]) -> list[str]:
        return replica_urls(value)  # a LabInputError is a ValueError: pydantic reports it on this field


class _Retryable(Exception):
    """An attempt failed in a way another attempt may fix."""


class OpenAIChatTool:
    """`execute({"prompt": ...})` -> the model's reply, priced from `usage` and the spec's prices."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        try:
            self.backend = OpenAIBackend.model_validate(spec.backend)
        except ValidationError as exc:
            raise LabInputError(f"tool '{spec.name}': backend.{first_error(exc)}") from None
        key = os.environ.get(self.backend.api_key_env, "") if self.backend.api_key_env else ""
        if self.backend.api_key_env and not key:
            logger.info("tool '%s': $%s is not set; using '%s'", spec.name, self.backend.api_key_env, NO_KEY)
        self._api_key = key or NO_KEY
        self.replicas = Replicas(self.urls, cooldown_s=self.backend.cooldown_s)
        where = f"tool '{spec.name}'"
        #: what this endpoint accepts for this model (`lab.providers`); a backend setting it refuses stops here
        self.contract: Contract = contract_for(self.backend.model, self.urls, where, self.backend.provider,
                                               self.backend.model_family)
        self.contract.check(f"{where}: backend", temperature=self.backend.temperature,
                            reasoning_effort=self.backend.reasoning_effort)
        #: Canonical id recorded on observations, so logged runs can be repriced.
        self.model_id = canonical_model(spec.model or self.backend.model)
        #: calls made and failed since construction, and the last failure's line: a run names an endpoint
        #: whose every call failed (`lab.eval.harness`), however its callers fell back
        self.calls = 0
        self.failed_calls = 0
        self.last_failure = ""
        self._clients: dict[str, openai.AsyncOpenAI] = {}  # one pooled client per replica URL
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @cached_property
    def count_tokens(self) -> Callable[[str], int] | None:
        """The model's own token counter when the toolkit names its tokenizer folder, else None."""
        if self.backend.tokenizer is None:
            return None
        return tokenizer_counter(self.backend.tokenizer, f"tool '{self.spec.name}': backend.tokenizer")

    @property
    def urls(self) -> list[str]:
        """The endpoint's URLs: one, or the replicas of the model."""
        return list(self.backend.base_url)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChatTool(name={self.spec.name!r}, base_url={','.join(self.urls)!r})"

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        problem = validate_arguments(self.spec, arguments)
        if problem:
            return Observation.failure(problem, model=self.model_id)
        return await self.ask(ModelRequest(arguments["prompt"]), context)

    def limit_for(self, request: ModelRequest) -> float:
        """How long a call of `request` may take, retries included: the request's ceiling (the expert
        protocol's), unless the toolkit set this backend's `timeout_s` itself; then the stricter of the two
        (`lab.eval.checks.run_notices` names the one that wins, at the start of a run)."""
        if request.timeout_s is None:
            return self.backend.timeout_s
        if "timeout_s" in self.backend.model_fields_set:
            return min(request.timeout_s, self.backend.timeout_s)
        return request.timeout_s

    async def ask(self, request: ModelRequest, context: ToolContext | None = None) -> Observation:
        """The reply to `request`. The toolkit's own settings win over a request's (system prompt, temperature,
        max tokens): they are what the user configured for this endpoint; the request fills the rest."""
        start = _now()
        if not request.prompt.strip():
            return Observation.failure(f"tool '{self.spec.name}': argument 'prompt' is empty", model=self.model_id)
        self.calls += 1
        limit = self.limit_for(request)
        retries = self.backend.max_retries if request.retries is None else request.retries
        backoff_max = self.backend.backoff_max_s if request.backoff_max_s is None else request.backoff_max_s
        deadline = start + limit
        attempts = 0
        last_error = "no attempt made"
        while True:
            attempts += 1
            try:
                response = await self.replicas.send(lambda url: self._attempt(url, request, deadline, limit))
                return self._observation(response, start, attempts)
            except (_Retryable, AllReplicasFailed) as exc:
                last_error = str(exc)
            except openai.BadRequestError as exc:  # the request itself is wrong: another attempt is the same
                return self._failure(refusal_line(exc.status_code, exc.body, self.contract), start, attempts)
            except Exception as exc:  # non-retryable: auth, unknown model, malformed reply...
                return self._failure(_describe(exc), start, attempts)
            delay = _backoff(self.backend, attempts, backoff_max)
            remaining = deadline - _now()
            if attempts > retries or delay >= remaining:
                return self._failure(last_error, start, attempts)
            logger.warning(
                "tool '%s': attempt %d failed (%s); retrying in %.2fs",
                self.spec.name, attempts, _shorten(self._redact(last_error)), delay,
            )
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        """Close the HTTP connection pools."""
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.close()

    # -- stages ----------------------------------------------------------------------------------

    async def _attempt(self, url: str, request: ModelRequest, deadline: float, call_limit: float) -> Any:
        """One HTTP request to one replica, bounded by the call's deadline whatever the server does.
        `ReplicaDown` (connection failed, 502/503/504) sends it on to the next replica at once."""
        remaining = deadline - _now()
        if remaining <= 0:
            raise _Retryable(f"timed out after {call_limit:g}s")
        limit = min(remaining, self.backend.attempt_timeout_s or remaining)
        max_tokens = self.backend.max_tokens if self.backend.max_tokens is not None else request.max_tokens
        temperature = self.backend.temperature if self.backend.temperature is not None else request.temperature
        options = self.contract.options(max_tokens=max_tokens, temperature=temperature,
                                        reasoning_effort=self.backend.reasoning_effort)
        messages = [{"role": "user", "content": request.prompt}]
        system = self.backend.system_prompt or request.system
        if system:
            messages.insert(0, {"role": "system", "content": system})
        try:
            # The SDK timeout bounds the socket; wait_for bounds everything else (DNS, slow bodies).
            return await asyncio.wait_for(
                self._client_for_loop(url).chat.completions.create(
                    model=self.backend.model, messages=messages, timeout=limit, **options
                ),
                timeout=limit,
            )
        except (TimeoutError, openai.APITimeoutError):
            raise _Retryable(f"timed out after {limit:.3g}s") from None
        except openai.APIConnectionError as exc:  # refused, reset, DNS (timeouts were caught above)
            raise ReplicaDown(self._redact(f"connection failed: {_describe(exc)}")) from None
        except openai.APIStatusError as exc:
            if exc.status_code in FAILOVER_STATUS:
                raise ReplicaDown(self._redact(_describe(exc))) from None
            if exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500:
                raise _Retryable(_describe(exc)) from None
            raise

    def _client_for_loop(self, url: str) -> openai.AsyncOpenAI:
        """One pooled client per replica, recreated only if the event loop changed (pools are loop-bound)."""
        loop = asyncio.get_running_loop()
        if self._client_loop is not loop:
            self._clients, self._client_loop = {}, loop
        if url not in self._clients:
            self._clients[url] = openai.AsyncOpenAI(
                base_url=url, api_key=self._api_key, max_retries=0, timeout=self.backend.timeout_s
            )
        return self._clients[url]

    def _observation(self, response: Any, start: float, attempts: int) -> Observation:
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice else ""
        usage = response.usage
        input_tokens = usage.prompt_tokens if usage else 0
        output_tokens = usage.completion_tokens if usage else 0
        # a model's reply is a claim, not a finding (`lab.world.task.finding`): never evidence for another model
        meta: dict[str, Any] = {"attempts": attempts, "served_model": self.backend.model, "finding": ""}
        if choice is not None:
            meta["finish_reason"] = choice.finish_reason
        if usage is None:
            meta["usage_missing"] = True  # cost is then 0 and under-counts; visible in reports
        return Observation(
            text=self._redact(text),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=self.spec.cost(input_tokens, output_tokens),
            latency_s=_now() - start,
            model=self.model_id,
            meta=meta,
        )

    def _failure(self, message: str, start: float, attempts: int) -> Observation:
        # Redact before shortening, so a cut can never leave part of a key behind; each replica gets room.
        message = _shorten(self._redact(f"tool '{self.spec.name}': {message}"), MAX_ERROR_CHARS * len(self.urls))
        self.failed_calls += 1
        self.last_failure = message
        return Observation.failure(
            message, latency_s=_now() - start, model=self.model_id, meta={"attempts": attempts}
        )

    def _redact(self, text: str) -> str:
        """Remove the key wherever a server or library copied it (echoed headers, error bodies)."""
        if self._api_key != NO_KEY and self._api_key in text:
            text = text.replace(self._api_key, "***")
        return text


def _now() -> float:
    """The running loop's clock (monotonic, as `asyncio.wait_for` reads it): deadlines and latencies are then
    on the clock the timeouts are, also on a test loop whose clock skips idle time (`lab.testing.virtual_clock`)."""
    return asyncio.get_running_loop().time()


def _backoff(backend: OpenAIBackend, attempts: int, cap: float) -> float:
    """Exponential backoff with jitter: base * 2^(n-1), capped at `cap`, times a factor in [0.5, 1.5)."""
    return min(cap, backend.backoff_s * 2 ** (attempts - 1)) * (0.5 + random.random())


def _describe(exc: BaseException) -> str:
    """One line saying what failed, with the low-level cause (e.g. connection refused); unredacted."""
    if isinstance(exc, openai.APIStatusError):
        text = f"HTTP {exc.status_code}: {exc.message}"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    cause = exc.__cause__
    if cause is not None and str(cause):
        text += f" ({type(cause).__name__}: {cause})"
    return " ".join(text.split())


def _shorten(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
