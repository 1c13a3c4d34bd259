"""Rebuilding end states: a trajectory's writes replayed, golden actions run, and the per-task cache.

Why replay rather than read the live database: tau2 rebuilds the agent's end state by re-executing its
write calls on a fresh copy of the start state, so a check cannot be fooled by state a tool left
behind, and the expected state comes from the task's golden actions the same way. Reads, unknown tools
and refused writes change nothing. `copy` is the environment's deep copy (`clone`, or tau2 retail's
faster hand-written one).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from lab.env.environment import Environment
from lab.env.state import clone

Copy = Callable[[dict[str, Any]], dict[str, Any]]
T = TypeVar("T")


def replay_writes(env: Environment, db: dict[str, Any], calls: Iterable[dict[str, Any]],
                  copy: Copy = clone) -> dict[str, Any]:
    """A trajectory's end state: a copy of `db` after its WRITE calls (`{name, arguments}`), in order."""
    state = copy(db)
    env.run_chain(state, [c for c in calls if env.access(c.get("name")) == "write"], hash_writes=False)
    return state


def run_actions(env: Environment, db: dict[str, Any], actions: Iterable[dict[str, Any]],
                copy: Copy = clone) -> dict[str, Any]:
    """The expected state: a copy of `db` after every action, reads included; a failing one changes nothing."""
    state = copy(db)
    env.run_chain(state, list(actions), hash_writes=False)
    return state


class ExpectedStates:
    """Expected end states (or their hashes), computed once per key: every rollout of a task, as in a
    GRPO group, is graded against the same one. A key names the task and its start state."""

    def __init__(self) -> None:
        self._values: dict[Hashable, Any] = {}

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        if key not in self._values:
            self._values[key] = compute()
        return self._values[key]
