"""Replicas of one model: several base URLs serving the same model (vLLM servers of one checkpoint), with
requests spread over them and moved to another when one is down.

An `openai:` orchestrator lists them comma-separated (`openai:my-model@http://h1:8000/v1,http://h2:8000/v1`),
an `openai` model tool as a list (`base_url: [http://h1:8000/v1, http://h2:8000/v1]`, or the same
comma-separated string); `replica_urls` reads both, and refuses an empty entry, a URL without
`http(s)://` or the same URL twice before any request.

Choosing: each request goes to the replica with the fewest requests in flight, ties taken in turn
(round-robin), so sequential calls alternate and concurrent ones balance. Failing over: a request whose
replica could not be reached (the caller raises `ReplicaDown`: connection refused or reset, DNS, HTTP
502/503/504) is sent again at once to the next replica not marked down, and the failed one is skipped for
`cooldown_s` (tried again after that, or at once by a request that finds every replica down). Only when
every replica has failed does one attempt fail, with `AllReplicasFailed`: one line naming each URL and
its last error. Everything else (a 429, a 500, a timeout, a bad request) is the caller's to retry or
report, as with one URL: `lab.policies.openai_policy` and `lab.tools.openai_llm` keep their own retry and
back-off loops around `Replicas.send`, and their own error types (an orchestrator's `PolicyUnavailable`,
which the harness counts as unavailable and does not store; a tool's error observation).

Why not a load balancer in front: the lab then sees which replica failed and why, a rollout never sees a
replica's outage while another answers, and a plain list in a config is all a user writes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar
from urllib.parse import urlsplit

from lab.errors import LabInputError

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds a replica that failed is skipped; short, since a restarted vLLM server should get traffic soon.
COOLDOWN_S = 10.0
#: HTTP statuses of a replica that is down or restarting (a proxy in front of a dead server); the request
#: moves to another replica at once. Other failures (429, 500) mean the replica is up and busy or wrong.
FAILOVER_STATUS = frozenset({502, 503, 504})
#: Longest error text kept per replica, so the line naming every replica stays readable.
MAX_ERROR_CHARS = 200


class ReplicaDown(Exception):
    """Raised by a request for a replica that could not be reached; its message is the (redacted) cause."""


class AllReplicasFailed(Exception):
    """Every replica failed one attempt; the message names each URL and its last error, on one line."""


def replica_urls(value: str | Sequence[str]) -> list[str]:
    """The replica URLs of `value` (comma-separated text or a list), trailing slashes dropped.

    Raises `LabInputError` (a ValueError, so pydantic reports it for a backend field) naming the bad entry.

    >>> replica_urls("http://h1:8000/v1/, http://h2:8000/v1")
    ['http://h1:8000/v1', 'http://h2:8000/v1']
    >>> replica_urls("http://h1/v1,http://h1/v1/")
    Traceback (most recent call last):
    ...
    lab.errors.LabInputError: replica 'http://h1/v1' is listed twice
    """
    if isinstance(value, str):
        entries = value.split(",")
    elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        entries = list(value)
    else:
        raise LabInputError(f"expected a URL or a list of URLs, got {value!r}")
    if not entries:
        raise LabInputError("no replica URL given")
    urls: list[str] = []
    for number, entry in enumerate(entries, 1):
        url = entry.strip().rstrip("/")
        if not url:
            raise LabInputError(f"replica {number} of {len(entries)} is empty")
        if not url.startswith(("http://", "https://")):
            raise LabInputError(f"replica '{url}' must start with http:// or https://")
        if any(c.isspace() or c == "," for c in url) or not urlsplit(url).hostname:
            raise LabInputError(f"replica '{url}' is not a URL with a host")
        if url in urls:
            raise LabInputError(f"replica '{url}' is listed twice")
        urls.append(url)
    return urls


class Replicas:
    """The replicas of one model and what the lab knows of them: requests in flight, which are down.

    Shared by every request of a policy or a tool (one event loop: no locks, since nothing between a
    choice and its bookkeeping awaits). `clock` is injectable so the cool-down is tested without waiting.
    """

    def __init__(self, urls: Sequence[str], cooldown_s: float = COOLDOWN_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.urls = tuple(replica_urls(list(urls)))
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._in_flight = dict.fromkeys(self.urls, 0)
        self._down_until = dict.fromkeys(self.urls, float("-inf"))
        self._errors: dict[str, str] = {}  # url -> its last failure, until it answers again
        self._next = 0  # round-robin position: ties go to the first replica from here

    def is_down(self, url: str) -> bool:
        return self._down_until[url] > self._clock()

    def down(self) -> list[str]:
        """The replicas now skipped (failed within their cool-down)."""
        return [url for url in self.urls if self.is_down(url)]

    async def send(self, request: Callable[[str], Awaitable[T]]) -> T:
        """`await request(url)` on the chosen replica; on `ReplicaDown`, at once on the next one.

        Replicas marked down are skipped, unless every replica is down when the call starts: then all are
        tried again (a cool-down only spreads load away from a failed replica, it never refuses a call).
        Any other exception from `request` propagates unchanged. Raises `AllReplicasFailed` when none answered.
        """
        tried: list[str] = []
        everyone_down = all(self.is_down(url) for url in self.urls)
        while (url := self._choose(tried, everyone_down)) is not None:
            tried.append(url)
            self._in_flight[url] += 1
            try:
                result = await request(url)
            except ReplicaDown as exc:
                self._mark_down(url, str(exc))
                continue
            finally:
                self._in_flight[url] -= 1
            self._mark_up(url)
            return result
        raise AllReplicasFailed(self.describe_failures())

    def describe_failures(self) -> str:
        """One line: the one replica's error, or `all N replicas failed: url (error); url (error)`."""
        errors = [(url, self._errors.get(url, "not tried")) for url in self.urls]
        if len(errors) == 1:
            return errors[0][1]
        return f"all {len(errors)} replicas failed: " + "; ".join(f"{url} ({error})" for url, error in errors)

    def _choose(self, tried: list[str], include_down: bool) -> str | None:
        """Fewest in flight among the replicas not yet tried (and not down), ties in round-robin order."""
        n = len(self.urls)
        rotation = [self.urls[(self._next + i) % n] for i in range(n)]
        candidates = [u for u in rotation if u not in tried and (include_down or not self.is_down(u))]
        if not candidates:
            return None
        url = min(candidates, key=self._in_flight.__getitem__)  # min keeps the first of equals
        self._next = (self.urls.index(url) + 1) % n
        return url

    def _mark_down(self, url: str, error: str) -> None:
        was_up = not self.is_down(url)
        text = " ".join(error.split())
        self._errors[url] = text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."
        self._down_until[url] = self._clock() + self.cooldown_s
        if was_up and len(self.urls) > 1:
            logger.warning("replica %s is down (%s); skipped for %gs", url, self._errors[url], self.cooldown_s)

    def _mark_up(self, url: str) -> None:
        if self._errors.pop(url, None) is not None and len(self.urls) > 1:
            logger.info("replica %s answers again", url)
        self._down_until[url] = float("-inf")
