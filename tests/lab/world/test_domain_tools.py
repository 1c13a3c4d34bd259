"""Tests for lab.world.domain_tools.

Bookshop tools through the Tool interface, per-rollout state, and the world's database check.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from lab.env.grading import state_check
from lab.graders import grade
from lab.tools.base import Tool, ToolContext
from lab.world.build import generate
from lab.world.domain_tools import DOMAIN, make_domain_tools, replayed_session
from lab.world.tasks import WorldSize


@pytest.fixture(scope="module")
def shop():
    _, tasks, db = generate(0, WorldSize.small())
    return [t for t in tasks if t.family == "tau2"], db


def session_of(context):
    return context.state[DOMAIN]


def _run(tools, actions, context):
    async def go():
        return [await tools[a["name"]].execute(a["arguments"], context) for a in actions]

    return asyncio.run(go())


def test_tools_follow_the_tool_protocol(shop):
    _, db = shop
    tools = make_domain_tools(db)
    assert len(tools) >= 8
    for name, tool in tools.items():
        assert isinstance(tool, Tool) and tool.spec.name == name
        assert tool.spec.openai_schema()["function"]["parameters"]["additionalProperties"] is False


def test_bad_arguments_and_unknown_ids_are_error_observations(shop):
    _, db = shop
    tools = make_domain_tools(db)
    ctx = ToolContext(task_id="t")
    missing, wrong_type, unknown_field, no_order, bad_enum = _run(tools, [
        {"name": "get_order", "arguments": {}},
        {"name": "get_order", "arguments": {"order_id": 5}},
        {"name": "get_order", "arguments": {"order_id": "#O05000", "verbose": True}},
        {"name": "get_order", "arguments": {"order_id": "#O99999"}},
        {"name": "cancel_order", "arguments": {"order_id": "#O05000", "reason": "bored"}},
    ], ctx)
    assert "missing required argument 'order_id'" in missing.error
    assert "must be string" in wrong_type.error
    assert "unknown argument 'verbose'" in unknown_field.error
    assert "no order with id '#O99999'" in no_order.error
    assert "must be one of" in bad_enum.error
    no_context = asyncio.run(tools["get_order"].execute({"order_id": "#O05000"}))
    assert no_context.error and "context" in no_context.error


def test_policy_refuses_cancelling_a_shipped_order(shop):
    _, db = shop
    shipped = next(o for o in db["orders"].values() if o["status"] in ("shipped", "processing"))
    tools = make_domain_tools(db)
    ctx = ToolContext(task_id="t")
    (obs,) = _run(tools, [{"name": "cancel_order",
                           "arguments": {"order_id": shipped["order_id"], "reason": "no longer needed"}}], ctx)
    assert "only pending orders can be cancelled" in obs.error
    assert session_of(ctx).db == db


def test_rollouts_have_separate_databases_and_base_is_untouched(shop):
    tasks, db = shop
    task = next(t for t in tasks if t.meta["template"] == "cancel_by_id")
    before = json.dumps(db, sort_keys=True)
    tools = make_domain_tools(db)
    a, b = ToolContext(task_id="a"), ToolContext(task_id="b")
    _run(tools, task.answer, a)
    order_id = task.answer[-1]["arguments"]["order_id"]
    assert session_of(a).db["orders"][order_id]["status"] == "cancelled"
    (seen_by_b,) = _run(tools, [{"name": "get_order", "arguments": {"order_id": order_id}}], b)
    assert json.loads(seen_by_b.text)["status"] == "pending"
    assert json.dumps(db, sort_keys=True) == before
    assert [c["name"] for c in session_of(a).calls] == [x["name"] for x in task.answer]


def test_golden_actions_pass_and_wrong_actions_fail_for_every_template(shop):
    tasks, db = shop
    assert {t.meta["template"] for t in tasks} >= {"cancel_by_id", "return_by_title", "refused_cancel",
                                                    "cancel_and_return"}
    tools = make_domain_tools(db)
    for task in tasks:
        good = ToolContext(task_id=task.task_id, task=task)
        observations = _run(tools, task.answer, good)
        assert all(o.error is None for o in observations), task.task_id
        assert state_check(task, session_of(good))[0], task.task_id
        assert grade(task, "Done.", good).correct

        # A wrong sequence: the right customer lookup, then cancelling their first pending order that the
        # golden actions leave alone (or, if they cancel it, changing nothing at all).
        bad = ToolContext(task_id=task.task_id, task=task)
        cid = task.meta["customer_id"]
        pending = sorted(o["order_id"] for o in db["orders"].values()
                         if o["customer_id"] == cid and o["status"] == "pending")
        golden_cancels = {a["arguments"].get("order_id") for a in task.answer if a["name"] == "cancel_order"}
        extra = [o for o in pending if o not in golden_cancels]
        wrong = task.answer[:1] + ([{"name": "cancel_order", "arguments": {"order_id": extra[0],
                                                                          "reason": "no longer needed"}}]
                                   if extra else [])
        if not extra and all(a["name"].startswith(("find", "get", "list")) for a in task.answer):
            continue  # a refused request with no other pending order: doing nothing is right
        _run(tools, wrong, bad)
        ok, detail = state_check(task, session_of(bad))
        assert not ok and ("differs" in detail or "attempted a write" in detail), task.task_id
        assert not grade(task, "Done.", bad).correct


def test_a_forbidden_write_the_shop_refused_still_fails_the_task(shop):
    tasks, db = shop
    task = next(t for t in tasks if t.meta["template"] == "refused_cancel")
    order_id = next(a["arguments"]["order_id"] for a in task.answer if a["name"] == "get_order")
    context = ToolContext(task_id=task.task_id, task=task)
    observations = _run(make_domain_tools(db), [*task.answer, {"name": "cancel_order", "arguments": {
        "order_id": order_id, "reason": "no longer needed"}}], context)
    assert observations[-1].error  # the shop refused it, so the database is unchanged
    ok, detail = state_check(task, session_of(context))
    assert not ok and detail == "attempted a write the task does not call for: cancel_order"


def test_action_list_answers_are_replayed_against_the_base_db(shop):
    tasks, db = shop
    task = next(t for t in tasks if t.meta["template"] == "return_by_title")
    assert grade(task, "", replayed_session(db, task.answer)).correct
    assert not grade(task, "", replayed_session(db, task.answer[:-1])).correct
    assert not grade(task, task.answer).correct  # nothing to check against
    assert DOMAIN == "bookshop"
