"""Tests for lab.synth.tasks and build_domain: tau2 task shape, seeds, what the user is shown.

What a user would notice: 30 verified tasks per domain in well under a second or two, the same tasks
from the same seed, and the scenario in the text the simulated user reads (verification:
test_verify.py).
"""

from __future__ import annotations

import json
import time

import pytest

from lab.env.state import canonical_hash
from lab.errors import LabInputError
from lab.synth import DOMAINS, RECIPES, build_domain
from lab.synth.tasks import make_task, user_visible_text
from lab.synth.verify import FILTERS, verify_tasks

NAMES = sorted(DOMAINS)
INSTRUCTION_KEYS = {"domain", "reason_for_call", "known_info", "unknown_info", "task_instructions"}


def _writes(domain, task) -> list[dict]:
    return [a for a in task["evaluation_criteria"]["actions"] if domain.access(a["name"]) == "write"]


@pytest.mark.parametrize("name", NAMES)
def test_thirty_verified_tasks_quickly(name):
    start = time.perf_counter()
    domain, db, tasks, stats = build_domain(name, 30, seed=11)
    assert time.perf_counter() - start < 3.0
    assert len(tasks) == 30 == stats["tasks/kept"]
    assert stats["tasks/generated"] == 30 + sum(stats[f"filter/{f}"] for f in FILTERS)
    _, counts = verify_tasks(domain, db, tasks)
    assert counts["tasks/kept"] == 30  # kept tasks verify again from scratch


@pytest.mark.parametrize("name", NAMES)
def test_tau2_task_format(name, build):
    domain, _, tasks, stats = build(name)
    assert len({t["id"] for t in tasks}) == len(tasks)
    for task in tasks:
        assert set(task) == {"id", "description", "user_scenario", "initial_state", "evaluation_criteria"}
        assert task["initial_state"] is None
        assert set(task["user_scenario"]["instructions"]) == INSTRUCTION_KEYS
        assert task["user_scenario"]["instructions"]["domain"] == name
        criteria = task["evaluation_criteria"]
        assert criteria["env_assertions"] is None and criteria["nl_assertions"] is None
        assert criteria["reward_basis"] == (["DB", "COMMUNICATE"] if criteria["communicate_info"] else ["DB"])
        for k, action in enumerate(criteria["actions"]):
            assert action["action_id"] == f"{task['id']}_{k}" and action["name"] in domain.tools
            assert set(action["compare_args"]) <= set(action["arguments"])
        kinds = [domain.access(a["name"]) for a in criteria["actions"]]
        assert kinds[0] == "read"  # the chain starts by identifying the user
        assert "write" not in kinds or kinds.index("write") > 0
    templates = {key.split("/")[1].split("+")[0] for key in stats if key.startswith("template/")}
    assert len(templates) >= 5 and any("+" in key for key in stats)  # evolved tasks are among them
    assert any(len(_writes(domain, t)) >= 2 for t in tasks)  # multi-write tasks
    assert any(not _writes(domain, t) for t in tasks)  # refusals: the right chain writes nothing


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_tasks_other_seed_other_tasks(name, build):
    _, db, tasks, stats = build(name)
    _, db_again, tasks_again, stats_again = build_domain(name, 30, 0)
    assert json.dumps(tasks) == json.dumps(tasks_again) and stats == stats_again
    assert canonical_hash(db) == canonical_hash(db_again)
    _, db_other, tasks_other, _ = build(name, seed=1)
    assert canonical_hash(db_other) != canonical_hash(db) and json.dumps(tasks_other) != json.dumps(tasks)


def test_a_candidate_does_not_depend_on_how_many_are_made(build):
    domain, db, _, _ = build("bank")
    first = make_task(domain, RECIPES["bank"], db, 0, 5)
    assert first is not None and first.task == make_task(domain, RECIPES["bank"], db, 0, 5).task


def test_user_visible_text_holds_the_scenario(build):
    _, _, tasks, _ = build("restaurant")
    text = user_visible_text(tasks[0])
    assert tasks[0]["user_scenario"]["instructions"]["reason_for_call"][:30] in text


def test_unknown_domain_is_refused():
    with pytest.raises(LabInputError, match=r"unknown synthetic domain .casino. \(choose from bank, "):
        build_domain("casino", 3, 0)
