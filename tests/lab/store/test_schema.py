"""Tests for lab.store.schema.

Schema of the store: tables equal the records, versions and migrations, files that are not stores.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from lab.errors import LabInputError
from lab.records import TokenTrajectoryRecord, TrajectoryRecord
from lab.store import Store, resolve_db_path, schema
from lab.store.queries import runs_df, token_trajectories_df, trajectories_df


def _columns(db: Path, table: str) -> list[tuple[str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [(row[0], row[1]) for row in con.execute(f"DESCRIBE {table}").fetchall()]
    finally:
        con.close()


def _versions(db: Path) -> list[int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [v for (v,) in con.execute("SELECT version FROM schema_version ORDER BY version").fetchall()]
    finally:
        con.close()


@pytest.mark.parametrize("table", list(schema.TABLES))
def test_every_table_has_its_record_fields_in_order(tmp_path: Path, table: str) -> None:
    db = tmp_path / "s.duckdb"
    Store(db)
    record = schema.TABLES[table]
    assert [name for name, _ in _columns(db, table)] == list(record.model_fields)


def test_token_table_stores_integer_and_float_lists(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    Store(db)
    types = dict(_columns(db, "token_trajectories"))
    assert types["prompt_ids"] == "INTEGER[]"
    assert types["completion_ids"] == "INTEGER[]"
    assert types["mask"] == "TINYINT[]"
    assert types["logprobs"] == "DOUBLE[]"


@pytest.mark.parametrize("table", list(schema.TABLES))
def test_declared_keys_are_the_primary_keys(tmp_path: Path, table: str) -> None:
    db = tmp_path / "s.duckdb"
    Store(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        (columns,) = con.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() "
            "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
            [table],
        ).fetchall()[0]
    finally:
        con.close()
    assert tuple(columns) == schema.KEYS[table]


def test_new_file_records_each_migration_once(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    Store(db)
    Store(db)  # reopening an up-to-date file applies nothing
    assert _versions(db) == [m.version for m in schema.MIGRATIONS]


def test_plain_duckdb_file_without_our_tables_is_migrated(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    duckdb.connect(str(db)).close()
    assert runs_df(Store(db)).empty
    assert _versions(db) == [m.version for m in schema.MIGRATIONS]


def test_older_file_gets_pending_migrations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "s.duckdb"
    Store(db)
    extra = schema.Migration(schema.latest_version() + 1, "notes", ("CREATE TABLE notes (text VARCHAR)",))
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, extra))
    Store(db)
    assert _versions(db)[-1] == extra.version
    assert _columns(db, "notes") == [("text", "VARCHAR")]


def test_failed_migration_leaves_file_at_previous_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "s.duckdb"
    Store(db)
    before = _versions(db)
    broken = schema.Migration(
        schema.latest_version() + 1, "broken", ("CREATE TABLE half (a INTEGER)", "ALTER TABLE nope ADD COLUMN b INT")
    )
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, broken))
    with pytest.raises(duckdb.CatalogException):
        Store(db)
    monkeypatch.undo()
    assert _versions(db) == before
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert not con.execute("SELECT * FROM duckdb_tables() WHERE table_name = 'half'").fetchall()
    finally:
        con.close()


def test_file_from_newer_code_is_refused_naming_file_and_versions(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    Store(db)
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO schema_version VALUES (99, now()::TIMESTAMP)")
    con.close()
    with pytest.raises(LabInputError, match=rf"{db}.*version 99.*\({schema.latest_version()}\)") as caught:
        Store(db)
    assert "\n" not in str(caught.value)


def test_directory_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(LabInputError, match=rf"^{tmp_path}: is a directory") as caught:
        Store(tmp_path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("content", [b"", b"just some notes\n", b"\x00" * 8192])
def test_file_that_is_not_duckdb_is_refused_in_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.duckdb"
    path.write_bytes(content)
    with pytest.raises(LabInputError, match=rf"^{path}: cannot open as a DuckDB store") as caught:
        Store(path)
    assert "\n" not in str(caught.value)
    assert path.read_bytes() == content  # untouched


def test_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LabInputError, match="does not exist"):
        Store(tmp_path / "no" / "such" / "s.duckdb")


def test_db_path_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORCHESTRA_DB", raising=False)
    assert resolve_db_path(None) == Path("orchestra.duckdb")
    monkeypatch.setenv("ORCHESTRA_DB", "/data/env.duckdb")
    assert resolve_db_path(None) == Path("/data/env.duckdb")
    assert resolve_db_path("flag.duckdb") == Path("flag.duckdb")


def test_a_v1_file_gets_trajectory_statuses_from_what_it_logged(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "old.duckdb"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
    Store(db)
    con = duckdb.connect(str(db))
    try:
        for task_id, valid, error in (("ok", True, None), ("none", False, "turn limit 50 reached without an answer"),
                                      ("bug", True, "policy failed: ValueError: x")):
            con.execute(
                "INSERT INTO trajectories VALUES ('r', ?, 0, 0, '', '{}', 0, NULL, 1, 0, 0, 0, 0, true, ?, NULL, NULL,"
                " ?, 'world', '{}', now())", [task_id, valid, error])
    finally:
        con.close()
    monkeypatch.undo()
    store = Store(db)
    trajs = trajectories_df(store)
    assert dict(zip(trajs.task_id, trajs.status)) == {"ok": "answered", "none": "no_answer", "bug": "error"}
    assert _versions(db) == [m.version for m in schema.MIGRATIONS] and len(trajs) == 3


def test_a_v5_file_gets_its_grades_by_exact_match_and_by_judge_from_what_it_logged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before v6 the outcome was the model-free grade, unless the run had a judge (tau2 NL assertions):
    then it was the judged grade and the other was never kept. Cut rollouts have no grade either way."""
    db = tmp_path / "v5.duckdb"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:5])
    Store(db)
    con = duckdb.connect(str(db))
    try:
        for run_id, config in (("plain", '{"judge": null}'), ("judged", '{"judge": "gpt-5"}')):
            con.execute("INSERT INTO runs VALUES (?, 'eval', '', ?, '{}', 'default', now(), NULL, 'finished', '', "
                        "'scripted:x', 'tau2')", [run_id, config])
            for task_id, outcome, status in (("right", 1.0, "answered"), ("wrong", 0.0, "answered"),
                                             ("cut", 0.0, "cut")):
                con.execute(
                    "INSERT INTO trajectories (run_id, task_id, sample_idx, train_step, group_id, preference_json, "
                    "outcome, n_turns, cost_usd, latency_s, input_tokens, output_tokens, format_ok, valid_output, "
                    "benchmark, tool_counts_json, created_at, status) "
                    "VALUES (?, ?, 0, 0, '', '{}', ?, 1, 0.5, 1, 0, 0, true, true, 'tau2', '{}', now(), ?)",
                    [run_id, task_id, outcome, status])
    finally:
        con.close()
    monkeypatch.undo()
    trajs = trajectories_df(Store(db), include_cut=True)
    grade = {(r.run_id, r.task_id): (_grade(r.exact_correct), _grade(r.judge_correct)) for r in trajs.itertuples()}
    assert grade == {("plain", "right"): (True, None), ("plain", "wrong"): (False, None),
                     ("plain", "cut"): (None, None), ("judged", "right"): (None, True),
                     ("judged", "wrong"): (None, False), ("judged", "cut"): (None, None)}
    assert (trajs.judge_cost_usd == 0).all()
    assert _versions(db)[-1] == schema.latest_version()


