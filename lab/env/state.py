"""One rollout's database: the `Session`, how a database is copied, and tau2's hash of it.

Why state lives in a session: tools are shared by every concurrent rollout, but each must act on its
own copy of the database (as in tau2-bench). The adapter (`lab.env.adapter`) puts a `Session` into
`context.state[<environment name>]` on the rollout's first call; later calls see its changes, no other
rollout does. Every call is logged in order, errors included, because the graders replay the
trajectory's write calls rather than trust the live state (`lab.env.replay`).

A database is plain JSON (`{table: {id: record}}` for the bookshop and ToolScale, tau2's retail
layout for retail), so a copy and a hash need nothing but `json`.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson


def canonical_hash(db: dict[str, Any]) -> str:
    """tau2's database hash: sha256 of the sorted-key JSON text with Python's default separators.

    `check_circular=False` changes no output (a database has no cycles) and saves a tenth of the time.

    >>> canonical_hash({"b": 1, "a": [1.0]}) == canonical_hash({"a": [1.0], "b": 1})
    True
    """
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str, check_circular=False).encode()).hexdigest()


def clone(db: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON database; an orjson round trip keeps ints, floats and key order, and is far
    faster than `copy.deepcopy` on plain data."""
    return orjson.loads(orjson.dumps(db))


@dataclass
class Session:
    """One rollout's state in one environment: the database it started from (never changed), the live
    database, and every call made on it, in order: `{name, arguments, error}`.

    `env` is the environment (`lab.env.environment.Environment`) whose tools made the calls, so a
    grader can replay them without knowing which domain it grades.
    """

    env: Any
    initial: dict[str, Any]
    db: dict[str, Any]
    calls: list[dict[str, Any]] = field(default_factory=list)
    #: Set when `db` is still a start state shared with other rollouts (never to be mutated): the copy the
    #: first write makes (`writable`). Why: most calls read, and a rollout that only reads then never
    #: copies the database (tau2 retail's is 2.8 MB, a few ms of CPU a copy).
    fork: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def writable(self) -> dict[str, Any]:
        """The session's own database, copied from the shared start state on the first call that may write."""
        if self.fork is not None:
            self.db, self.fork = self.fork(self.db), None
        return self.db

    def record(self, name: str, arguments: Any, error: bool) -> None:
        """Log one call; the arguments are copied, so a caller that reuses its dict changes nothing here."""
        self.calls.append({"name": name, "arguments": copy.deepcopy(arguments), "error": error})
