"""Bookshop tools behind the shared Tool interface, per-rollout database state, and the DB checker.

Why state lives in the context: tools are shared by many concurrent rollouts, but each rollout must
act on its own copy of the shop (as in tau2-bench). The first bookshop call of a rollout puts a
`DomainSession` (a deep copy of the base database) into `context.state["bookshop"]`; later calls of
the same rollout see its changes, other rollouts never do. `check_db` replays a task's golden actions
on a fresh copy and compares the result with the session's database.

    tools = make_domain_tools(db)
    ctx = ToolContext(task_id=task.task_id, task=task)
    obs = await tools["find_customer_by_email"].execute({"email": "..."}, ctx)
    ok, detail = check_db(task, session_of(ctx))
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from lab.errors import LabInputError
from lab.tools.base import Observation, ToolContext, validate_arguments
from lab.toolspec import ToolSpec
from lab.world.bookshop import OPERATIONS, DomainError, apply, clone, replay

DOMAIN = "bookshop"

_STR = {"type": "string"}
_ADDRESS = {"street": _STR, "city": _STR, "zip": {"type": "string", "description": "5-digit zip code."}}
#: JSON-schema properties per operation; every schema forbids unknown arguments.
_PARAMETERS: dict[str, dict[str, Any]] = {
    "find_customer_by_email": {"email": _STR},
    "find_customer_by_name": {"name": {"type": "string", "description": "Full name."}, "zip": _STR},
    "get_customer": {"customer_id": _STR},
    "list_orders": {"customer_id": _STR},
    "get_order": {"order_id": {"type": "string", "description": "Order id such as '#O05001'."}},
    "search_books": {"query": _STR},
    "cancel_order": {"order_id": _STR, "reason": {"type": "string", "enum": ["no longer needed", "ordered by mistake"]}},
    "return_items": {"order_id": _STR, "book_ids": {"type": "array", "items": _STR}},
    "update_order_address": {"order_id": _STR, **_ADDRESS},
    "update_customer_address": {"customer_id": _STR, **_ADDRESS},
}


@dataclass
class DomainSession:
    """One rollout's shop: the database it started from, the live copy, and the calls made."""

    initial: dict[str, Any]
    db: dict[str, Any] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def fresh(cls, base_db: dict[str, Any]) -> DomainSession:
        return cls(initial=base_db, db=clone(base_db))


def session_of(context: ToolContext, base_db: dict[str, Any] | None = None) -> DomainSession:
    """The rollout's session, created from `base_db` on first use."""
    session = context.state.get(DOMAIN)
    if session is None:
        if base_db is None:
            raise LabInputError(f"rollout '{context.task_id}': no bookshop session and no base database to start one")
        session = context.state[DOMAIN] = DomainSession.fresh(base_db)
    return session


class BookshopTool:
    """One bookshop operation as a tool; writes change only the calling rollout's database."""

    def __init__(self, name: str, base_db: dict[str, Any]) -> None:
        fn, writes, description = OPERATIONS[name]
        self.base_db = base_db
        self.writes = writes
        self.spec = ToolSpec(
            name=name,
            description=description,
            category="basic",
            parameters={"type": "object", "properties": _PARAMETERS[name],
                        "required": list(_PARAMETERS[name]), "additionalProperties": False},
            backend={"kind": "bookshop"},
        )

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        problem = validate_arguments(self.spec, arguments)
        if problem:
            return Observation.failure(problem)
        if context is None:
            return Observation.failure(f"tool '{self.spec.name}' needs a rollout context to hold the shop's state")
        session = session_of(context, self.base_db)
        session.calls.append({"name": self.spec.name, "arguments": copy.deepcopy(arguments)})
        try:
            result = apply(session.db, self.spec.name, dict(arguments))
        except DomainError as exc:
            return Observation.failure(str(exc), meta={"domain": DOMAIN})
        return Observation(text=json.dumps(result, sort_keys=True), meta={"domain": DOMAIN, "writes": self.writes})


def make_domain_tools(base_db: dict[str, Any]) -> dict[str, BookshopTool]:
    """All bookshop tools by name, sharing one read-only base database."""
    return {name: BookshopTool(name, base_db) for name in OPERATIONS}


_EXPECTED: dict[tuple[str, int], tuple[dict[str, Any], dict[str, Any]]] = {}


def expected_db(task: Any, initial_db: dict[str, Any]) -> dict[str, Any]:
    """The database a perfect agent leaves behind: golden actions replayed on a fresh copy (cached per
    task and base database: every rollout of a task is graded against the same one)."""
    key = (task.task_id, id(initial_db))
    cached = _EXPECTED.get(key)
    if cached is None or cached[0] is not initial_db:  # the entry keeps its database alive, so ids stay unique
        cached = _EXPECTED[key] = (initial_db, replay(initial_db, list(task.answer)))
    return cached[1]


def check_db(task: Any, session: DomainSession) -> tuple[bool, str]:
    """tau2-style outcome check: the rollout's final database equals the golden one, and it attempted no
    write the golden plan does not make (a forbidden cancel the shop refused is still a policy breach)."""
    golden_writes = [(a.get("name"), a.get("arguments")) for a in task.answer if isinstance(a, dict)]
    for call in session.calls:
        if OPERATIONS.get(call["name"], (None, False))[1] and (call["name"], call["arguments"]) not in golden_writes:
            return False, f"attempted a write the task does not call for: {call['name']}"
    want = expected_db(task, session.initial)
    if want == session.db:  # dict equality ignores key order
        return True, "final database matches the golden actions"
    return False, "final database differs: " + ", ".join(_differences(want, session.db))


def check_actions(task: Any, actions: list[dict[str, Any]], initial_db: dict[str, Any]) -> tuple[bool, str]:
    """Check an answer given as an action list (no live session): replay both and compare."""
    if not isinstance(actions, list) or not all(isinstance(a, dict) and "name" in a for a in actions):
        return False, "answer is not a list of {name, arguments} actions"
    return check_db(task, DomainSession(initial=initial_db, db=replay(initial_db, actions), calls=list(actions)))


def _differences(want: dict, got: dict) -> list[str]:
    diffs = []
    for table in ("customers", "orders", "books"):
        keys = sorted(set(want.get(table, {})) | set(got.get(table, {})))
        diffs += [f"{table}/{k}" for k in keys if want.get(table, {}).get(k) != got.get(table, {}).get(k)]
    return diffs[:5] or ["(structure)"]
