"""The spool: many writers (ranks, shards, machines) share one store without sharing a lock.

Why: DuckDB lets one process write a file at a time, through a lock that only holds on one host (across
hosts it needs a filesystem whose locks work there, which DuckDB does not promise), and while a writer
holds it no reader gets in. So a writer in spool mode never opens the DuckDB file for writing: each batch
it would have committed becomes one *segment*, a folder of Parquet files (one per table it touches) in
`<store>.spool/`, written under a temporary name and renamed into place, so it appears whole or not at all.
Any number of processes on any number of hosts append segments side by side; a segment's name (wall-clock
nanoseconds, host, process, sequence) orders it among the others.

Readers see every writer's rows at once: a read connection lays temporary views over the file's tables
that add the segments' rows, with the store's replacement rule (`Store.write_trajectories`): per key the
newest row wins, and a trajectory's steps and tokens (a scoring's scores) come from the segment whose
trajectory (scoring) won. A run several shards share is `finished` once every shard is (`run_shards`).
With no segment there are no views, and a read costs what it did.

`Store.compact()` folds the segments into the DuckDB file in one transaction (`fold`; one host, the file's
lock), records their names in `spool_applied` and then deletes them: a compaction cut short between the
two leaves segments that the next one skips, never applies twice. A reader during a compaction still reads a
consistent store (the views skip applied segments; a segment deleted under it is read again).

    store = Store("runs/orchestra.duckdb", spool=True)   # every write appends a segment
    Store("runs/orchestra.duckdb").compact()            # `orchestra store compact`
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import socket
import time
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from lab.store.schema import KEYS, TABLES

SPOOL_SUFFIX = ".spool"
_TMP_PREFIX = ".tmp-"

#: Tables whose rows belong to a parent row: they come from the segment whose parent row won.
PARENTS: dict[str, str] = {"steps": "trajectories", "token_trajectories": "trajectories", "scores": "scorings"}

# A run's status from its shards' (`run_shards`): finished when all N are, running while any is, else the
# worst of what the others ended as. Read by the views and written into the file by `compact`.
SHARD_STATUS = """
    SELECT run_id,
        CASE WHEN count(*) FILTER (WHERE status = 'finished') >= max(shards) THEN 'finished'
             WHEN bool_or(status = 'running') OR count(*) < max(shards) THEN 'running'
             WHEN bool_or(status = 'failed') THEN 'failed'
             ELSE 'interrupted' END AS status,
        CASE WHEN count(*) FILTER (WHERE status = 'finished') >= max(shards) THEN max(finished_at) END AS finished_at
    FROM run_shards GROUP BY run_id"""


def spool_dir(db_path: Path) -> Path:
    """`<store>.spool/`, beside the store's file."""
    return db_path.with_name(db_path.name + SPOOL_SUFFIX)


def _writer_name() -> str:
    host = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname())[:40] or "host"
    return f"{host}-{os.getpid()}"


class Spool:
    """The segments of one store: append one, list them."""

    def __init__(self, db_path: Path) -> None:
        self.folder = spool_dir(db_path)
        self._sequence = itertools.count()
        self._last_ns = 0

    def segments(self) -> list[Path]:
        """Every complete segment, oldest first (half-written ones are invisible)."""
        try:
            entries = list(os.scandir(self.folder))
        except FileNotFoundError:
            return []
        return sorted(Path(e.path) for e in entries if e.is_dir() and not e.name.startswith("."))

    def abandoned(self, older_than_s: float = 3600.0) -> list[Path]:
        """Staging folders of writers killed mid-segment (never renamed, so never read): those untouched
        for `older_than_s`, which no live writer is still filling."""
        try:
            entries = list(os.scandir(self.folder))
        except FileNotFoundError:
            return []
        cutoff = time.time() - older_than_s
        return [Path(e.path) for e in entries
                if e.is_dir() and e.name.startswith(_TMP_PREFIX) and e.stat().st_mtime < cutoff]

    def write(self, tables: dict[str, pa.Table]) -> Path | None:
        """Append one segment holding `tables` (empty ones left out); None when every table is empty."""
        tables = {name: rows for name, rows in tables.items() if rows.num_rows}
        if not tables:
            return None
        unknown = set(tables) - set(TABLES)
        if unknown:
            raise ValueError(f"spool: unknown table {sorted(unknown)[0]!r}")
        now = max(time.time_ns(), self._last_ns + 1)  # strictly increasing within this writer
        self._last_ns = now
        name = f"{now:020d}-{_writer_name()}-{next(self._sequence):06d}"
        self.folder.mkdir(parents=True, exist_ok=True)
        staging = self.folder / f"{_TMP_PREFIX}{name}"
        staging.mkdir()
        try:
            for table, rows in tables.items():
                pq.write_table(rows, staging / f"{table}.parquet")
            os.rename(staging, self.folder / name)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return self.folder / name


def _files(segments: Sequence[Path], table: str) -> list[str]:
    return [str(s / f"{table}.parquet") for s in segments if (s / f"{table}.parquet").is_file()]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _listed(files: Sequence[str]) -> str:
    """Paths as a DuckDB list literal."""
    return "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"