def test_a_v6_file_keeps_its_token_records_as_conversations_and_takes_one_per_round(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """v7 rebuilds token_trajectories with `round_idx` in the key: rows written before it are whole
    conversations (round -1, no validity), copied intact; rounds of one rollout then store side by side."""
    db = tmp_path / "v6.duckdb"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:6])
    Store(db)
    con = duckdb.connect(str(db))
    try:
        for task_id, prompt in (("a", [1, 2]), ("b", [3])):
            con.execute("INSERT INTO token_trajectories VALUES ('r', ?, 0, 1, ?, [7, 8, 9], [1, 0, 1], "
                        "[-0.25, 0.0, -1.5])", [task_id, prompt])
    finally:
        con.close()
    monkeypatch.undo()
    store = Store(db)
    assert _versions(db) == [m.version for m in schema.MIGRATIONS]
    tokens = token_trajectories_df(store, "r")
    assert tokens.task_id.tolist() == ["a", "b"] and tokens.round_idx.tolist() == [-1, -1]
    assert [list(p) for p in tokens.prompt_ids] == [[1, 2], [3]] and tokens.valid.isna().all()
    assert all(list(c) == [7, 8, 9] and list(m) == [1, 0, 1] and list(lp) == [-0.25, 0.0, -1.5]
               for c, m, lp in zip(tokens.completion_ids, tokens["mask"], tokens.logprobs))
    assert _columns(db, "token_trajectories") == _columns_of_a_new_file(tmp_path)
    rounds = [TokenTrajectoryRecord(run_id="r", task_id="c", train_step=1, round_idx=r, completion_ids=[5], mask=[1],
                                    logprobs=[-0.1], valid=True) for r in (0, 1)]
    store.write_trajectory(TrajectoryRecord(run_id="r", task_id="c", train_step=1), [], rounds)
    assert token_trajectories_df(store, "r").round_idx.tolist() == [-1, -1, 0, 1]


def _columns_of_a_new_file(tmp_path: Path) -> list[tuple[str, str]]:
    Store(tmp_path / "new.duckdb")
    return _columns(tmp_path / "new.duckdb", "token_trajectories")


def _grade(value: object) -> bool | None:
    """A nullable BOOLEAN cell as True, False or None (pandas reads SQL NULL as NA)."""
    return None if pd.isna(value) else bool(value)
