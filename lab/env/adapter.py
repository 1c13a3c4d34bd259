"""An environment's tool behind the lab's Tool interface, acting on the calling rollout's own copy.

Why one adapter: the bookshop, tau2 retail and every ToolScale domain answer a call the same way. The
first call of a rollout starts a `Session` (`start(context)`: a fresh copy of the task's start state,
or that state itself until the first write copies it, `Session.fork`) under `context.state[key]`; each
call runs on that session's database, is logged there (errors included), and comes back as an
`Observation` whose `error` is the text after `Error: `, with the environment's name and whether the
tool writes in `meta`.

`check_arguments` makes the adapter check the call against the tool's JSON schema first (the
bookshop's tools do: a malformed call is answered and not logged, so it never counts as an attempted
write); tau2 retail and the typed domains check arguments in `Environment.call` instead.

    tool = EnvTool(spec, env, key="tau2:retail", start=lambda ctx: Session(...))
    obs = await tool.execute({"order_id": "#W2378156"}, ctx)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lab.env.environment import Environment
from lab.env.state import Session
from lab.tools.base import Observation, ToolContext, validate_arguments
from lab.toolspec import ToolSpec


class EnvTool:
    """One tool of an environment; writes change only the calling rollout's database."""

    def __init__(self, spec: ToolSpec, env: Environment, key: str, start: Callable[[ToolContext], Session],
                 check_arguments: bool = False, in_thread: bool = False, holder: str = "domain's") -> None:
        """`key`: where the session sits in `context.state`; `in_thread`: run calls off the event loop
        (a sandboxed domain waits for a subprocess); `holder`: what the missing-context error names."""
        self.spec, self.env, self.key, self.start = spec, env, key, start
        self.writes = env.access(spec.name) == "write"
        self.check_arguments, self.in_thread, self.holder = check_arguments, in_thread, holder

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        if self.check_arguments and (problem := validate_arguments(self.spec, arguments)):
            return Observation.failure(problem)
        if context is None:
            return Observation.failure(f"tool '{self.spec.name}' needs a rollout context to "
                                       f"hold the {self.holder} state")
        session = session_in(context, self.key, self.start)
        db = session.writable() if self.writes else session.db  # a read runs on a shared start state as it is
        if self.in_thread:
            text, failed = await asyncio.to_thread(self.env.call, db, self.spec.name, arguments)
        else:
            text, failed = self.env.call(db, self.spec.name, arguments)
        session.record(self.spec.name, arguments, failed)
        meta = {"domain": self.env.name, "writes": self.writes}
        return Observation(text=text, error=text.removeprefix("Error: ") if failed else None, meta=meta)


def session_in(context: ToolContext, key: str, start: Callable[[ToolContext], Session]) -> Session:
    """The rollout's session under `key`, started with `start(context)` on first use."""
    session = context.state.get(key)
    if session is None:
        session = context.state[key] = start(context)
    return session
