"""`TrajectoryWriter`: the one way evaluation and training commit rollouts to the store, in batches.

Why batches: every store write opens a DuckDB connection and commits (~50-100 ms on 2 busy cores), so
writing each rollout on its own would cost more than a simulated rollout. Producers `put` finished
trajectories from any number of asyncio tasks; one background task commits whatever has accumulated,
at most `batch_size` per transaction and at least every `interval_s`, in a worker thread so the event
loop keeps running rollouts meanwhile. `close()` commits the rest and re-raises a failed commit, so
nothing is silently lost. Synchronous callers (the trainer, once per step) call `Store.write_trajectories`.

    async with TrajectoryWriter(store, on_commit=lambda items: bar.advance(len(items))) as writer:
        await writer.put(result.store_item())
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from lab.store.store import Store, TrajectoryItem

WRITE_BATCH = 64
WRITE_INTERVAL_S = 0.25


class TrajectoryWriter:
    """Batched, background commits of `(trajectory, steps, tokens)` items to one store."""

    def __init__(self, store: Store, on_commit: Callable[[Sequence[TrajectoryItem]], None] | None = None,
                 batch_size: int = WRITE_BATCH, interval_s: float = WRITE_INTERVAL_S) -> None:
        self.store = store
        self.on_commit = on_commit
        self.batch_size = batch_size
        self.interval_s = interval_s
        self._queue: asyncio.Queue[TrajectoryItem | None] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    async def __aenter__(self) -> TrajectoryWriter:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    @property
    def failed(self) -> BaseException | None:
        """The error that stopped the writer, if it stopped early (producers should stop too)."""
        if self._task is not None and self._task.done() and not self._task.cancelled():
            return self._task.exception()
        return None

    @property
    def task(self) -> asyncio.Task:
        """The background task, for callers that wait on it beside their own workers."""
        self.start()
        assert self._task is not None
        return self._task

    async def put(self, item: TrajectoryItem) -> None:
        if self.failed is not None:
            raise RuntimeError("the trajectory writer has stopped") from self.failed
        await self._queue.put(item)

    async def close(self) -> None:
        """Commit everything put so far and stop; raises the error of a failed commit."""
        if self._task is None:
            return
        if not self._task.done():
            await self._queue.put(None)
        await self._task

    async def _run(self) -> None:
        pending: list[TrajectoryItem] = []
        finished = False
        while not finished:
            try:
                item = await asyncio.wait_for(self._queue.get(), timeout=self.interval_s)
                if item is None:
                    finished = True
                else:
                    pending.append(item)
                    if len(pending) < self.batch_size:
                        continue
            except TimeoutError:
                pass
            if pending:
                batch, pending = pending, []
                await asyncio.to_thread(self.store.write_trajectories, batch)
                if self.on_commit is not None:
                    self.on_commit(batch)
