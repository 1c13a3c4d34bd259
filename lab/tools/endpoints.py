"""Check every configured endpoint once, before any work: what no retry can fix fails the command at once.

Why: a model call retries with back-off for what a retry can fix (a timeout, a 429, a 5xx, a connection lost
mid-run), and the released expert protocol waits up to `--expert-timeout-s` (an hour) for it. An endpoint
nobody answers is not such a failure: with a slot at a closed port a run used to retry for minutes before
anyone saw why. So each endpoint (the orchestrator, every slot, the judge, the user) is asked `GET
<url>/models` once, with its key, before tasks load or a store opens:

- refused connection, unknown host, 401/403 (the key), 404 (not the API root), or a model the server does
  not list: one line naming the endpoint's role and URL; the command exits 2 (`LabInputError`);
- a timeout, a 429 or a 5xx: a notice, and the run goes on (its calls retry as usual);
- one replica of several that cannot be reached: a notice (replicas exist to carry on without one).

The probe is synchronous (the standard library's urllib) and runs the endpoints on a few threads, so it
works from a command and from inside an event loop alike (the harness calls it from one).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lab.errors import LabInputError

#: Seconds one probe may take; longer is a notice, not a failure (a busy server still counts as up).
PROBE_TIMEOUT_S = 10.0
#: Models named in a refusal: enough to spot a typo, short enough for one line.
MODELS_SHOWN = 8


@dataclass(frozen=True)
class Endpoint:
    """One model endpoint a run will call: who calls it (`role`, e.g. "slot 'answer-1' of tool 'answer'"),
    its replicas' URLs, the model name it must serve, and where its key comes from."""

    role: str
    urls: tuple[str, ...]
    model: str
    api_key_env: str | None = None


@dataclass(frozen=True)
class _Probe:
    """What one URL answered: `fatal` (no retry can fix it) or `notice` (unchecked, the run goes on)."""

    endpoint: Endpoint
    url: str
    fatal: str | None = None
    notice: str | None = None


def check_endpoints(endpoints: Sequence[Endpoint]) -> list[str]:
    """Probe every URL of `endpoints` once; raise `LabInputError` with one line for the first endpoint no
    retry can fix, else return the notices (one line each) for those that could not be checked."""
    jobs = [(endpoint, url) for endpoint in endpoints for url in endpoint.urls]
    if not jobs:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(jobs)), thread_name_prefix="endpoint-probe") as pool:
        probes = list(pool.map(lambda job: _probe(*job), jobs))
    notices = []
    for endpoint in endpoints:
        own = [p for p in probes if p.endpoint is endpoint]
        unreachable = [p for p in own if p.fatal and p.fatal.startswith(_UNREACHABLE)]
        refused = [p for p in own if p.fatal and p not in unreachable]
        if refused or len(unreachable) == len(own):
            first = (refused or unreachable)[0]
            raise LabInputError(f"{endpoint.role}: {first.url}: {first.fatal}")
        notices += [f"{endpoint.role}: replica {p.url}: {p.fatal}; skipped until it answers" for p in unreachable]
        notices += [f"{endpoint.role}: {p.url}: {p.notice}" for p in own if p.notice]
    return notices


_UNREACHABLE = "cannot be reached"


def _probe(endpoint: Endpoint, url: str) -> _Probe:
    key = os.environ.get(endpoint.api_key_env, "") if endpoint.api_key_env else ""
    request = urllib.request.Request(f"{url}/models", headers={"Authorization": f"Bearer {key or 'EMPTY'}"})
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as response:  # noqa: S310 (http(s) only)
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, b""
    except urllib.error.URLError as exc:  # refused, unknown host, unreachable network
        if isinstance(exc.reason, TimeoutError):
            return _Probe(endpoint, url, notice="not checked (timed out); its calls will retry")
        return _Probe(endpoint, url, fatal=f"{_UNREACHABLE} ({_redacted(str(exc.reason), key)})")
    except (TimeoutError, ConnectionError) as exc:  # a slow or dropped answer: busy, not wrong
        return _Probe(endpoint, url, notice=f"not checked ({type(exc).__name__}); its calls will retry")
    if status in (401, 403):
        holder = f"${endpoint.api_key_env}" if endpoint.api_key_env else "no key"
        state = "" if key or not endpoint.api_key_env else " (unset)"
        return _Probe(endpoint, url, fatal=f"HTTP {status}: the server refuses the key from {holder}{state}")
    if status == 404:
        return _Probe(endpoint, url, fatal="HTTP 404 for GET /models: not an OpenAI-compatible API root "
                                           "(a base URL usually ends in /v1)")
    if status != 200:
        return _Probe(endpoint, url, notice=f"not checked (GET /models answered HTTP {status}); its calls will retry")
    served = _served_models(body)
    if served is None:
        return _Probe(endpoint, url, notice="GET /models answered no model list, so the model was not checked")
    if not served:
        return _Probe(endpoint, url, notice=f"lists no models, so {endpoint.model!r} was not checked")
    if endpoint.model not in served:
        shown = ", ".join(served[:MODELS_SHOWN]) + (", ..." if len(served) > MODELS_SHOWN else "")
        return _Probe(endpoint, url, fatal=f"does not serve model {endpoint.model!r} (it serves: {shown})")
    return _Probe(endpoint, url)


def _served_models(body: bytes) -> list[str] | None:
    """The model ids of an OpenAI `/models` list; None when the body is not one."""
    try:
        listing: Any = json.loads(body)
    except ValueError:
        return None
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]


def _redacted(text: str, key: str) -> str:
    """One line without the key."""
    text = " ".join(text.split())
    return text.replace(key, "***") if key else text
