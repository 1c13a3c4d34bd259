"""Tests for lab.store.store.

Writing to the store and reading back through the named queries.

Also the store under real concurrency and real crashes: separate OS processes
(`tests/helpers/store_writer_process.py`), SIGKILL, a left-over WAL, a lock held past its deadline.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from lab.errors import LabInputError
from lab.records import (
    RunRecord,
    ScoreRecord,
    ScoringRecord,
    StepRecord,
    TaskRecord,
    TokenTrajectoryRecord,
    TrajectoryRecord,
)
from lab.store import Store, StoreLockedError
from lab.store import queries as q
from lab.store.queries import runs_df, steps_df, trajectories_df
from tests.conftest import REPO


@pytest.fixture(params=["file", "spool"])
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    """Every behaviour below holds for a store written directly and for one of many writers (`spool=True`),
    whose writes append segments that reads see at once."""
    return Store(tmp_path / "orchestra.duckdb", spool=request.param == "spool")


def _trajectory(run_id: str, task_id: str, tools: list[str], sample_idx: int = 0, outcome: float = 1.0):
    """A trajectory calling `tools` in turn, then answering; with tokens."""
    key = dict(run_id=run_id, task_id=task_id, sample_idx=sample_idx)
    steps = [StepRecord(**key, turn=t, tool_name=name, cost_usd=0.01) for t, name in enumerate(tools)]
    steps.append(StepRecord(**key, turn=len(tools), kind="answer", observation="42"))
    counts = {name: tools.count(name) for name in tools}  # as the engine counts executed calls
    trajectory = TrajectoryRecord(**key, n_turns=len(steps), outcome=outcome, final_answer="42",
                                  tool_counts_json=json.dumps(counts))
    tokens = TokenTrajectoryRecord(
        **key, prompt_ids=[1, 2], completion_ids=[3, 4, 5], mask=[1, 0, 1], logprobs=[-0.5, 0.0, -1.25]
    )
    return trajectory, steps, tokens


def test_run_upsert_finish_and_lookup(store: Store) -> None:
    store.write_run(RunRecord(run_id="r1", kind="eval", name="first"))
    store.write_run(RunRecord(run_id="r1", kind="eval", name="renamed"))
    store.finish_run("r1", "failed")
    run = q.run(store, "r1")
    assert (run.name, run.status) == ("renamed", "failed")
    assert run.finished_at is not None and run.finished_at >= run.started_at
    assert list(q.runs_df(store)["run_id"]) == ["r1"]


def test_runs_df_lists_newest_first(store: Store) -> None:
    older = RunRecord(run_id="old", kind="eval")
    store.write_run(older)
    store.write_run(RunRecord(run_id="new", kind="train",
                              started_at=older.started_at.replace(year=older.started_at.year + 1)))
    assert list(q.runs_df(store)["run_id"]) == ["new", "old"]


def test_unknown_run_id_names_id_and_store(store: Store) -> None:
    with pytest.raises(LabInputError, match=rf"unknown run id 'nope' in {store.path}"):
        q.run(store, "nope")
    with pytest.raises(LabInputError, match="unknown run id 'nope'"):
        store.finish_run("nope")
    store.write_run(RunRecord(run_id="r1", kind="eval"))
    with pytest.raises(LabInputError, match="'done' is not one of"):
        store.finish_run("r1", "done")  # type: ignore[arg-type]


def test_tasks_upsert_and_filter_by_benchmark(store: Store) -> None:
    store.write_tasks([TaskRecord(benchmark="hle", task_id="a", question="old"),
                       TaskRecord(benchmark="frames", task_id="a")])
    store.write_tasks([TaskRecord(benchmark="hle", task_id="a", question="new"),
                       TaskRecord(benchmark="hle", task_id="b")])
    assert len(q.tasks_df(store)) == 3
    hle = q.tasks_df(store, "hle")
    assert list(hle["task_id"]) == ["a", "b"]
    assert hle.iloc[0]["question"] == "new"


def test_trajectory_round_trip_with_steps_and_tokens(store: Store) -> None:
    trajectory, steps, tokens = _trajectory("r1", "t1", ["search", "code"])
    store.write_trajectory(trajectory, steps, tokens)
    row = q.trajectories_df(store).iloc[0]
    assert (row["task_id"], row["n_turns"], row["final_answer"], bool(row["format_ok"])) == ("t1", 3, "42", True)
    assert row["reward"] != row["reward"]  # NULL reward reads back as NaN, not 0
    assert list(q.steps_df(store, "r1")["kind"]) == ["tool", "tool", "answer"]
    tok = q.token_trajectories_df(store, "r1").iloc[0]
    assert list(tok["completion_ids"]) == [3, 4, 5]
    assert list(tok["mask"]) == [1, 0, 1]
    assert list(tok["logprobs"]) == [-0.5, 0.0, -1.25]


def test_rewriting_a_trajectory_replaces_it_whole(store: Store) -> None:
    store.write_trajectory(*_trajectory("r1", "t1", ["search", "search", "code"], outcome=0.0))
    trajectory, steps, _ = _trajectory("r1", "t1", ["math"], outcome=1.0)
    store.write_trajectory(trajectory, steps)  # no tokens this time: the old ones must go too
    store.write_trajectory(trajectory, steps)  # and again: idempotent
    assert q.trajectories_df(store)["outcome"].tolist() == [1.0]
    assert q.steps_df(store, "r1")["tool_name"].tolist()[:1] == ["math"]
    assert len(q.steps_df(store, "r1")) == 2
    assert q.token_trajectories_df(store, "r1").empty


def test_a_round_protocol_rollout_stores_one_token_record_per_round_and_rewrites_them_all(store: Store) -> None:
    trajectory, steps, tokens = _trajectory("r1", "t1", ["search", "code"])
    rounds = [tokens.model_copy(update={"round_idx": r, "prompt_ids": [r], "valid": r != 1}) for r in (2, 0, 1)]
    store.write_trajectory(trajectory, steps, rounds)
    stored = q.token_trajectories_df(store, "r1")
    assert stored.round_idx.tolist() == [0, 1, 2]  # in round order, whatever order they were written in
    assert [list(p) for p in stored.prompt_ids] == [[0], [1], [2]] and stored.valid.tolist() == [True, False, True]
    store.write_trajectory(trajectory, steps, rounds[:1])  # rewritten with fewer rounds: the others go
    assert q.token_trajectories_df(store, "r1").round_idx.tolist() == [2]
    store.write_trajectory(trajectory, steps, tokens)  # a conversation's one record: round -1, no validity
    row = q.token_trajectories_df(store, "r1").iloc[0]
    assert row.round_idx == -1 and pd.isna(row.valid)
    with pytest.raises(ValueError, match="share a round_idx"):
        store.write_trajectory(trajectory, steps, [rounds[0], rounds[0]])


def test_failed_write_rolls_back_and_keeps_the_previous_version(store: Store) -> None:
    store.write_trajectory(*_trajectory("r1", "t1", ["search"], outcome=0.0))
    trajectory, steps, tokens = _trajectory("r1", "t1", ["code", "math"], outcome=1.0)
    steps[1] = steps[1].model_copy(update={"turn": 0})  # two steps with one (turn, call_idx) key
    other = _trajectory("r1", "t2", ["code"])
    with pytest.raises(duckdb.ConstraintException):
        store.write_trajectories([other, (trajectory, steps, tokens)])
    assert q.trajectories_df(store)["task_id"].tolist() == ["t1"]  # t2 of the same batch is gone too
    assert q.trajectories_df(store)["outcome"].tolist() == [0.0]
    assert q.steps_df(store, "r1")["tool_name"].fillna("-").tolist() == ["search", "-"]


def test_steps_of_another_trajectory_are_rejected(store: Store) -> None:
    trajectory, _, _ = _trajectory("r1", "t1", [])
    _, foreign_steps, _ = _trajectory("r1", "t2", ["search"])
    with pytest.raises(ValueError, match="t2"):
        store.write_trajectory(trajectory, foreign_steps)
    assert q.trajectories_df(store).empty


def test_batch_write_last_duplicate_wins_and_resume_keys(store: Store) -> None:
    batch = [_trajectory("r1", f"t{i}", ["search"] * i, sample_idx=i % 2) for i in range(16)]
    batch.append(_trajectory("r1", "t3", ["code"], sample_idx=1, outcome=0.5))
    batch.append(_trajectory("r2", "t0", ["code"]))
    store.write_trajectories(batch)
    assert len(q.trajectories_df(store, ["r1"])) == 16
    assert len(q.trajectories_df(store)) == 17
    assert q.trajectories_df(store, []).empty
    assert q.steps_df(store, "r1", "t3")["tool_name"].fillna("-").tolist() == ["code", "-"]
    assert store.completed_keys("r1") == {(f"t{i}", i % 2, 0) for i in range(16)}
    assert store.completed_keys("unknown") == set()


def test_steps_df_narrows_by_task_and_sample(store: Store) -> None:
    samples = [_trajectory("r1", "t1", ["a"], sample_idx=s) for s in range(3)]
    store.write_trajectories([*samples, _trajectory("r1", "t2", ["b"])])
    assert len(q.steps_df(store, "r1")) == 8
    assert len(q.steps_df(store, "r1", task_id="t1")) == 6
    picked = q.steps_df(store, "r1", task_id="t1", sample_idx=2)
    assert picked["sample_idx"].tolist() == [2, 2]
    assert picked["turn"].tolist() == [0, 1]


def test_tool_calls_counts_per_tool_per_trajectory(store: Store) -> None:
    store.write_trajectories(
        [_trajectory("r1", "t1", ["search", "code", "search"]), _trajectory("r1", "t2", []),
         _trajectory("r2", "t1", ["math"])]
    )
    calls = q.tool_calls_df(store, ["r1"])
    # the reward's own numbers (tool_counts_json), so report and reward can never disagree
    assert calls[["task_id", "tool_name", "n_calls"]].values.tolist() == [["t1", "code", 1], ["t1", "search", 2]]
    assert set(q.tool_calls_df(store, ["r1", "r2"])["run_id"]) == {"r1", "r2"}


def test_cut_rollouts_are_no_result_and_are_run_again(store: Store) -> None:
    done, cut = _trajectory("r1", "t1", ["search"]), _trajectory("r1", "t2", ["search"])
    cut[0].status, cut[0].outcome = "cut", 0.0
    store.write_trajectories([done, cut])
    assert store.completed_keys("r1") == {("t1", 0, 0)}  # a resume runs t2 again
    assert q.trajectories_df(store, ["r1"]).task_id.tolist() == ["t1"]
    assert q.trajectories_df(store, ["r1"], include_cut=True).task_id.tolist() == ["t1", "t2"]
    assert q.tool_calls_df(store, ["r1"]).task_id.tolist() == ["t1"]


def test_scoring_rewrite_replaces_its_scores(store: Store) -> None:
    scoring = ScoringRecord(scoring_id="s1", run_id="r1", preference_json='{"cost": 1}')
    scores = [
        ScoreRecord(scoring_id="s1", run_id="r1", task_id=f"t{i}", sample_idx=0, train_step=0, reward=i, advantage=0.0,
                    keep=True)
        for i in range(3)
    ]
    store.write_scoring(scoring, scores)
    store.write_scoring(scoring.model_copy(update={"note": "again"}), scores[:1])
    assert q.scorings_df(store, "r1")["note"].tolist() == ["again"]
    assert q.scores_df(store, "s1")["task_id"].tolist() == ["t0"]
    with pytest.raises(ValueError, match="s2"):
        store.write_scoring(scoring, [scores[0].model_copy(update={"scoring_id": "s2"})])


def test_empty_store_queries_return_frames_with_columns(store: Store) -> None:
    assert list(q.trajectories_df(store).columns) == list(TrajectoryRecord.model_fields)
    assert list(q.steps_df(store, "r1").columns) == list(StepRecord.model_fields)
    assert q.runs_df(store).empty and q.tasks_df(store).empty and q.tool_calls_df(store, ["r1"]).empty


HELPER = REPO / "tests" / "helpers" / "store_writer_process.py"


def _start(*args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HELPER), *map(str, args)],
        stdout=subprocess.PIPE,
        stdin=stdin,
        text=True,
    )


def _committed_until(proc: subprocess.Popen[str], k: int) -> set[int]:
    """Read the writer's "committed I" lines until K arrived (readline returns '' if it died)."""
    committed: set[int] = set()
    while len(committed) < k:
        line = proc.stdout.readline()
        assert line, f"writer exited early with code {proc.wait()}"
        committed.add(int(line.split()[1]))
    return committed


