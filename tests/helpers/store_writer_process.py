"""Helper process for the store's multi-process tests (run as a script, not collected by pytest).

    python store_writer_process.py write DB N [--pin]   # N trajectories of 5 steps, one transaction each;
                                                        # prints "committed I" after each commit returns
    python store_writer_process.py hold DB              # hold DB open read-write until stdin closes
    python store_writer_process.py spool DB N NAME      # N trajectories into the spool, tasks NAME-00000..,
                                                        # in batches of 10 (one segment each)

--pin keeps one extra read-write connection open for the whole run, as a notebook holding a
connection would. The store's own connections then share that database instance, so closing them
does not checkpoint and committed trajectories stay in the .wal file: the crash test needs that.
"""

from __future__ import annotations

import sys

import duckdb

from lab.records import RunRecord, StepRecord, TrajectoryRecord
from lab.store import Store

STEPS = 5


def trajectory(i: int, prefix: str = "task") -> tuple[TrajectoryRecord, list[StepRecord]]:
    task_id = f"{prefix}-{i:05d}"
    steps = [
        StepRecord(run_id="proc", task_id=task_id, turn=t, tool_name="search", observation="x" * 300)
        for t in range(STEPS)
    ]
    return TrajectoryRecord(run_id="proc", task_id=task_id, n_turns=STEPS, outcome=i % 2), steps


def write(db: str, n: int, pin: bool) -> None:
    store = Store(db)  # creates the schema; its read-only check must come before the pin
    pinned = duckdb.connect(db) if pin else None
    store.write_run(RunRecord(run_id="proc", kind="eval"))
    for i in range(n):
        store.write_trajectory(*trajectory(i))
        print(f"committed {i}", flush=True)
    print("done", flush=True)
    if pinned is not None:
        pinned.close()


def spool(db: str, n: int, name: str) -> None:
    store = Store(db, spool=True)
    for start in range(0, n, 10):
        store.write_trajectories([(*trajectory(i, name), None) for i in range(start, min(n, start + 10))])
    print("done", flush=True)


def hold(db: str) -> None:
    con = duckdb.connect(db)
    print("holding", flush=True)
    sys.stdin.read()
    con.close()


if __name__ == "__main__":
    mode, db_path, *rest = sys.argv[1:]
    if mode == "write":
        write(db_path, int(rest[0]), "--pin" in rest)
    elif mode == "spool":
        spool(db_path, int(rest[0]), rest[1])
    else:
        hold(db_path)
