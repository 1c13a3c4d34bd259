"""Tables, schema version and migrations of the trajectory store, all in one place.

Why the DDL is written out rather than generated from `lab.records`: a migration must describe the
file as it was when that version shipped. If v1 were generated from today's models, adding a field
to a record would silently change v1, and old files would never get the column. Instead, a field
added to a record must come with a new `Migration` here; `tests/lab/store/test_schema.py`
fails until the table's columns equal the record's fields, in order.

The `schema_version` table holds one row per applied migration. A file written by newer code than
this one (a higher version) is refused rather than guessed at.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from datetime import datetime

import duckdb
import pyarrow as pa
from pydantic import BaseModel

from lab.errors import LabInputError
from lab.records import (
    RunRecord,
    RunShardRecord,
    ScoreRecord,
    ScoringRecord,
    StepRecord,
    TaskRecord,
    TokenTrajectoryRecord,
    TrainMetricsRecord,
    TrajectoryRecord,
    utcnow,
)


@dataclass(frozen=True)
class Migration:
    """One schema step: the statements that take a file from `version - 1` to `version`."""

    version: int
    description: str
    statements: tuple[str, ...]


_V1 = (
    """CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,
        kind VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        config_json VARCHAR NOT NULL,
        toolkit_json VARCHAR NOT NULL,
        pricing VARCHAR NOT NULL,
        started_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP,
        status VARCHAR NOT NULL,
        git_sha VARCHAR NOT NULL,
        orchestrator VARCHAR NOT NULL,
        benchmark VARCHAR NOT NULL
    )""",
    """CREATE TABLE tasks (
        benchmark VARCHAR NOT NULL,
        task_id VARCHAR NOT NULL,
        split VARCHAR NOT NULL,
        domain VARCHAR NOT NULL,
        question VARCHAR NOT NULL,
        answer_json VARCHAR NOT NULL,
        meta_json VARCHAR NOT NULL,
        PRIMARY KEY (benchmark, task_id)
    )""",
    """CREATE TABLE trajectories (
        run_id VARCHAR NOT NULL,
        task_id VARCHAR NOT NULL,
        sample_idx BIGINT NOT NULL,
        train_step BIGINT NOT NULL,
        group_id VARCHAR NOT NULL,
        preference_json VARCHAR NOT NULL,
        outcome DOUBLE NOT NULL,
        final_answer VARCHAR,
        n_turns BIGINT NOT NULL,
        cost_usd DOUBLE NOT NULL,
        latency_s DOUBLE NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        format_ok BOOLEAN NOT NULL,
        valid_output BOOLEAN NOT NULL,
        reward DOUBLE,
        advantage DOUBLE,
        error VARCHAR,
        benchmark VARCHAR NOT NULL,
        tool_counts_json VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        PRIMARY KEY (run_id, task_id, sample_idx, train_step)
    )""",
    """CREATE TABLE steps (
        run_id VARCHAR NOT NULL,
        task_id VARCHAR NOT NULL,
        sample_idx BIGINT NOT NULL,
        train_step BIGINT NOT NULL,
        turn BIGINT NOT NULL,
        call_idx BIGINT NOT NULL,
        kind VARCHAR NOT NULL,
        reasoning VARCHAR NOT NULL,
        tool_name VARCHAR,
        model VARCHAR,
        arguments_json VARCHAR NOT NULL,
        observation VARCHAR NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        cost_usd DOUBLE NOT NULL,
        latency_s DOUBLE NOT NULL,
        error VARCHAR,
        started_at TIMESTAMP NOT NULL,
        simulated BOOLEAN NOT NULL,
        PRIMARY KEY (run_id, task_id, sample_idx, train_step, turn, call_idx)
    )""",
    """CREATE TABLE scorings (
        scoring_id VARCHAR PRIMARY KEY,
        run_id VARCHAR NOT NULL,
        preference_json VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        note VARCHAR NOT NULL
    )""",
    """CREATE TABLE scores (
        scoring_id VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL,
        task_id VARCHAR NOT NULL,
        sample_idx BIGINT NOT NULL,
        train_step BIGINT NOT NULL,
        reward DOUBLE NOT NULL,
        advantage DOUBLE NOT NULL,
        keep BOOLEAN NOT NULL,
        PRIMARY KEY (scoring_id, run_id, task_id, sample_idx, train_step)
    )""",
    """CREATE TABLE token_trajectories (
        run_id VARCHAR NOT NULL,
        task_id VARCHAR NOT NULL,
        sample_idx BIGINT NOT NULL,
        train_step BIGINT NOT NULL,
        prompt_ids INTEGER[] NOT NULL,
        completion_ids INTEGER[] NOT NULL,
        mask TINYINT[] NOT NULL,
        logprobs DOUBLE[] NOT NULL,
        PRIMARY KEY (run_id, task_id, sample_idx, train_step)
    )""",
)

_V2 = (
    "ALTER TABLE trajectories ADD COLUMN status VARCHAR DEFAULT 'answered'",
    # rows written before v2: failures were only told apart by their error text
    """UPDATE trajectories SET status = CASE
        WHEN error LIKE 'policy failed%' OR error LIKE 'grader failed%' THEN 'error'
        WHEN NOT valid_output THEN 'no_answer' ELSE 'answered' END""",
)

_V3 = (
    "ALTER TABLE trajectories ADD COLUMN filter_reason VARCHAR",
    """CREATE TABLE train_metrics (
        run_id VARCHAR NOT NULL,
        step BIGINT NOT NULL,
        created_at TIMESTAMP NOT NULL,
        metrics_json VARCHAR NOT NULL,
        PRIMARY KEY (run_id, step)
    )""",
)

_V4 = ("ALTER TABLE trajectories ADD COLUMN criteria_json VARCHAR",)

_V5 = ("ALTER TABLE steps ADD COLUMN prompt VARCHAR DEFAULT ''",)

_V6 = (
    "ALTER TABLE trajectories ADD COLUMN exact_correct BOOLEAN",
    "ALTER TABLE trajectories ADD COLUMN judge_correct BOOLEAN",
    "ALTER TABLE trajectories ADD COLUMN judge_cost_usd DOUBLE DEFAULT 0",
    # rows written before v6: without a judge the outcome was the model-free grade; with one (tau2 NL
    # assertions) it was the judged grade, and the grade without the judge was not kept
    """UPDATE trajectories SET exact_correct = outcome >= 1 WHERE status <> 'cut' AND run_id NOT IN
        (SELECT run_id FROM runs WHERE json_extract_string(config_json, '$.judge') IS NOT NULL)""",
    """UPDATE trajectories SET judge_correct = outcome >= 1 WHERE status <> 'cut' AND run_id IN
        (SELECT run_id FROM runs WHERE json_extract_string(config_json, '$.judge') IS NOT NULL)""",
)

# The round protocol stores one token record per round, so the round joins the key. DuckDB cannot change a
# primary key in place: build the new table, copy the rows (all conversation records, round -1), swap.
_V7 = (
    """CREATE TABLE token_trajectories_v7 (
        run_id VARCHAR NOT NULL,
        task_id VARCHAR NOT NULL,
        sample_idx BIGINT NOT NULL,
        train_step BIGINT NOT NULL,
        round_idx BIGINT NOT NULL DEFAULT -1,
        prompt_ids INTEGER[] NOT NULL,
        completion_ids INTEGER[] NOT NULL,
        mask TINYINT[] NOT NULL,
        logprobs DOUBLE[] NOT NULL,
        valid BOOLEAN,
        PRIMARY KEY (run_id, task_id, sample_idx, train_step, round_idx)
    )""",
    """INSERT INTO token_trajectories_v7 (run_id, task_id, sample_idx, train_step, prompt_ids, completion_ids,
        mask, logprobs)
        SELECT run_id, task_id, sample_idx, train_step, prompt_ids, completion_ids, mask, logprobs
        FROM token_trajectories""",
    "DROP TABLE token_trajectories",
    "ALTER TABLE token_trajectories_v7 RENAME TO token_trajectories",
)

# Several writers (shards, ranks) share runs: each shard's status, and the spool segments already folded
# into the file (`lab.store.spool`), so a compaction cut short is never applied twice.
_V8 = (
    """CREATE TABLE run_shards (
        run_id VARCHAR NOT NULL,
        shard BIGINT NOT NULL,
        shards BIGINT NOT NULL,
        status VARCHAR NOT NULL,
        started_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP,
        PRIMARY KEY (run_id, shard)
    )""",
    "CREATE TABLE spool_applied (segment VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL)",
)

# Ordered; append only. Never edit a migration that has shipped: add the next one.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial tables", _V1),
    Migration(2, "trajectories.status: answered, no_answer, error or cut", _V2),
    Migration(3, "trajectories.filter_reason and the train_metrics table (GRPO training)", _V3),
    Migration(4, "trajectories.criteria_json: per-criterion verdicts (tau2: db, communicate, actions, nl)", _V4),
    Migration(5, "steps.prompt: each round's prompt under the round protocol", _V5),
    Migration(6, "trajectories.exact_correct, judge_correct, judge_cost_usd: grades without and with --judge", _V6),
    Migration(7, "token_trajectories.round_idx (in the key) and valid: one token record per round", _V7),
    Migration(8, "run_shards (a run several writers share) and spool_applied (segments folded in)", _V8),
)

SCHEMA_VERSION = MIGRATIONS[-1].version

VERSION_TABLE_DDL = ("CREATE TABLE IF NOT EXISTS schema_version "
                     "(version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)")

# Table name -> the record whose fields are its columns, in order.
TABLES: dict[str, type[BaseModel]] = {
    "runs": RunRecord,
    "tasks": TaskRecord,
    "trajectories": TrajectoryRecord,
    "steps": StepRecord,
    "scorings": ScoringRecord,
    "scores": ScoreRecord,
    "token_trajectories": TokenTrajectoryRecord,
    "train_metrics": TrainMetricsRecord,
    "run_shards": RunShardRecord,
}

# Key columns per table, the unit that a write replaces.
KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "tasks": ("benchmark", "task_id"),
    "trajectories": ("run_id", "task_id", "sample_idx", "train_step"),
    "steps": ("run_id", "task_id", "sample_idx", "train_step", "turn", "call_idx"),
    "scorings": ("scoring_id",),
    "scores": ("scoring_id", "run_id", "task_id", "sample_idx", "train_step"),
    "token_trajectories": ("run_id", "task_id", "sample_idx", "train_step", "round_idx"),
    "train_metrics": ("run_id", "step"),
    "run_shards": ("run_id", "shard"),
}


def latest_version() -> int:
    """The version this code writes (read at call time, so tests can append a migration)."""
    return MIGRATIONS[-1].version


def pending(current: int) -> list[Migration]:
    """Migrations a file at version `current` still needs, oldest first."""
    return [m for m in MIGRATIONS if m.version > current]


def file_version(con: duckdb.DuckDBPyConnection) -> int:
    """Schema version of the open file; 0 for a fresh (or foreign) database without our table."""
    (has_table,) = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name = 'schema_version'"
    ).fetchall()[0]
    if not has_table:
        return 0
    (version,) = con.execute("SELECT max(version) FROM schema_version").fetchall()[0]
    return int(version or 0)


def check_not_newer(version: int, path: object) -> None:
    """Refuse a file written by newer code: guessing at unknown columns could corrupt it."""
    if version > latest_version():
        raise LabInputError(
            f"{path}: store schema version {version} is newer than this lab supports ({latest_version()}); "
            "upgrade the lab to open it"
        )


def migrate(con: duckdb.DuckDBPyConnection, path: object) -> list[int]:
    """Apply pending migrations on a read-write connection, each in its own transaction.

    Returns the versions applied. A migration that fails rolls back whole, leaving the file at the
    previous version, so the next open retries it.
    """
    con.execute(VERSION_TABLE_DDL)
    current = file_version(con)
    check_not_newer(current, path)
    applied = []
    for migration in pending(current):
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in migration.statements:
                con.execute(statement)
            con.execute("INSERT INTO schema_version VALUES (?, ?)", [migration.version, utcnow()])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        applied.append(migration.version)
    return applied


_ARROW_SCALARS: dict[object, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    datetime: pa.timestamp("us"),
}


def _arrow_type(annotation: object) -> pa.DataType:
    """Arrow type for a record field's annotation (`X | None` is X, nullable; Literal is a string)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _arrow_type(inner[0])
    if origin is typing.Literal:
        return pa.string()
    if origin is list:
        return pa.list_(_arrow_type(typing.get_args(annotation)[0]))
    return _ARROW_SCALARS[annotation]


def arrow_schema(record: type[BaseModel]) -> pa.Schema:
    """Arrow schema of a record, so rows cross into DuckDB with exact types, not guessed ones."""
    return pa.schema([(name, _arrow_type(f.annotation)) for name, f in record.model_fields.items()])


def to_arrow(record: type[BaseModel], rows: typing.Sequence[BaseModel]) -> pa.Table:
    """Rows of one record type as an Arrow table (one bulk insert instead of one per row).

    Read column by column from the records' attributes: the records are flat (strings, numbers, times,
    lists of numbers), so `model_dump` would copy each row into a dict only for Arrow to take it apart
    again, about half of a spooled write's time (`benchmarks/many_writers.py`)."""
    schema = arrow_schema(record)
    return pa.Table.from_pydict({name: [getattr(r, name) for r in rows] for name in schema.names}, schema=schema)
