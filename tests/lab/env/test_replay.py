"""lab.env.replay: an end state rebuilt from writes only, the expected state from every action, once."""

from __future__ import annotations

from lab.env.replay import ExpectedStates, replay_writes, run_actions
from lab.env.state import canonical_hash
from tests.helpers.toy_environment import TOY, toy_db

UP = {"name": "add", "arguments": {"counter_id": "c1", "amount": 2, "mode": "up", "tags": []}}
TOO_FAR = {"name": "add", "arguments": {"counter_id": "c2", "amount": 1, "mode": "down", "tags": []}}
READ = {"name": "get_counter", "arguments": {"counter_id": "c1"}}


def test_only_successful_writes_change_the_replayed_state_and_the_start_is_untouched() -> None:
    db = toy_db()
    state = replay_writes(TOY, db, [READ, UP, TOO_FAR, {"name": "nope", "arguments": {}}, {"name": "add"}])
    assert state["counters"]["c1"]["value"] == 7.0 and state["counters"]["c2"] == db["counters"]["c2"]
    assert db == toy_db()


def test_the_expected_state_runs_reads_too_and_matches_the_replay_of_its_writes() -> None:
    db = toy_db()
    assert canonical_hash(run_actions(TOY, db, [READ, UP, READ])) == canonical_hash(replay_writes(TOY, db, [UP]))
    assert run_actions(TOY, db, [READ]) == db


def test_an_expected_state_is_computed_once_per_key() -> None:
    cache, runs = ExpectedStates(), []

    def compute() -> int:
        runs.append(1)
        return len(runs)

    assert [cache.get(("t1", "db"), compute), cache.get(("t1", "db"), compute), cache.get(("t2", "db"), compute)] == [1,
                                                                                                                      1,
                                                                                                                      2]
