"""lab.env.adapter: each rollout acts on its own copy, every call is logged, refusals read `Error: ...`."""

from __future__ import annotations

import asyncio

from lab.env.adapter import EnvTool
from lab.env.state import Session
from lab.tools.base import ToolContext
from lab.toolspec import ToolSpec
from tests.helpers.toy_environment import TOY, box, toy_db

BASE = toy_db()


def _tool(name: str, check_arguments: bool = False) -> EnvTool:
    schema = box.tools[name].schema
    spec = ToolSpec(name=name, description=schema["description"], category="basic", parameters=schema["parameters"])
    return EnvTool(spec, TOY, "toy", lambda context: Session(env=TOY, initial=BASE, db=toy_db()),
                   check_arguments=check_arguments)


ADD = {"counter_id": "c1", "amount": 1, "mode": "up", "tags": []}


def test_rollouts_do_not_see_each_others_writes() -> None:
    add, first, second = _tool("add"), ToolContext(task_id="a"), ToolContext(task_id="b")
    observation = asyncio.run(add.execute(ADD, first))
    assert observation.error is None and observation.meta == {"domain": "toy", "writes": True}
    assert first.state["toy"].db["counters"]["c1"]["value"] == 6.0
    asyncio.run(_tool("get_counter").execute({"counter_id": "c1"}, second))
    assert second.state["toy"].db["counters"]["c1"]["value"] == 5.0 and BASE == toy_db()


def test_a_forked_session_reads_the_shared_start_and_copies_it_on_its_first_write() -> None:
    shared = toy_db()
    copies = []

    def fork(db: dict) -> dict:
        copies.append(db)
        return toy_db()

    def start(context: ToolContext) -> Session:
        return Session(env=TOY, initial=shared, db=shared, fork=fork)

    get, add = (EnvTool(_tool(name).spec, TOY, "toy", start) for name in ("get_counter", "add"))
    context = ToolContext(task_id="a")
    asyncio.run(get.execute({"counter_id": "c1"}, context))
    assert context.state["toy"].db is shared and copies == []  # a read copies nothing
    asyncio.run(add.execute(ADD, context))
    asyncio.run(add.execute(ADD, context))
    assert copies == [shared] and context.state["toy"].db["counters"]["c1"]["value"] == 7.0
    assert shared == toy_db() and context.state["toy"].calls[0]["name"] == "get_counter"


def test_a_refusal_is_an_error_observation_and_is_logged() -> None:
    context = ToolContext(task_id="a")
    observation = asyncio.run(_tool("add").execute({**ADD, "amount": "x"}, context))
    assert observation.text == "Error: add: argument 'amount' must be a number, got string"
    assert observation.error == "add: argument 'amount' must be a number, got string"
    assert context.state["toy"].calls == [{"name": "add", "arguments": {**ADD, "amount": "x"}, "error": True}]


def test_checked_arguments_are_refused_before_the_session_and_not_logged() -> None:
    context = ToolContext(task_id="a")
    observation = asyncio.run(_tool("add", check_arguments=True).execute({**ADD, "amount": "x"}, context))
    assert observation.error == "tool 'add': argument 'amount' must be number, got string"
    assert "toy" not in context.state


def test_a_call_without_a_rollout_context_is_refused() -> None:
    observation = asyncio.run(_tool("get_counter").execute({"counter_id": "c1"}))
    assert observation.error == "tool 'get_counter' needs a rollout context to hold the domain's state"
