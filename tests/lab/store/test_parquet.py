"""Tests for lab.store.parquet.

Export one run to Parquet and import it into another store file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from lab.errors import LabInputError
from lab.records import (
    RunRecord,
    ScoreRecord,
    ScoringRecord,
    StepRecord,
    TaskRecord,
    TokenTrajectoryRecord,
    TrainMetricsRecord,
    TrajectoryRecord,
)
from lab.store import Store
from lab.store import queries as q
from lab.store.parquet import export_run, import_run


def _fill(store: Store, run_id: str, n: int, outcome: float = 1.0) -> None:
    store.write_run(RunRecord(run_id=run_id, kind="eval", benchmark="hle"))
    store.write_tasks([TaskRecord(benchmark="hle", task_id=f"t{i}", question=f"q{i}") for i in range(n + 2)])
    items = []
    for i in range(n):
        key = dict(run_id=run_id, task_id=f"t{i}")
        steps = [StepRecord(**key, turn=t, tool_name="search") for t in range(2)]
        tokens = TokenTrajectoryRecord(**key, prompt_ids=[7], completion_ids=[8, 9], mask=[1, 0], logprobs=[-0.1, 0.0])
        items.append((TrajectoryRecord(**key, n_turns=2, outcome=outcome), steps, tokens))
    store.write_trajectories(items)
    store.write_scoring(
        ScoringRecord(scoring_id=f"{run_id}-s", run_id=run_id, preference_json="{}"),
        [
            ScoreRecord(
                scoring_id=f"{run_id}-s", run_id=run_id, task_id="t0", sample_idx=0, train_step=0,
                reward=1, advantage=0.5, keep=True,
            )
        ],
    )
    store.finish_run(run_id)


def _frames(store: Store, run_id: str) -> dict[str, pd.DataFrame]:
    return {
        "run": pd.DataFrame([q.run(store, run_id).model_dump()]),
        "trajectories": q.trajectories_df(store, [run_id]),
        "steps": q.steps_df(store, run_id),
        "tokens": q.token_trajectories_df(store, run_id),
        "scorings": q.scorings_df(store, run_id),
        "scores": q.scores_df(store, f"{run_id}-s"),
    }


def _assert_same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], obj=name)


def test_round_trip_between_two_files(tmp_path: Path) -> None:
    source, target = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    _fill(source, "r1", 3)
    _fill(source, "other", 1)
    counts = export_run(source, "r1", tmp_path / "export")
    assert counts == {"runs": 1, "tasks": 3, "trajectories": 3, "steps": 6, "token_trajectories": 3, "scorings": 1,
                      "scores": 1,
                      "train_metrics": 0}
    assert json.loads((tmp_path / "export" / "manifest.json").read_text())["run_id"] == "r1"
    assert import_run(target, tmp_path / "export") == "r1"
    _assert_same(_frames(source, "r1"), _frames(target, "r1"))
    assert list(q.runs_df(target)["run_id"]) == ["r1"]  # only the exported run came across
    assert q.tasks_df(target)["task_id"].tolist() == ["t0", "t1", "t2"]  # only tasks the run used


def test_import_is_idempotent_and_replaces_a_different_copy(tmp_path: Path) -> None:
    source, target = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    _fill(source, "r1", 2, outcome=1.0)
    _fill(target, "r1", 4, outcome=0.0)  # the same run id, other content
    export_run(source, "r1", tmp_path / "export")
    import_run(target, tmp_path / "export")
    import_run(target, tmp_path / "export")
    _assert_same(_frames(source, "r1"), _frames(target, "r1"))
    assert len(q.tasks_df(target)) == 6  # tasks are shared between runs: upserted, never deleted


def test_import_rejects_a_folder_that_is_not_an_export(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.duckdb")
    with pytest.raises(LabInputError, match="not a folder"):
        import_run(store, tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LabInputError, match="manifest.json: missing"):
        import_run(store, tmp_path / "empty")
    _fill(store, "r1", 1)
    export_run(store, "r1", tmp_path / "export")
    (tmp_path / "export" / "steps.parquet").write_text("not parquet")
    with pytest.raises(LabInputError, match="steps.parquet: not a Parquet file"):
        import_run(store, tmp_path / "export")


def test_import_refuses_export_from_newer_schema(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.duckdb")
    _fill(store, "r1", 1)
    export_run(store, "r1", tmp_path / "export")
    manifest = tmp_path / "export" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "schema_version": 99}))
    with pytest.raises(LabInputError, match="version 99 is newer"):
        import_run(store, tmp_path / "export")


def test_export_of_unknown_run_names_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.duckdb")
    with pytest.raises(LabInputError, match="unknown run id 'ghost'"):
        export_run(store, "ghost", tmp_path / "export")
    assert not (tmp_path / "export").exists()


def test_a_training_run_travels_with_its_metrics_per_step(tmp_path: Path) -> None:
    """`train_metrics` (loss, reward, filtered shares per optimizer step) is part of a training run; an
    export written before it was exported still imports."""
    source, target = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    _fill(source, "train-1", 2)
    source.write_train_metrics([TrainMetricsRecord(run_id="train-1", step=s,
                                                   metrics_json=json.dumps({"reward/mean": s / 10}))
                                for s in (1, 2, 3)])
    source.write_train_metrics([TrainMetricsRecord(run_id="other", step=1)])
    assert export_run(source, "train-1", tmp_path / "export")["train_metrics"] == 3
    import_run(target, tmp_path / "export")
    pd.testing.assert_frame_equal(q.train_metrics_df(target, "train-1"), q.train_metrics_df(source, "train-1"))
    assert q.train_metrics_df(target, "other").empty
    (tmp_path / "export" / "train_metrics.parquet").unlink()  # as an older export
    import_run(target, tmp_path / "export")
    assert q.train_metrics_df(target, "train-1").empty  # replaced by the export's (absent) metrics
    _assert_same(_frames(source, "train-1"), _frames(target, "train-1"))


def test_a_round_protocol_run_travels_with_a_token_record_per_round_and_a_v6_export_still_imports(
        tmp_path: Path) -> None:
    """Token records are keyed by round (v7): every round crosses over; a token table exported before v7 has
    no `round_idx` or `valid` column, and its records (conversations) import as round -1."""
    source, target = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    _fill(source, "rounds", 1)
    key = dict(run_id="rounds", task_id="t0")
    rounds = [TokenTrajectoryRecord(**key, round_idx=r, prompt_ids=[r], completion_ids=[8], mask=[1],
                                    logprobs=[-0.5 * r], valid=r > 0) for r in range(3)]
    source.write_trajectory(TrajectoryRecord(**key, n_turns=3), [], rounds)
    assert export_run(source, "rounds", tmp_path / "export")["token_trajectories"] == 3
    import_run(target, tmp_path / "export")
    _assert_same(_frames(source, "rounds"), _frames(target, "rounds"))
    assert q.token_trajectories_df(target, "rounds").round_idx.tolist() == [0, 1, 2]
    _fill(source, "old", 2)
    export_run(source, "old", tmp_path / "old")
    tokens = pq.read_table(tmp_path / "old" / "token_trajectories.parquet")
    pq.write_table(tokens.drop_columns(["round_idx", "valid"]), tmp_path / "old" / "token_trajectories.parquet")
    import_run(target, tmp_path / "old")
    _assert_same(_frames(source, "old"), _frames(target, "old"))
