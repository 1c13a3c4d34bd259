"""What an evaluation may spend and how fast it may start rollouts: `--budget-usd` and `--rate-limit`.

Budget: each rollout runs under an allowance reserved against the cap and stops at the end of the
turn that reaches it, so the total can pass the cap by at most the cost of one turn (up to
`max_calls_per_turn` tool calls plus the orchestrator's own tokens) for each rollout in flight, plus its
judge call. The judge's cost counts against the cap: it is money the command spends.
"""

from __future__ import annotations

import asyncio
import time


class Budget:
    """Stops before the total passes the cap, whatever the concurrency.

    Each rollout is granted an allowance (the engine stops it at the end of the turn that reaches it)
    and allowances in flight are reserved against the cap. Until one rollout has finished nothing is
    known about their cost, so the first runs alone; after that each is granted up to three times the
    largest rollout cost seen, and none starts when what is left cannot cover one such rollout.
    """

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        self.spent = 0.0
        self.reserved = 0.0
        self.in_flight = 0
        self.largest = 0.0
        self.changed = asyncio.Condition()

    def resume(self, spent: float, largest: float) -> None:
        """Count what a resumed run's stored rollouts cost (`largest`: the dearest one): the cap covers it too."""
        self.spent += spent
        self.largest = max(self.largest, largest)

    async def acquire(self) -> float | None:
        """The allowance of the rollout about to start: None without a cap, 0.0 for "do not start"."""
        if self.cap is None:
            return None
        async with self.changed:
            while True:
                left = self.cap - self.spent - self.reserved
                known = self.largest > 0
                if left > 1e-12 and (left >= self.largest if known else self.in_flight == 0):
                    grant = min(left, 3 * self.largest) if known else left
                    self.reserved += grant
                    self.in_flight += 1
                    return grant
                if self.in_flight == 0:
                    return 0.0
                await self.changed.wait()

    async def release(self, allowance: float | None, cost: float) -> None:
        """A rollout granted `allowance` finished having cost `cost`."""
        if allowance is None:
            return
        async with self.changed:
            self.reserved -= allowance
            self.in_flight -= 1
            self.spent += cost
            self.largest = max(self.largest, cost)
            self.changed.notify_all()


class RateLimiter:
    """At most `rate` rollout starts per second across all workers."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.next_at = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            delay = self.next_at - now
            self.next_at = max(now, self.next_at) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)
