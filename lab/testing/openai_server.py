"""A real, scriptable OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Why a real HTTP server and not a mocked client: retries, timeouts, connection pooling and secret
redaction live in the HTTP layer of the SDK; only real sockets exercise them. The server runs an
aiohttp app on its own event loop in a background thread, on a free port, so synchronous and
`asyncio.run` tests alike can use it:

    with OpenAICompatServer(reply="Paris", usage=(12, 3)) as srv:
        tool = OpenAIChatTool(spec_with(base_url=srv.base_url))
        ...
        assert srv.requests == 1

Behaviours (fields of `ServerBehaviour`, changeable between calls via `srv.behaviour`): fixed latency,
a fixed reply or an echo of the last user message, fixed usage numbers, failing the first N requests
with a status (429, 500, 400...), hanging forever, malformed JSON, echoing request headers (to test
that API keys are redacted) and a queue of scripted replies for orchestrator-policy tests: each is a
text (e.g. `<tool_call>{...}</tool_call>`), a dict with native `tool_calls`, or `{"status": 500}`;
and a `responder` that answers from the prompt's content (a fake model for multi-stage pipelines).

`strict=True` makes it behave like OpenAI's API (`lab.testing.openai_rules`): GPT-5 and the other reasoning
models refuse `max_tokens`, a temperature other than 1, `top_p` and the rest with OpenAI's real error bodies,
any model refuses an unknown parameter, a malformed tool schema or a tool message answering no call, and a
model outside `models` is a 404. `models` is also what `GET /v1/models` lists (`owned_by` each), and
`api_key` makes every request without `Authorization: Bearer <api_key>` a 401, as a provider answers a
wrong key.

From a shell: `python -m lab.testing --reply hi --port 8000` serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from lab.testing.openai_rules import request_error

#: A scripted reply: plain text, `{"content": str, "tool_calls": [{"name", "arguments"}]}` or `{"status": int}`.
ScriptedReply = str | dict[str, Any]


@dataclass
class ServerBehaviour:
    """How the server answers; read at request time, so tests may change it between calls."""

    reply: str = "ok"
    echo: bool = False  # answer with the last user message instead of `reply`
    latency_s: float = 0.0  # delay before every answer, failures included
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; None -> whitespace word counts
    fail_first: int = 0  # the first N requests get `fail_status`
    fail_status: int = 429
    hang: bool = False  # accept the request and never answer (until the server stops)
    malformed: bool = False  # 200 with a body that is not JSON
    echo_headers: bool = False  # put the request headers (Authorization too) in every body
    script: deque[ScriptedReply] = field(default_factory=deque)  # consumed before `reply`/`echo`
    # the last user message -> a reply (a content-dependent fake model); used when the script is empty
    responder: Callable[[str], ScriptedReply] | None = None
    strict: bool = False  # refuse what OpenAI refuses, with its error bodies (`lab.testing.openai_rules`)
    models: tuple[str, ...] = ()  # what GET /v1/models lists; under `strict`, the only models served
    owned_by: str = "openai"  # each listed model's `owned_by` (vLLM says "vllm")
    api_key: str | None = None  # when set, a request must carry `Authorization: Bearer <api_key>`


def unused_port() -> int:
    """A localhost port nothing listens on (bound, read, released): connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OpenAICompatServer:
    """`POST /v1/chat/completions` on 127.0.0.1 in a background thread; a context manager.

    Keyword arguments are `ServerBehaviour` fields (`script` may be any list). `requests` counts every
    request received, `bodies` keeps their JSON bodies (what a policy sent: messages, tools...), `refused`
    the error objects strict mode answered with, and
    `client_ports` the client's port per request (the same port twice means a reused connection);
    `max_in_flight` is the most requests the server was handling at once.
    """

    def __init__(self, port: int = 0, **behaviour: Any) -> None:
        if "script" in behaviour:
            behaviour["script"] = deque(behaviour["script"])
        self.behaviour = ServerBehaviour(**behaviour)
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []  # under `strict`: each error object the server answered with
        self.client_ports: list[int] = []  # one per request; repeats show pooled connections
        self.in_flight = 0
        self.max_in_flight = 0
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._release: asyncio.Event | None = None  # set on stop, frees hanging handlers
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """What to pass as an OpenAI client's `base_url`."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> OpenAICompatServer:
        self._thread = threading.Thread(target=self._serve, name="openai-compat-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout=10):
            raise RuntimeError("OpenAICompatServer did not start within 10 s")
        if self._startup_error is not None:
            raise RuntimeError(f"OpenAICompatServer failed to start: {self._startup_error}")
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not loop.is_running():
            return
        # Release hanging handlers first: aiohttp waits for running handlers on cleanup.
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)

    @contextlib.asynccontextmanager
    async def serving_here(self) -> AsyncIterator[OpenAICompatServer]:
        """Serve on the running event loop instead of a thread: with `lab.testing.virtual_clock`, the
        server's latency and the client's timeouts then run on one (virtual) clock."""
        await self._startup()
        try:
            yield self
        finally:
            await self._shutdown()

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._startup())
        except BaseException as exc:  # reported to start(), which raises it in the caller's thread
            self._startup_error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _startup(self) -> None:
        self._release = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        # handler_cancellation: a client that gives up (timeout) cancels its hanging handler.
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self._port))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    async def _shutdown(self) -> None:
        assert self._release is not None and self._runner is not None
        self._release.set()
        await self._runner.cleanup()

    # -- the endpoint ----------------------------------------------------------------------------

    async def _chat(self, request: web.Request) -> web.Response:
        self.in_flight += 1  # only this loop's thread writes; tests read
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _models(self, request: web.Request) -> web.Response:
        b = self.behaviour
        denied = _unauthorised(request, b.api_key)
        if denied is not None:
            return denied
        return web.json_response({"object": "list", "data": [
            {"id": model, "object": "model", "created": 0, "owned_by": b.owned_by} for model in b.models]})

    async def _answer(self, request: web.Request) -> web.Response:
        self.requests += 1
        number = self.requests
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.client_ports.append(peer[1] if peer else 0)
        b = self.behaviour
        headers = dict(request.headers) if b.echo_headers else None
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return _error(400, "request body is not JSON", headers)
        self.bodies.append(body)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or "model" not in body:
            return _error(400, "'model' and a 'messages' list are required", headers)
        denied = _unauthorised(request, b.api_key)
        if denied is not None:
            return denied
        if b.strict:
            refusal = request_error(body, b.models)
            if refusal is not None:
                self.refused.append(refusal[1])
                return web.json_response({"error": refusal[1]}, status=refusal[0])
        if b.hang:
            assert self._release is not None
            await self._release.wait()
            return _error(503, "server stopped", headers)
        if b.latency_s:
            await asyncio.sleep(b.latency_s)
        if number <= b.fail_first:
            return _error(b.fail_status, f"scripted failure {number}/{b.fail_first}", headers)
        scripted: ScriptedReply | None = b.script.popleft() if b.script else None
        if scripted is None and b.responder is not None:
            users = [m.get("content") for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
            scripted = b.responder(str(users[-1]) if users else "")
        if isinstance(scripted, dict) and "status" in scripted:
            return _error(int(scripted["status"]), "scripted failure", headers)
        if b.malformed:
            return web.Response(text='{"id": "chatcmpl-broken", "choices": [', content_type="application/json")
        return web.json_response(_completion(body, b, scripted, number, headers))


def _completion(
    body: dict[str, Any], b: ServerBehaviour, scripted: ScriptedReply | None, number: int, headers: dict | None
) -> dict[str, Any]:
    """A chat.completion object for this request."""
    messages = body["messages"]
    tool_calls: list[dict[str, Any]] = []
    if isinstance(scripted, dict):
        content = scripted.get("content")
        tool_calls = [_tool_call(call, f"call_{number}_{i}") for i, call in enumerate(scripted.get("tool_calls", []))]
    elif isinstance(scripted, str):
        content = scripted
    elif b.echo:
        users = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        content = str(users[-1]) if users else ""
    else:
        content = b.reply
    if headers is not None:
        content = f"{content or ''}\nheaders: {json.dumps(headers)}"
    if b.usage is not None:
        prompt_tokens, completion_tokens = b.usage
    else:  # a deterministic stand-in for a tokenizer: whitespace-separated words
        prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in messages if isinstance(m, dict))
        completion_tokens = len((content or "").split())
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _tool_call(call: dict[str, Any], call_id: str) -> dict[str, Any]:
    """`{"name", "arguments"}` -> the wire format, whose `arguments` is a JSON *string*."""
    arguments = call.get("arguments", {})
    return {
        "id": call.get("id", call_id),
        "type": "function",
        "function": {
            "name": call["name"],
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        },
    }


def _unauthorised(request: web.Request, api_key: str | None) -> web.Response | None:
    """OpenAI's 401 for a request without the expected key; None when it carries it (or none is expected)."""
    if api_key is None or request.headers.get("Authorization") == f"Bearer {api_key}":
        return None
    return web.json_response({"error": {"message": "Incorrect API key provided. You can find your API key at "
                                                   "https://platform.openai.com/account/api-keys.",
                                        "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}},
                             status=401)


def _error(status: int, message: str, headers: dict | None) -> web.Response:
    if headers is not None:  # inside the message, where SDKs copy it into their exception text
        message = f"{message}; headers: {json.dumps(headers)}"
    body: dict[str, Any] = {"error": {"message": message, "type": "scripted", "code": status}}
    return web.json_response(body, status=status)


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted; prints the base URL first."""
    parser = argparse.ArgumentParser(description="Scriptable OpenAI-compatible test server.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", default="ok")
    parser.add_argument("--echo", action="store_true")
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--fail-status", type=int, default=429)
    args = parser.parse_args(argv)
    server = OpenAICompatServer(
        port=args.port, reply=args.reply, echo=args.echo, latency_s=args.latency_s,
        fail_first=args.fail_first, fail_status=args.fail_status,
    )
    with server:
        print(server.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
