"""A two-table toy environment for the core's tests: typed tools over `{"counters": {id: {...}}}`."""

from __future__ import annotations

import json
from typing import Any, Literal

from lab.env.environment import Access, Environment
from lab.env.errors import ToolRefused, error_line
from lab.env.schema import Toolbox

box = Toolbox()


@box.read
def get_counter(db: dict, counter_id: str) -> str:
    """One counter's record.

    counter_id: the counter's id, e.g. 'c1'.
    """
    if counter_id not in db["counters"]:
        raise ToolRefused(f"counter '{counter_id}' not found")
    return json.dumps(db["counters"][counter_id])


@box.write
def add(db: dict, counter_id: str, amount: float, mode: Literal["up", "down"], tags: list[str]) -> str:
    """Move a counter by an amount; a counter never goes below zero.

    counter_id: the counter's id.
    amount: how far to move it.
    mode: up or down.
    tags: labels recorded with the change.
    """
    counter = db["counters"].get(counter_id)
    if counter is None:
        raise ToolRefused(f"counter '{counter_id}' not found")
    value = counter["value"] + (amount if mode == "up" else -amount)
    if value < 0:
        raise ToolRefused(f"counter '{counter_id}' would go below zero")
    counter["value"], counter["tags"] = value, tags
    return json.dumps(counter)


class Toy(Environment):
    name = "toy"

    def access(self, name: Any) -> Access | None:
        tool = box.tools.get(name) if isinstance(name, str) else None
        return tool.access if tool else None

    def call(self, db: dict[str, Any], name: Any, arguments: Any) -> tuple[str, bool]:
        tool = box.tools.get(name) if isinstance(name, str) else None
        if tool is None or not isinstance(arguments, dict):
            return f"Error: cannot call {name!r}", True
        try:
            return tool.function(db, **tool.bind(arguments)), False
        except ToolRefused as exc:
            return error_line(name, str(exc)), True


TOY = Toy()


def toy_db() -> dict[str, Any]:
    return {"counters": {"c1": {"id": "c1", "value": 5.0, "tags": []}, "c2": {"id": "c2", "value": 0.0, "tags": []}}}
