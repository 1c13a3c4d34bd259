"""Many writers, one store (`lab.store.spool`, `lab.store.merge`): separate OS processes append segments
while a reader reads and a compactor folds them in; sharded runs; merging other store files.

(The store's single-writer behaviours run on a spooled store too: `test_store.py`'s fixture.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab.errors import LabInputError
from lab.records import RunRecord, StepRecord, TrajectoryRecord
from lab.store import Store, queries
from lab.store.merge import merge_stores
from tests.conftest import REPO

HELPER = REPO / "tests" / "helpers" / "store_writer_process.py"


def _item(run_id: str, task_id: str, n_steps: int, outcome: float = 0.0):
    steps = [StepRecord(run_id=run_id, task_id=task_id, turn=t, tool_name="search") for t in range(n_steps)]
    return TrajectoryRecord(run_id=run_id, task_id=task_id, n_turns=n_steps, outcome=outcome), steps, None


def _steps_per_task(store: Store) -> dict[str, int]:
    return queries.steps_df(store, "proc").groupby("task_id").size().to_dict()


@pytest.mark.timeout(300)
def test_eight_writer_processes_lose_nothing_and_duplicate_nothing_while_a_reader_and_a_compactor_run(tmp_path):
    db = tmp_path / "orchestra.duckdb"
    store = Store(db)
    store.write_run(RunRecord(run_id="proc", kind="eval"))
    n = 60
    writers = [subprocess.Popen([sys.executable, str(HELPER), "spool", str(db), str(n), f"w{k}"],
                                stdout=subprocess.PIPE, text=True) for k in range(8)]
    counts, folded = [], 0
    while any(w.poll() is None for w in writers):
        counts.append(len(queries.trajectories_df(store)))  # a reader never fails, never sees a half segment
        folded += store.compact()  # and a compaction racing the writers loses nothing
    assert [w.wait() for w in writers] == [0] * 8
    folded += store.compact()
    trajectories = queries.trajectories_df(store)
    assert len(trajectories) == 8 * n and trajectories.task_id.is_unique
    assert set(_steps_per_task(store).values()) == {5} and len(_steps_per_task(store)) == 8 * n
    assert counts == sorted(counts), "a later read saw fewer trajectories than an earlier one"
    assert folded == 8 * n // 10 and not list((tmp_path / "orchestra.duckdb.spool").iterdir())


def test_a_rewritten_trajectory_is_replaced_whole_across_writers_and_after_compaction(tmp_path):
    db = tmp_path / "s.duckdb"
    first, second = Store(db, spool=True), Store(db, spool=True)
    first.write_trajectories([_item("r", "t1", 4), _item("r", "t2", 2)])
    second.write_trajectories([_item("r", "t1", 1, outcome=1.0)])  # later: replaces t1, its 4 steps included
    reader = Store(db)
    for moment in ("spooled", "compacted"):
        rows = queries.trajectories_df(reader).set_index("task_id")
        assert rows.outcome.to_dict() == {"t1": 1.0, "t2": 0.0}, moment
        assert queries.steps_df(reader, "r").groupby("task_id").size().to_dict() == {"t1": 1, "t2": 2}, moment
        reader.compact()


def test_a_compaction_cut_short_is_never_applied_twice(tmp_path):
    """Segments folded in but not yet deleted (a crash between the two) are skipped by the next compaction,
    so they cannot undo a write made since."""
    db = tmp_path / "s.duckdb"
    Store(db, spool=True).write_trajectories([_item("r", "t1", 3)])
    spool = tmp_path / "s.duckdb.spool"
    kept = tmp_path / "kept"
    shutil.copytree(spool, kept)
    store = Store(db)
    assert store.compact() == 1
    shutil.rmtree(spool)
    shutil.copytree(kept, spool)  # as if the deletion never happened
    store.write_trajectories([_item("r", "t1", 1, outcome=1.0)])  # a newer write of the same key, to the file
    assert queries.trajectories_df(store).outcome.tolist() == [1.0]
    assert store.compact() == 0
    assert queries.trajectories_df(store).outcome.tolist() == [1.0]
    assert not list(spool.iterdir())


def test_a_sharded_run_is_finished_only_when_every_shard_is(tmp_path):
    db = tmp_path / "s.duckdb"
    shards = [Store(db, spool=True) for _ in range(3)]
    for i, writer in enumerate(shards, start=1):
        writer.write_run(RunRecord(run_id="e", kind="eval"), shard=(i, 3))
    reader = Store(db)
    shards[0].finish_run("e", "finished", shard=(1, 3))
    shards[2].finish_run("e", "finished", shard=(3, 3))
    assert queries.run_status(reader, "e") == "running"
    shards[1].finish_run("e", "interrupted", shard=(2, 3))
    assert queries.run_status(reader, "e") == "interrupted"
    reader.compact()
    assert queries.run_status(reader, "e") == "interrupted"
    Store(db, spool=True).finish_run("e", "finished", shard=(2, 3))  # the resumed shard 2
    assert queries.run_status(reader, "e") == "finished"
    reader.compact()
    assert queries.run_status(reader, "e") == "finished" and queries.run(reader, "e").finished_at is not None


def _shard_store(path: Path, run_id: str, shard: tuple[int, int], tasks: list[str], config: str = "{}") -> Path:
    store = Store(path)
    store.write_run(RunRecord(run_id=run_id, kind="eval", config_json=config), shard=shard)
    store.write_trajectories([_item(run_id, t, 2) for t in tasks])
    store.finish_run(run_id, "finished", shard=shard)
    return path


def test_merging_shard_stores_gives_one_finished_run_with_every_trajectory_once(tmp_path):
    one = _shard_store(tmp_path / "1.duckdb", "e-abc", (1, 2), ["t1", "t3"])
    two = _shard_store(tmp_path / "2.duckdb", "e-abc", (2, 2), ["t2", "t4", "t3"])  # t3 ran twice
    target = Store(tmp_path / "all.duckdb")
    result = merge_stores(target, [one, two])
    assert result.finished_runs == ["e-abc"] and not result.incomplete_runs
    for _ in range(2):  # merging again changes nothing
        rows = queries.trajectories_df(target)
        assert sorted(rows.task_id) == ["t1", "t2", "t3", "t4"]
        assert len(queries.steps_df(target, "e-abc")) == 8
        assert queries.run_status(target, "e-abc") == "finished"
        merge_stores(target, [one, two])


def test_shards_that_ran_under_different_configs_or_counts_are_refused_before_anything_is_written(tmp_path):
    one = _shard_store(tmp_path / "1.duckdb", "e-aaa", (1, 2), ["t1"], '{"temperature": 0.7}')
    two = _shard_store(tmp_path / "2.duckdb", "e-bbb", (2, 2), ["t2"], '{"temperature": 0.5}')
    three = _shard_store(tmp_path / "3.duckdb", "e-aaa", (2, 3), ["t2"], '{"temperature": 0.7}')
    target = Store(tmp_path / "all.duckdb")
    with pytest.raises(LabInputError, match=r"different configs \(temperature: 0.7 vs 0.5\).*e-aaa.*e-bbb"):
        merge_stores(target, [one, two])
    with pytest.raises(LabInputError, match="run e-aaa: split into 2 shards in .*1.duckdb but 3 in .*3.duckdb"):
        merge_stores(target, [one, three])
    assert queries.trajectories_df(target).empty and not (tmp_path / "all.duckdb.spool").exists()


def test_a_writer_killed_mid_segment_leaves_nothing_a_reader_sees_and_compaction_clears_it_later(tmp_path):
    db = tmp_path / "s.duckdb"
    writer = Store(db, spool=True)
    writer.write_trajectories([_item("r", "t1", 2)])
    staging = tmp_path / "s.duckdb.spool" / ".tmp-00000000000000000001-host-1-000000"
    staging.mkdir()
    (staging / "trajectories.parquet").write_bytes(b"half a file")  # what a SIGKILL mid-write leaves
    store = Store(db)
    assert queries.trajectories_df(store).task_id.tolist() == ["t1"]
    store.compact()
    assert staging.exists(), "a staging folder may still be filling: left while recent"
    old = time.time() - 2 * 3600
    os.utime(staging, (old, old))
    store.compact()
    assert not staging.exists() and queries.trajectories_df(store).task_id.tolist() == ["t1"]
