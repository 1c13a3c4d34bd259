"""Bookshop tools behind the shared Tool interface, with per-rollout state (`lab.env.adapter`).

The first bookshop call of a rollout puts a `lab.env.state.Session` (a deep copy of the base
database) into `context.state["bookshop"]`; later calls of the same rollout see its changes, other
rollouts never do. Unlike retail's, the bookshop's tools check a call against their schema first: a
malformed call is answered and not logged, so it never counts as an attempted write. The rollout is
graded by `lab.graders` (`lab.env.grading.state_check`: the golden actions replayed on a fresh copy,
compared with the session's database).

    tools = make_domain_tools(db)
    ctx = ToolContext(task_id=task.task_id, task=task)
    obs = await tools["find_customer_by_email"].execute({"email": "..."}, ctx)
    ok, detail = state_check(task, ctx.state[DOMAIN])
"""

from __future__ import annotations

from typing import Any

from lab.env.adapter import EnvTool
from lab.env.replay import run_actions
from lab.env.schema import function_schema
from lab.env.state import Session, clone
from lab.toolspec import ToolSpec
from lab.world.bookshop import BOOKSHOP, CANCEL_REASONS, OPERATIONS

DOMAIN = BOOKSHOP.name

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
    "cancel_order": {"order_id": _STR, "reason": {"type": "string", "enum": list(CANCEL_REASONS)}},
    "return_items": {"order_id": _STR, "book_ids": {"type": "array", "items": _STR}},
    "update_order_address": {"order_id": _STR, **_ADDRESS},
    "update_customer_address": {"customer_id": _STR, **_ADDRESS},
}


def make_domain_tools(base_db: dict[str, Any]) -> dict[str, EnvTool]:
    """All bookshop tools by name, sharing one read-only base database."""
    def start(context: Any) -> Session:
        return Session(env=BOOKSHOP, initial=base_db, db=clone(base_db))

    tools = {}
    for name, (_, _, description) in OPERATIONS.items():
        schema = function_schema(name, description, _PARAMETERS[name])
        spec = ToolSpec(name=name, description=description, category="basic", parameters=schema["parameters"],
                        backend={"kind": DOMAIN})
        tools[name] = EnvTool(spec, BOOKSHOP, DOMAIN, start, check_arguments=True, holder="shop's")
    return tools


def untouched_session(base_db: dict[str, Any]) -> Session:
    """The session of a rollout that called no bookshop tool: the base database itself (read-only, no copy)."""
    return Session(env=BOOKSHOP, initial=base_db, db=base_db)


def replayed_session(base_db: dict[str, Any], actions: list[dict[str, Any]]) -> Session:
    """The session an agent that made exactly `actions` would leave: for grading an answer given as an
    action list, with no live rollout."""
    return Session(env=BOOKSHOP, initial=base_db, db=run_actions(BOOKSHOP, base_db, actions), calls=list(actions))
