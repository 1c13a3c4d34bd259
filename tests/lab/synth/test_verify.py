"""Tests for lab.synth.verify: golden actions replay and pass the DB check, wrong trajectories fail it, the filters drop
what they should.
"""

from __future__ import annotations

import copy
import functools
import json

import pytest

from lab.env.replay import replay_writes
from lab.env.state import canonical_hash
from lab.synth import DOMAINS
from lab.synth.verify import db_check, run_golden, verify_task, verify_tasks

NAMES = sorted(DOMAINS)


def _writes(domain, task) -> list[dict]:
    return [a for a in task["evaluation_criteria"]["actions"] if domain.access(a["name"]) == "write"]


@pytest.mark.parametrize("name", NAMES)
def test_golden_replay_verifies(name, build):
    domain, db, tasks, _ = build(name)
    start = canonical_hash(db)
    for task in tasks:
        run = run_golden(domain, db, task, start)
        assert not run.errors and not run.idle_writes and run.gold_hash == canonical_hash(run.db)
        actions = task["evaluation_criteria"]["actions"]
        assert canonical_hash(replay_writes(domain, db, actions)) == run.gold_hash
    refused_extra = [{"name": "transfer_funds" if name == "bank" else "cancel_order", "arguments": {}}]
    assert db_check(domain, db, task, actions + refused_extra)  # a refused write changes nothing
    domain.validate(run.db)


def _other_id(db: dict, value: str) -> str | None:
    """Another id of the same table as `value`, if `value` is an id."""
    for table in db.values():
        if value in table:
            return next(key for key in sorted(table) if key != value)
    return None


def _wrong_value(domain, action: dict) -> dict | None:
    """The action with its first non-id argument changed (a number moved, another enum value, ...)."""
    schema = domain.tools[action["name"]].schema["parameters"]["properties"]
    for argument, value in action["arguments"].items():
        if argument.endswith("_id"):
            continue
        spec = schema[argument]
        if "enum" in spec:
            changed = next(v for v in spec["enum"] if v != value)
        elif isinstance(value, (int, float)):
            changed = value + (100 if argument in ("daily_limit", "points") else 1)
        elif isinstance(value, list):
            changed = value[:-1] if len(value) > 1 else value * 2
        else:
            changed = value + "0"
        return {**action, "arguments": {**action["arguments"], argument: changed}}
    return None


@pytest.mark.parametrize("name", NAMES)
def test_wrong_trajectories_fail_the_db_check(name, build):
    domain, db, tasks, _ = build(name)
    tried = {"skip": 0, "value": 0, "record": 0}
    start = canonical_hash(db)
    for task in tasks:
        actions = task["evaluation_criteria"]["actions"]
        gold = verify_task(domain, db, task, start).gold_hash
        check = functools.partial(db_check, domain, db, task, gold_hash=gold)
        writes = [k for k, a in enumerate(actions) if domain.access(a["name"]) == "write"]
        for k in writes:
            assert not check(actions[:k] + actions[k + 1:]), (task["id"], "skip")
            tried["skip"] += 1
            wrong = _wrong_value(domain, actions[k])
            if wrong is not None:
                assert not check([*actions[:k], wrong, *actions[k + 1:]]), (task["id"], wrong)
                tried["value"] += 1
            id_argument = next(a for a in actions[k]["arguments"] if a.endswith("_id"))
            other = _other_id(db, actions[k]["arguments"][id_argument])
            moved = copy.deepcopy(actions[k])
            moved["arguments"][id_argument] = other
            assert not check([*actions[:k], moved, *actions[k + 1:]]), (task["id"], moved)
            tried["record"] += 1
        if not writes:  # a refusal: its reads pass, and one extra write fails it
            assert check(actions)
            assert not check(actions + [next(a for t in tasks for a in t["evaluation_criteria"]["actions"]
                                             if domain.access(a["name"]) == "write")])
    assert min(tried.values()) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_communicate_info_needs_the_tools(name, build):
    domain, db, tasks, _ = build(name)
    with_info = [t for t in tasks if t["evaluation_criteria"]["communicate_info"]]
    assert len(with_info) >= 3
    for task in with_info:
        visible = json.dumps(task["user_scenario"]) + json.dumps(task["description"])
        reads = run_golden(domain, db, task).reads
        for info in task["evaluation_criteria"]["communicate_info"]:
            assert info not in visible and any(info in text for text in reads), (task["id"], info)


def test_filters_drop_what_they_should(build):
    domain, db, tasks, _ = build("bank")
    task = next(t for t in tasks if _writes(domain, t))
    assert verify_task(domain, db, task).kept

    broken = copy.deepcopy(task)
    broken["evaluation_criteria"]["actions"].append({"action_id": "x", "name": "get_card_details",
                                                     "arguments": {"card_id": "CRD-99999"}, "compare_args": None})
    verdict = verify_task(domain, db, broken)
    assert verdict.failed_filter == "golden_runs" and "CRD-99999" in verdict.golden_errors[0]

    idle = copy.deepcopy(task)
    idle["evaluation_criteria"]["actions"] = [a for a in idle["evaluation_criteria"]["actions"]
                                              if domain.access(a["name"]) != "write"]
    assert verify_task(domain, db, idle).failed_filter == "needs_tools"

    told = copy.deepcopy(idle)
    told["evaluation_criteria"]["communicate_info"] = [told["user_scenario"]["instructions"]["known_info"].split()[-1]]
    assert verify_task(domain, db, told).failed_filter == "communicate_from_reads"  # the user already knows it
    told["evaluation_criteria"]["communicate_info"] = ["99999.99"]
    assert verify_task(domain, db, told).unreachable_info == ["99999.99"]  # no read shows it

    idle_write = copy.deepcopy(task)
    card = next(c for c in db["cards"].values() if c["status"] == "active")
    same_limit = {"card_id": card["card_id"], "daily_limit": card["daily_limit"]}
    idle_write["evaluation_criteria"]["actions"].append(
        {"action_id": "same", "name": "set_card_daily_limit", "arguments": same_limit, "compare_args": None})
    verdict = verify_task(domain, db, idle_write)
    assert verdict.failed_filter == "writes_count" and verdict.idle_writes == ["same"]

    verdicts, counts = verify_tasks(domain, db, [task, broken, idle, told, idle_write])
    assert [v.kept for v in verdicts] == [True, False, False, False, False]
    assert counts == {"tasks/generated": 5, "tasks/kept": 1, "filter/golden_runs": 1, "filter/needs_tools": 1,
                      "filter/writes_count": 1, "filter/communicate_from_reads": 1}
