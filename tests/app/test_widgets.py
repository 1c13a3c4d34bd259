"""The widgets the pages share (`app/widgets.py`): the store banner when there is no store, and the
pickers' default runs."""

from __future__ import annotations

import pandas as pd

from app.widgets import story_runs
from tests.helpers.dashboard import started


def test_a_missing_store_is_one_line_and_is_not_created(tmp_path, monkeypatch):
    monkeypatch.setenv("ORCHESTRA_DB", str(tmp_path / "none.duckdb"))
    at = started()
    assert not at.exception and "no store here yet" in at.info[0].value
    assert not (tmp_path / "none.duckdb").exists()


def test_pickers_open_on_the_demos_compared_systems_when_the_store_has_them():
    runs = pd.DataFrame([
        {"run_id": "t-1", "kind": "eval", "name": "trained", "started_at": 1},
        {"run_id": "c-old", "kind": "eval", "name": "cascade", "started_at": 2},
        {"run_id": "x", "kind": "eval", "name": "trained-cost-t10", "started_at": 3},
        {"run_id": "c-new", "kind": "eval", "name": "cascade", "started_at": 4},
        {"run_id": "train", "kind": "train", "name": "strongest", "started_at": 5},
    ])
    assert story_runs(runs) == ["c-new", "t-1"]  # the demo's order, the newest of each name, no sweep or train run
    assert story_runs(runs.assign(name="other")) == []
