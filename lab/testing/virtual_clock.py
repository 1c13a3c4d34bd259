"""An event loop whose clock jumps ahead when it has nothing to do: minutes of timeouts and server latency
pass in milliseconds, over real sockets.

Why: a test of "a call slower than two minutes completes" must not take two minutes, and a mocked
client would not exercise the HTTP layer's own timeouts. On this loop, whenever no callback is ready,
no socket has data (after a short real wait) and no executor job is running, the clock moves straight
to the next timer. Timers still fire in their order, so a server that answers after 150 s answers
before a client that gives up at 600 s, and after one that gives up at 120 s.

Only what reads the loop's clock sees virtual time (`asyncio.sleep`, `asyncio.wait_for`, the HTTP
clients' timeouts); `time.monotonic()` stays real.

    loop = VirtualClockLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

#: Real seconds the loop waits for socket data before it takes the idle time as virtual.
REAL_WAIT_S = 0.02


class _JumpingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """A selector that, when a wait would time out with nothing to report, reports the wait as done and
    adds its length to `offset` (the loop's clock) instead of sleeping it."""

    def __init__(self) -> None:
        super().__init__()
        self.offset = 0.0
        self.busy = 0  # executor jobs running: their completion wakes the loop, so it must really wait

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None or timeout <= 0 or self.busy:
            return super().select(timeout)
        ready = super().select(min(timeout, REAL_WAIT_S))
        if not ready and timeout > REAL_WAIT_S:
            self.offset += timeout - REAL_WAIT_S
        return ready


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """A selector event loop on a clock that skips idle time (see the module docstring)."""

    def __init__(self) -> None:
        self._jumping = _JumpingSelector()
        super().__init__(selector=self._jumping)

    def time(self) -> float:
        return super().time() + self._jumping.offset

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        self._jumping.busy += 1
        future = super().run_in_executor(executor, func, *args)
        future.add_done_callback(self._job_done)
        return future

    def _job_done(self, _: asyncio.Future[Any] | Future[Any]) -> None:
        self._jumping.busy -= 1