def _kill_and_collect(proc: subprocess.Popen[str], committed: set[int]) -> set[int]:
    """SIGKILL the writer, then add any commit it reported before dying."""
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    return committed | {int(line.split()[1]) for line in rest.splitlines() if line.startswith("committed")}


def _assert_whole(store: Store, committed: set[int]) -> None:
    """Every reported commit is there, and every stored trajectory has all its steps."""
    trajectories = trajectories_df(store)
    stored = {int(task_id.split("-")[1]) for task_id in trajectories["task_id"]}
    assert committed <= stored
    steps_per_task = steps_df(store, "proc").groupby("task_id").size()
    for task_id, n_turns in zip(trajectories["task_id"], trajectories["n_turns"]):
        assert steps_per_task.get(task_id, 0) == n_turns == 5, task_id


@pytest.mark.timeout(60)
def test_reader_never_fails_while_another_process_writes(tmp_path: Path) -> None:
    db = tmp_path / "orchestra.duckdb"
    store = Store(db)
    n = 15
    writer = _start("write", db, n)
    counts = []
    for line in writer.stdout:  # a read after each commit the writer reports, while it goes on writing
        if line.startswith("committed"):
            committed = int(line.split()[1]) + 1
            counts.append(len(trajectories_df(store)))  # must not raise: the lock is waited out
            assert counts[-1] >= committed, "a read missed a commit the writer had reported"
    assert writer.wait() == 0
    counts.append(len(trajectories_df(store)))
    assert counts == sorted(counts), "a later read saw fewer trajectories than an earlier one"
    assert counts[-1] == n and len(counts) == n + 1


