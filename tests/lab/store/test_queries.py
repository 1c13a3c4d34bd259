"""Tests for lab.store.queries.

Named queries users reach from the CLI and notebooks: run references by name, linked evaluations.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from lab.errors import LabInputError
from lab.records import RunRecord
from lab.store import Store, queries

T0 = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store(tmp_path / "runs.duckdb")
    for minutes, run_id, name, config in [
        (0, "cascade-aaa111", "cascade", {}),
        (5, "cascade-bbb222", "cascade", {}),            # the same name, redone later
        (1, "trained-ccc333", "trained", {}),
        (2, "cpu-tiny-ddd444", "cpu-tiny", {}),
        (3, "cpu-tiny-ddd444-eval-1", "cpu-tiny-ddd444-eval", {"train_run_id": "cpu-tiny-ddd444", "train_step": 12}),
        (4, "cpu-tiny-ddd444-eval-2", "cpu-tiny-ddd444-eval", {"train_run_id": "cpu-tiny-ddd444", "train_step": 24}),
    ]:
        store.write_run(RunRecord(run_id=run_id, kind="train" if name == "cpu-tiny" else "eval", name=name,
                                  config_json=json.dumps(config), started_at=T0 + timedelta(minutes=minutes)))
    return store


def test_a_run_is_found_by_id_by_newest_name_or_by_unique_prefix(store):
    assert queries.resolve_run_id(store, "cascade-aaa111") == "cascade-aaa111"
    assert queries.resolve_run_id(store, "cascade") == "cascade-bbb222"
    assert queries.resolve_run_id(store, "trained-c") == "trained-ccc333"
    assert queries.resolve_run_id(store, "cpu-tiny") == "cpu-tiny-ddd444"   # a name beats the prefix it also is


def test_an_unknown_or_ambiguous_run_is_one_clear_error(store):
    with pytest.raises(LabInputError, match="unknown run 'oracle'"):
        queries.resolve_run_id(store, "oracle")
    with pytest.raises(LabInputError, match="ambiguous: 2 run ids start with it"):
        queries.resolve_run_id(store, "cascade-")


def test_the_evaluations_a_training_run_made_come_by_step(store):
    linked = queries.linked_evals_df(store, "cpu-tiny-ddd444")
    assert list(linked.run_id) == ["cpu-tiny-ddd444-eval-1", "cpu-tiny-ddd444-eval-2"]
    assert list(linked.train_step) == [12, 24]
    assert queries.linked_evals_df(store, "trained-ccc333").empty


def test_a_runs_status_is_none_until_it_is_logged(store):
    assert queries.run_status(store, "ghost") is None
    assert queries.run_status(store, "cascade-aaa111") == "running"
    store.finish_run("cascade-aaa111")
    assert queries.run_status(store, "cascade-aaa111") == "finished"
