"""The trajectory store: one DuckDB file per workspace, written and read in short-lived connections.

Why short-lived: DuckDB lets one process open a file read-write, and while it does, no other process
can open it at all, not even read-only. A run that held its connection open would lock the app and
the notebooks out for hours. So every write opens a connection, runs one transaction and closes;
every read opens a read-only connection, reads into pandas and closes. Both retry with small random
backoff when another process holds the lock, up to `timeout_s`, then raise `StoreLockedError`.

Cost, measured on the 2-core dev box (busy): a bare open+close is ~15-50 ms (DuckDB builds its catalog
on every open, even for `:memory:`), and `write_trajectories` of 16 trajectories x 5 steps costs
~50-100 ms end to end, of which the transaction itself is ~10-15 ms and the checkpoint on close the
rest. So callers batch: the harness hands `write_trajectories` every trajectory finished since its
last call. A reader polling in a tight loop slows a writer down (it must land in the gaps between
reads) but cannot fail it; poll at human speed.

    store = Store(resolve_db_path(None))           # ./orchestra.duckdb unless --db / $ORCHESTRA_DB
    store.write_run(run)
    store.write_trajectories([(traj, steps, tokens), ...])   # one transaction; tokens: a record, a list or None
    done = store.completed_keys(run.run_id)        # resume: skip these

Many writers (the ranks of a training, the shards of an evaluation, machines that share a folder) open
the store with `spool=True`: their writes append Parquet segments beside the file instead of taking its
lock, and every read sees them at once (`lab.store.spool`, which says why). `orchestra store compact`
folds them into the file.

Reads go through the named queries in `lab.store.queries`; nothing outside this package writes SQL.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import time
import typing
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel

from lab.errors import LabInputError
from lab.records import (
    RunRecord,
    RunShardRecord,
    RunStatus,
    ScoreRecord,
    ScoringRecord,
    StepRecord,
    TaskRecord,
    TokenTrajectoryRecord,
    TrainMetricsRecord,
    TrajectoryRecord,
    utcnow,
)
from lab.store.schema import KEYS, TABLES, check_not_newer, file_version, latest_version, migrate, to_arrow
from lab.store.spool import SHARD_STATUS, Spool, attach_views, fold, pending

DEFAULT_DB = "orchestra.duckdb"
DB_ENV_VAR = "ORCHESTRA_DB"

# Full-jitter exponential backoff between lock retries: first waits are ~1 ms so a writer slips into
# the gap between two reads; the cap keeps a waiting process from sleeping past a released lock.
_BACKOFF_BASE_S = 0.001
_BACKOFF_CAP_S = 0.05

#: A trajectory, its steps and its token records: one (a conversation), one per round (the round
#: protocol), or none (a policy without tokens).
TokenRecords = TokenTrajectoryRecord | Sequence[TokenTrajectoryRecord] | None
TrajectoryItem = tuple[TrajectoryRecord, Sequence[StepRecord], TokenRecords]
_T = typing.TypeVar("_T")


class StoreLockedError(LabInputError):
    """Another process held the database for longer than the store was willing to wait."""


def resolve_db_path(db: str | os.PathLike[str] | None = None) -> Path:
    """The store file: the `--db` value, else `$ORCHESTRA_DB`, else `./orchestra.duckdb`."""
    chosen = db if db else os.environ.get(DB_ENV_VAR) or DEFAULT_DB
    return Path(chosen).expanduser()


def _is_lock_conflict(error: duckdb.Error) -> bool:
    """True for the errors that go away once the other holder closes its connection."""
    message = str(error)
    if isinstance(error, duckdb.IOException):
        return "Could not set lock" in message or "Conflicting lock" in message
    # Same process, another thread holds the file open in the other mode (read-only vs read-write).
    return isinstance(error, duckdb.ConnectionException) and "different configuration" in message


def _key(record: BaseModel) -> tuple:
    """The trajectory key of a trajectory, step or token record."""
    return tuple(getattr(record, name) for name in KEYS["trajectories"])


def _token_list(tokens: TokenRecords) -> list[TokenTrajectoryRecord]:
    """A trajectory item's token records as a list: callers pass one record, several (rounds) or None."""
    if tokens is None:
        return []
    if isinstance(tokens, TokenTrajectoryRecord):
        return [tokens]
    return list(tokens)


