"""`EagerRequest`: an aiohttp request whose body leaves in the sending coroutine's own step.

Why: on Python 3.11 aiohttp writes every request (headers and body together) from a task of its own,
which runs only after everything else the event loop had ready. At high concurrency an evaluation's
replies come back in bursts; each rollout works on its reply and sends its next turn, but no turn leaves
before the last rollout of the burst is done, so every turn waits for the whole burst's work and the
next burst comes back just as bunched. On the fixed-latency rig (`benchmarks/eval_throughput.py`,
C = 1024, L = 1 s) a bare aiohttp loop spending 0.6 ms of CPU per call held 0.82 of the limit C / L
that way, and 0.92 with this request. aiohttp 3.10+ starts that task eagerly itself on Python 3.12+
(`eager_start`), so `request_class()` returns aiohttp's own request there.

What it changes: a bytes body (JSON included) of known length is written straight after the headers,
in two writes instead of one; anything else (streamed or compressed bodies, `Expect: 100-continue`, a
paused transport, tracing) goes aiohttp's own way.

    aiohttp.ClientSession(request_class=request_class(), ...)
"""

from __future__ import annotations

import sys

import aiohttp
from aiohttp import payload
from aiohttp.client_reqrep import ClientResponse
from aiohttp.connector import Connection


class EagerRequest(aiohttp.ClientRequest):
    """`ClientRequest` that sends a bytes body in `send` rather than in a task of its own."""

    async def send(self, conn: Connection) -> ClientResponse:
        body = getattr(self, "_body", None)
        protocol, transport = conn.protocol, conn.transport
        if (not isinstance(body, payload.BytesPayload) or not isinstance(getattr(body, "_value", None), bytes)
                or self.compress or self.chunked or getattr(self, "_continue", None) is not None
                or getattr(self, "_traces", None) or protocol is None or transport is None
                or protocol.writing_paused or self._get_content_length() != len(body._value)):
            return await super().send(conn)
        self._body = None  # aiohttp sends the headers of a request without a body at once...
        try:
            response = await super().send(conn)
        finally:
            self._body = body
        transport.write(body._value)  # ...and the body follows them, before any other task runs
        return response


def request_class() -> type[aiohttp.ClientRequest]:
    """The request class for a client session: `EagerRequest` where aiohttp would send late (Python < 3.12)."""
    return EagerRequest if sys.version_info < (3, 12) else aiohttp.ClientRequest