@pytest.mark.timeout(60)
def test_sigkill_mid_run_keeps_every_committed_trajectory_whole(tmp_path: Path) -> None:
    db = tmp_path / "orchestra.duckdb"
    writer = _start("write", db, 1_000_000)
    committed = _kill_and_collect(writer, _committed_until(writer, 8))
    store = Store(db)
    _assert_whole(store, committed)
    assert len(trajectories_df(store)) >= 8


@pytest.mark.timeout(60)
def test_sigkill_with_commits_only_in_the_wal_reopens_and_keeps_them(tmp_path: Path) -> None:
    db = tmp_path / "orchestra.duckdb"
    writer = _start("write", db, 1_000_000, "--pin")
    committed = _kill_and_collect(writer, _committed_until(writer, 8))
    assert Path(f"{db}.wal").exists(), "expected the killed writer to leave its WAL behind"
    store = Store(db)  # read-only open replays the WAL
    _assert_whole(store, committed)
    # A new writer checkpoints the WAL and carries on.
    store.write_run(RunRecord(run_id="after", kind="eval"))
    assert not Path(f"{db}.wal").exists()
    assert set(runs_df(store)["run_id"]) == {"proc", "after"}


@pytest.mark.timeout(60)
def test_lock_held_past_the_deadline_names_the_file_and_holder(tmp_path: Path) -> None:
    db = tmp_path / "orchestra.duckdb"
    store = Store(db, timeout_s=0.5)
    holder = _start("hold", db, stdin=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(StoreLockedError, match=rf"{db}.*process {holder.pid}") as caught:
            trajectories_df(store)
        assert "\n" not in str(caught.value)
        with pytest.raises(StoreLockedError):
            store.completed_keys("proc")
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert trajectories_df(store).empty  # released: reads work again