class Store:
    """Handle on one store file. Holds only the path: no connection outlives a call."""

    def __init__(self, path: str | os.PathLike[str], *, timeout_s: float = 30.0, read_only: bool = False,
                 spool: bool = False) -> None:
        """`read_only`: for viewers (the app): never create, migrate or lock the file for writing; a
        missing file or one from older code is one clear error instead. `spool`: for one of many writers:
        every write appends a segment (`lab.store.spool`) and never locks the file (which is created, or
        upgraded, here if it must be)."""
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.segments = Spool(self.path)
        #: whether writes append segments instead of committing to the file
        self.spooled = spool
        #: run rows this handle spooled, so finishing one needs no read
        self._spooled_runs: dict[str, RunRecord] = {}
        if read_only:
            self._check_readable()
        else:
            self._ensure_schema()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # ---- connections -------------------------------------------------------------------------

    def _ensure_schema(self) -> None:
        """Create the file or bring it to the latest schema version; refuse a file from newer code."""
        if self.path.is_dir():
            raise LabInputError(f"{self.path}: is a directory, not a DuckDB database file")
        if not self.path.parent.is_dir():
            raise LabInputError(f"{self.path}: folder {self.path.parent} does not exist")
        if self.path.exists():
            # Read-only first: an up-to-date file (the common case) never needs the write lock.
            with self._connect(read_only=True) as con:
                version = file_version(con)
            check_not_newer(version, self.path)
            if version == latest_version():
                return
        with self._connect(read_only=False) as con:
            migrate(con, self.path)

    def _check_readable(self) -> None:
        if not self.path.is_file():
            raise LabInputError(f"{self.path}: no store here yet (run `orchestra demo` or "
                                f"`orchestra eval --db {self.path}`)")
        with self._connect(read_only=True) as con:
            version = file_version(con)
        check_not_newer(version, self.path)
        if version != latest_version():
            raise LabInputError(f"{self.path}: written by older code (schema v{version}); any `orchestra` command "
                                f"with --db {self.path} upgrades it")

    @contextmanager
    def _connect(self, read_only: bool, spooled: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection that is closed on exit; opening retries while another process holds the lock.
        `spooled`: its tables also show the segments not yet folded in (a reader's view of the store)."""
        deadline = time.monotonic() + self.timeout_s
        attempt = 0
        while True:
            try:
                con = duckdb.connect(str(self.path), read_only=read_only)
                break
            except duckdb.Error as error:
                if not _is_lock_conflict(error):
                    first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
                    raise LabInputError(f"{self.path}: cannot open as a DuckDB store ({first_line})") from error
                if time.monotonic() >= deadline:
                    pid = re.search(r"PID (\d+)", str(error))
                    holder = f"process {pid.group(1)}" if pid else "another connection"
                    raise StoreLockedError(
                        f"{self.path}: database held by {holder} for over {self.timeout_s:g} s; "
                        "wait for it to finish or pass another --db"
                    ) from error
                time.sleep(random.uniform(0, min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2 ** min(attempt, 10))))
                attempt += 1
        try:
            if spooled and (segments := pending(con, self.segments)):
                attach_views(con, segments)
            yield con
        finally:
            con.close()

    @contextmanager
    def _transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One read-write transaction: everything inside commits together or not at all."""
        with self._connect(read_only=False) as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                # If DuckDB already aborted the transaction, ROLLBACK may fail too; closing without
                # COMMIT discards it either way, and the original error is the one worth raising.
                with suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _read(self, sql: str, params: Sequence[object] | dict[str, object] | None = None) -> pd.DataFrame:
        """Run one query on a read-only connection; for `lab.store.queries`, not for callers."""
        return self._spooled_read(lambda con: con.execute(sql, params).df())

    def _read_arrow(self, sql: str, params: Sequence[object] | dict[str, object] | None = None) -> pa.Table:
        """Like `_read`, keeping DuckDB's exact types (lists, integer widths) for Parquet export."""
        return self._spooled_read(lambda con: con.sql(sql, params=params).to_arrow_table())

    def _spooled_read(self, read: typing.Callable[[duckdb.DuckDBPyConnection], _T]) -> _T:
        """`read` on a read-only connection that sees the spool; a segment that a compaction folded in and
        deleted while it was being read is read again from the file (a few tries, then the error)."""
        for attempt in range(5):
            try:
                with self._connect(read_only=True, spooled=True) as con:
                    return read(con)
            except duckdb.IOException as error:
                if attempt == 4 or self.segments.folder.name not in str(error):
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[BaseModel], replace: bool = False) -> None:
        """Bulk-insert records through Arrow (row-by-row `executemany` is ~100x slower)."""
        if not rows:
            return
        con.register("_rows", to_arrow(TABLES[table], rows))
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        con.execute(f"{verb} INTO {table} BY NAME SELECT * FROM _rows")
        con.unregister("_rows")

    # ---- writes ------------------------------------------------------------------------------

    def _spool(self, rows: dict[str, Sequence[BaseModel]]) -> None:
        """Append one segment of `rows` (table -> records)."""
        self.segments.write({table: to_arrow(TABLES[table], records) for table, records in rows.items()})

    def write_run(self, run: RunRecord, shard: tuple[int, int] | None = None) -> None:
        """Insert or replace a run's row (re-sending it after a config change is fine). `shard` (i, N): this
        writer runs shard i of N of the run, which is finished once all N are (spooled stores only)."""
        shards = [RunShardRecord(run_id=run.run_id, shard=shard[0], shards=shard[1],
                                 started_at=run.started_at)] if shard else []
        if self.spooled:
            self._spooled_runs[run.run_id] = run
            self._spool({"runs": [run], "run_shards": shards})
            return
        with self._transaction() as con:
            self._insert(con, "runs", [run], replace=True)
            self._insert(con, "run_shards", shards, replace=True)
            _settle_shards(con, run.run_id)

    def finish_run(self, run_id: str, status: RunStatus = "finished", shard: tuple[int, int] | None = None) -> None:
        """Mark a run (or, with `shard`, this writer's shard of it) finished, failed or interrupted now."""
        allowed = typing.get_args(RunStatus)
        if status not in allowed:
            raise LabInputError(f"run status {status!r} is not one of {', '.join(allowed)}")
        if shard is not None:
            started = self._spooled_runs[run_id].started_at if run_id in self._spooled_runs else utcnow()
            part = RunShardRecord(run_id=run_id, shard=shard[0], shards=shard[1], status=status, started_at=started,
                                  finished_at=utcnow())
            if self.spooled:
                self._spool({"run_shards": [part]})
                return
            with self._transaction() as con:
                self._insert(con, "run_shards", [part], replace=True)
                _settle_shards(con, run_id)
            return
        if self.spooled:
            record = self._spooled_runs.get(run_id) or self.run_record(run_id)
            self._spool({"runs": [record.model_copy(update={"status": status, "finished_at": utcnow()})]})
            return
        with self._transaction() as con:
            updated = con.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ? RETURNING run_id",
                [status, utcnow(), run_id],
            ).fetchall()
            if not updated:
                raise LabInputError(f"unknown run id {run_id!r} in {self.path}")

    def write_tasks(self, tasks: Sequence[TaskRecord]) -> None:
        """Insert or replace tasks by (benchmark, task_id); the last duplicate in `tasks` wins."""
        latest = {(t.benchmark, t.task_id): t for t in tasks}
        if self.spooled:
            self._spool({"tasks": list(latest.values())})
            return
        with self._transaction() as con:
            self._insert(con, "tasks", list(latest.values()), replace=True)

    def write_trajectory(
        self,
        trajectory: TrajectoryRecord,
        steps: Sequence[StepRecord],
        tokens: TokenRecords = None,
    ) -> None:
        """Write one trajectory with its steps (and tokens) in one transaction; see `write_trajectories`."""
        self.write_trajectories([(trajectory, steps, tokens)])

    def write_trajectories(self, items: Sequence[TrajectoryItem]) -> None:
        """Write trajectories with their steps and tokens in ONE transaction.

        Re-writing a key replaces the whole trajectory: its old steps and tokens are deleted first
        (tokens too when the new write carries none), so re-running a task is idempotent. Within
        `items`, the last write of a key wins. Any failure rolls back the whole batch. An item's tokens
        are one record, a list of them (the round protocol: one per round, told apart by `round_idx`)
        or None.
        """
        latest: dict[tuple, tuple[TrajectoryRecord, Sequence[StepRecord], list[TokenTrajectoryRecord]]] = {}
        for trajectory, steps, tokens in items:
            key = _key(trajectory)
            records = _token_list(tokens)
            run_id, task_id, sample_idx, train_step = key  # KEYS["trajectories"], spelt out: a check per step
            keyed: list[StepRecord | TokenTrajectoryRecord] = [*steps, *records]
            strays = [s for s in keyed if s.train_step != train_step or s.sample_idx != sample_idx
                      or s.task_id != task_id or s.run_id != run_id]
            if strays:
                raise ValueError(f"trajectory {key}: got a step or tokens record keyed {_key(strays[0])}")
            turns = [(s.turn, s.call_idx) for s in steps]
            if len(set(turns)) != len(turns):  # the file's key would refuse it; a segment must too, before writing
                raise duckdb.ConstraintException(f"trajectory {key}: two steps share a (turn, call_idx) key")
            rounds = [k.round_idx for k in records]
            if len(set(rounds)) != len(rounds):
                raise ValueError(f"trajectory {key}: two token records share a round_idx ({sorted(rounds)})")
            latest[key] = (trajectory, steps, records)
        if not latest:
            return
        trajectories = [t for t, _, _ in latest.values()]
        all_steps = [s for _, steps, _ in latest.values() for s in steps]
        all_tokens = [k for _, _, records in latest.values() for k in records]
        if self.spooled:
            self._spool({"trajectories": trajectories, "steps": all_steps, "token_trajectories": all_tokens})
            return
        key_cols = KEYS["trajectories"]
        keys = to_arrow(TrajectoryRecord, trajectories).select(list(key_cols))
        match = " AND ".join(f"t.{c} = k.{c}" for c in key_cols)
        with self._transaction() as con:
            con.register("_keys", keys)
            # Steps and tokens only ever land together with their trajectory, so one look at the
            # trajectories table says whether anything needs replacing; new keys (the usual case)
            # skip three joined deletes, which cost more than the inserts on a fresh connection.
            (n_existing,) = con.execute(f"SELECT count(*) FROM trajectories t JOIN _keys k ON {match}").fetchall()[0]
            if n_existing:
                for table in ("steps", "token_trajectories", "trajectories"):
                    con.execute(f"DELETE FROM {table} t USING _keys k WHERE {match}")
            con.unregister("_keys")
            self._insert(con, "trajectories", trajectories)
            self._insert(con, "steps", all_steps)
            self._insert(con, "token_trajectories", all_tokens)

    def write_scoring(self, scoring: ScoringRecord, scores: Sequence[ScoreRecord]) -> None:
        """Write a scoring and its scores in one transaction, replacing an earlier one with that id."""
        strays = [s for s in scores if (s.scoring_id, s.run_id) != (scoring.scoring_id, scoring.run_id)]
        if strays:
            raise ValueError(
                f"scoring {scoring.scoring_id!r} of run {scoring.run_id!r}: got a score for "
                f"scoring {strays[0].scoring_id!r} of run {strays[0].run_id!r}"
            )
        if self.spooled:
            self._spool({"scorings": [scoring], "scores": list({_score_key(s): s for s in scores}.values())})
            return
        with self._transaction() as con:
            con.execute("DELETE FROM scores WHERE scoring_id = ?", [scoring.scoring_id])
            self._insert(con, "scorings", [scoring], replace=True)
            self._insert(con, "scores", list({_score_key(s): s for s in scores}.values()))

    def write_train_metrics(self, rows: Sequence[TrainMetricsRecord]) -> None:
        """Insert or replace optimizer-step metrics by (run_id, step): a resumed run rewrites its steps."""
        latest = {(r.run_id, r.step): r for r in rows}
        if self.spooled:
            self._spool({"train_metrics": list(latest.values())})
            return
        with self._transaction() as con:
            self._insert(con, "train_metrics", list(latest.values()), replace=True)

    def run_record(self, run_id: str) -> RunRecord:
        """A run's row as a reader sees it (spool included); an unknown id is bad input (it usually came
        from the command line). `lab.store.queries.run` is this."""
        rows = self._read("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if rows.empty:
            raise LabInputError(f"unknown run id {run_id!r} in {self.path}")
        row = rows.iloc[0].to_dict()
        # pandas turns SQL NULL into NaT/NaN; the record wants None.
        return RunRecord(**{k: (None if pd.isna(v) else v) for k, v in row.items()})

    # ---- many writers ------------------------------------------------------------------------

    def compact(self) -> int:
        """Fold every segment of the spool into the file in one transaction, then delete them (and what
        writers killed mid-segment left long ago); returns how many were folded in (`lab.store.spool`: a
        compaction cut short never applies one twice)."""
        for staging in self.segments.abandoned():
            shutil.rmtree(staging, ignore_errors=True)
        if not self.segments.segments():
            return 0
        with self._transaction() as con:  # the file's write lock: one compaction at a time
            todo = pending(con, self.segments)
            if todo:
                fold(con, todo)
                con.executemany("INSERT INTO spool_applied VALUES (?, now())", [[s.name] for s in todo])
            # names of segments already gone (deleted after an earlier commit) are no longer needed
            con.execute("CREATE OR REPLACE TEMP TABLE _live (segment VARCHAR)")
            con.executemany("INSERT INTO _live VALUES (?)", [[s.name] for s in self.segments.segments()])
            con.execute("DELETE FROM spool_applied WHERE segment NOT IN (SELECT segment FROM _live)")
            applied = {name for (name,) in con.execute("SELECT segment FROM spool_applied").fetchall()}
        for segment in self.segments.segments():
            if segment.name in applied:
                shutil.rmtree(segment, ignore_errors=True)
        return len(todo)

    # ---- resume ------------------------------------------------------------------------------

    def completed_keys(self, run_id: str) -> set[tuple[str, int, int]]:
        """(task_id, sample_idx, train_step) of every finished trajectory of `run_id`: rollouts cut by a
        budget are not finished, so a resume runs them again (and replaces them)."""
        rows = self._spooled_read(lambda con: con.execute(
            "SELECT task_id, sample_idx, train_step FROM trajectories WHERE run_id = ? AND status <> 'cut'",
            [run_id]).fetchall())
        return {(task_id, int(sample_idx), int(train_step)) for task_id, sample_idx, train_step in rows}


def _settle_shards(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """A sharded run's status and end from its shards' (`lab.store.spool.SHARD_STATUS`)."""
    con.execute(f"UPDATE runs SET status = s.status, finished_at = s.finished_at FROM ({SHARD_STATUS}) s "
                "WHERE runs.run_id = s.run_id AND runs.run_id = ?", [run_id])


def _score_key(score: ScoreRecord) -> tuple:
    return tuple(getattr(score, name) for name in KEYS["scores"])


def open_store(db: str | os.PathLike[str] | None = None, *, timeout_s: float = 30.0, spool: bool = False) -> Store:
    """The store the CLI means: `--db`, else `$ORCHESTRA_DB`, else `./orchestra.duckdb`."""
    return Store(resolve_db_path(db), timeout_s=timeout_s, spool=spool)