def _union(db: str, table: str, segments: Sequence[Path]) -> str:
    """Every row of `table` in the file (source '') and the segments (source: the segment's folder, whose
    path sorts as the segments do), with a `_src` column."""
    base = f"SELECT *, '' AS _src FROM {_quote(db)}.main.{table}"
    files = _files(segments, table)
    if not files:
        return base
    return (f"{base} UNION ALL BY NAME SELECT * EXCLUDE (filename), parse_dirpath(filename) AS _src "
            f"FROM read_parquet({_listed(files)}, filename = true, union_by_name = true)")


def _winners(db: str, table: str, segments: Sequence[Path], keys: Sequence[str]) -> str:
    """One row per key, the newest source's."""
    by = ", ".join(keys)
    return (f"SELECT * EXCLUDE (_src, _rank) FROM (SELECT *, row_number() OVER (PARTITION BY {by} ORDER BY _src DESC) "
            f"AS _rank FROM ({_union(db, table, segments)})) WHERE _rank = 1")


def view_sql(db: str, table: str, segments: Sequence[Path]) -> str:
    """The rows a reader sees of `table`: the file's and the segments', replaced by key."""
    parent = PARENTS.get(table)
    if parent is not None:
        keys = ", ".join(KEYS[parent])
        won = f"SELECT {keys}, max(_src) AS _src FROM ({_union(db, parent, segments)}) GROUP BY ALL"
        return f"SELECT * EXCLUDE (_src) FROM ({_union(db, table, segments)}) SEMI JOIN ({won}) USING ({keys}, _src)"
    rows = _winners(db, table, segments, KEYS[table])
    if table != "runs":
        return rows
    newest = _winners(db, "run_shards", segments, KEYS["run_shards"])
    shards = SHARD_STATUS.replace("FROM run_shards", f"FROM ({newest})")
    return (f"SELECT r.* REPLACE (coalesce(s.status, r.status) AS status, "
            f"CASE WHEN s.run_id IS NULL THEN r.finished_at ELSE s.finished_at END AS finished_at) "
            f"FROM ({rows}) r LEFT JOIN ({shards}) s USING (run_id)")


def _database(con: duckdb.DuckDBPyConnection) -> str:
    (name,) = con.execute("SELECT current_database()").fetchone() or ("",)
    return str(name)


def pending(con: duckdb.DuckDBPyConnection, spool: Spool) -> list[Path]:
    """The segments not yet folded into the file `con` is open on."""
    segments = spool.segments()
    if not segments:
        return []
    applied = {name for (name,) in con.execute("SELECT segment FROM spool_applied").fetchall()}
    return [s for s in segments if s.name not in applied]


def attach_views(con: duckdb.DuckDBPyConnection, segments: Sequence[Path]) -> None:
    """Lay a temporary view over every table that adds `segments`' rows (they shadow the file's tables
    for unqualified names on this connection only)."""
    db = _database(con)
    for table in TABLES:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {table} AS {view_sql(db, table, segments)}")


def fold(con: duckdb.DuckDBPyConnection, segments: Sequence[Path]) -> None:
    """Replace, in the file's tables, every key the segments hold with what a reader sees for it."""
    db = _database(con)
    attach_views(con, segments)
    touched: dict[str, tuple[str, ...]] = {}  # table -> the key its replaced rows are chosen by
    for table in TABLES:
        parent = PARENTS.get(table, table)
        if table == "runs":  # a run row changes when its shards do
            sources = ["runs", "run_shards"]
        else:
            sources = [parent, table]
        keys = KEYS["runs"] if table == "runs" else KEYS[parent]
        selects = [f"SELECT DISTINCT {', '.join(keys)} FROM read_parquet({_listed(files)}, union_by_name = true)"
                   for source in dict.fromkeys(sources) if (files := _files(segments, source))]
        if not selects:
            continue
        con.execute(f"CREATE OR REPLACE TEMP TABLE _keys_{table} AS {' UNION '.join(selects)}")
        # a reader's rows for those keys, materialised before the file's rows are deleted
        con.execute(f"CREATE OR REPLACE TEMP TABLE _new_{table} AS SELECT * FROM {table} "
                    f"SEMI JOIN _keys_{table} USING ({', '.join(keys)})")
        touched[table] = keys
    for table, keys in touched.items():
        target = f"{_quote(db)}.main.{table}"
        match = " AND ".join(f"t.{k} = k.{k}" for k in keys)
        con.execute(f"DELETE FROM {target} t USING _keys_{table} k WHERE {match}")
        con.execute(f"INSERT INTO {target} BY NAME SELECT * FROM _new_{table}")
    for table in TABLES:
        con.execute(f"DROP VIEW IF EXISTS {table}")


__all__ = ["PARENTS", "SHARD_STATUS", "SPOOL_SUFFIX", "Spool", "attach_views", "fold", "pending", "spool_dir",
           "view_sql"]
