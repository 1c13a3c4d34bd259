"""The store under real concurrency and real crashes: separate OS processes, SIGKILL, a left-over WAL."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lab.records import RunRecord
from lab.store import Store, StoreLockedError
from lab.store.queries import runs_df, steps_df, trajectories_df
from tests.conftest import REPO

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
    while writer.poll() is None:
        counts.append(len(trajectories_df(store)))  # must not raise: the lock is waited out
    counts.append(len(trajectories_df(store)))
    assert writer.returncode == 0
    assert writer.stdout.read().splitlines()[-1] == "done"
    assert counts == sorted(counts), "a later read saw fewer trajectories than an earlier one"
    assert counts[-1] == n
    assert len(set(counts)) > 2, f"reads never interleaved with writes: {counts}"


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
