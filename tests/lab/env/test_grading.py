"""lab.env.grading: tau2's combined verdict, and the world's check on a rollout's end state."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from lab.env.grading import communicate_ok, criteria_of, outcome_of, state_check
from lab.env.replay import run_actions
from lab.env.state import Session
from tests.helpers.toy_environment import TOY, toy_db

UP = {"name": "add", "arguments": {"counter_id": "c1", "amount": 2, "mode": "up", "tags": []}}
DOWN = {"name": "add", "arguments": {"counter_id": "c2", "amount": 1, "mode": "down", "tags": []}}
READ = {"name": "get_counter", "arguments": {"counter_id": "c1"}}


def _task(task_id: str, actions: list[dict], **meta: object) -> SimpleNamespace:
    return SimpleNamespace(task_id=task_id, answer=actions, meta=meta)


def test_the_outcome_multiplies_only_the_judged_criteria_of_the_basis() -> None:
    criteria = {"db": True, "communicate": False, "actions": True, "nl": None}
    assert outcome_of(criteria, ["DB", "ACTION", "NL_ASSERTION"]) == 1.0  # nl not judged: left out
    assert outcome_of(criteria, None) == 0.0  # the default basis is DB and COMMUNICATE
    assert outcome_of({**criteria, "db": False}, ["DB"]) == 0.0


def test_criteria_leave_nl_assertions_unjudged_without_a_judge() -> None:
    task = _task("t", [UP], communicate_info=["7.0"], nl_assertions=["the agent was polite"])
    criteria = criteria_of(task, True, [UP], ["The counter is now 7.0."])
    assert criteria == {"db": True, "communicate": True, "actions": True, "nl": None}
    assert criteria_of(task, True, [READ], [])["actions"] is False


@given(st.text(alphabet="abc, ", min_size=1, max_size=8))
def test_a_message_that_states_the_info_communicates_it_whatever_its_case_and_commas(info: str) -> None:
    assert communicate_ok([info], [f"So: {info.upper().replace(',', '')}!"])


def test_the_world_check_wants_the_golden_state_and_no_other_write() -> None:
    base = toy_db()
    task = _task("world-1", [READ, UP])
    good = Session(env=TOY, initial=base, db=run_actions(TOY, base, [UP]), calls=[READ, UP])
    assert state_check(task, good) == (True, "final database matches the golden actions")
    missed = Session(env=TOY, initial=base, db=run_actions(TOY, base, []), calls=[READ])
    assert state_check(task, missed) == (False, "final database differs: counters/c1")
    refused_extra = Session(env=TOY, initial=base, db=good.db, calls=[READ, UP, DOWN])  # the toy refused DOWN
    assert state_check(task, refused_extra) == (False, "attempted a write the task does not call for: add")
