"""Move one run between store files as a folder of Parquet files (one per table, plus a manifest).

Why Parquet: it keeps DuckDB's types (timestamps, integer lists) exactly, pandas and DuckDB read it
without the lab, and a folder per run can be copied off a training machine while the run's store
stays locked by other work.

    export_run(store, "eval-20261130-0642-3f9a", Path("exports/eval-0642"))
    import_run(other_store, Path("exports/eval-0642"))

Import replaces: if the target store already holds the run, every row of that run (trajectories,
steps, tokens, scorings, scores, a training run's per-step metrics, the run row) is deleted and the
folder's rows inserted, in one transaction. So importing twice is a no-op, and importing a newer export
of a run overwrites the older copy instead of mixing the two. Tasks are shared between runs, so they are upserted, never
deleted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lab.errors import LabInputError
from lab.store.queries import run as get_run
from lab.store.schema import TABLES, check_not_newer, latest_version
from lab.store.store import Store

MANIFEST = "manifest.json"

# Per table: the rows that belong to one run ($run_id). Tasks are those the run's trajectories used;
# a trajectory without a benchmark falls back to the run's.
_RUN_ROWS = {
    "runs": "SELECT * FROM runs WHERE run_id = $run_id",
    "tasks": (
        "SELECT * FROM tasks WHERE (benchmark, task_id) IN ("
        "SELECT DISTINCT coalesce(nullif(t.benchmark, ''), r.benchmark), t.task_id "
        "FROM trajectories t JOIN runs r USING (run_id) WHERE t.run_id = $run_id) "
        "ORDER BY benchmark, task_id"
    ),
    "trajectories": "SELECT * FROM trajectories WHERE run_id = $run_id ORDER BY task_id, sample_idx, train_step",
    "steps": "SELECT * FROM steps WHERE run_id = $run_id ORDER BY task_id, sample_idx, train_step, turn, call_idx",
    "token_trajectories": "SELECT * FROM token_trajectories WHERE run_id = $run_id ORDER BY "
                          "task_id, sample_idx, train_step, round_idx",
    "scorings": "SELECT * FROM scorings WHERE run_id = $run_id ORDER BY scoring_id",
    "scores": "SELECT * FROM scores WHERE run_id = $run_id ORDER BY scoring_id, task_id, sample_idx, train_step",
    "train_metrics": "SELECT * FROM train_metrics WHERE run_id = $run_id ORDER BY step",
}

# Tables an export may lack: folders written before the table was exported (read as empty).
_OPTIONAL = frozenset({"train_metrics"})

# Deleted before import, children first. Scores go by run_id: they carry it.
_REPLACED = ("scores", "scorings", "steps", "token_trajectories", "trajectories", "train_metrics", "runs")


def export_run(store: Store, run_id: str, out_dir: Path) -> dict[str, int]:
    """Write one run's rows as `<table>.parquet` files plus `manifest.json`; returns rows per table.

    Each table is read on its own short read-only connection, so a writer is never locked out for
    the whole export; export a finished run to get a consistent copy.
    """
    get_run(store, run_id)  # an unknown id fails here, naming the store
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise LabInputError(f"{out_dir}: exists and is not a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for table, sql in _RUN_ROWS.items():
        rows = store._read_arrow(sql, {"run_id": run_id})
        pq.write_table(rows, out_dir / f"{table}.parquet")
        counts[table] = rows.num_rows
    manifest = {"run_id": run_id, "schema_version": latest_version(), "rows": counts}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return counts


def _read_manifest(in_dir: Path) -> dict:
    path = in_dir / MANIFEST
    if not in_dir.is_dir():
        raise LabInputError(f"{in_dir}: not a folder (expected a run exported by export_run)")
    try:
        manifest = json.loads(path.read_text())
        run_id, version = str(manifest["run_id"]), int(manifest["schema_version"])
    except FileNotFoundError:
        raise LabInputError(f"{path}: missing; {in_dir} is not an exported run") from None
    except (ValueError, KeyError, TypeError) as error:
        raise LabInputError(f"{path}: not a run manifest ({error})") from None
    check_not_newer(version, path)
    return {"run_id": run_id, "schema_version": version}


def _read_table(in_dir: Path, table: str, run_id: str) -> pa.Table | None:
    """One exported table, checked to belong to the manifest's run (None: an optional table is absent)."""
    path = in_dir / f"{table}.parquet"
    if table in _OPTIONAL and not path.exists():
        return None
    try:
        rows = pq.read_table(path)
    except FileNotFoundError:
        raise LabInputError(f"{path}: missing from the exported run") from None
    except pa.ArrowInvalid as error:
        raise LabInputError(f"{path}: not a Parquet file ({error})") from None
    if "run_id" in TABLES[table].model_fields and rows.num_rows:
        others = set(rows.column("run_id").to_pylist()) - {run_id}
        if others:
            raise LabInputError(f"{path}: holds rows of run {sorted(others)[0]!r}, manifest says {run_id!r}")
    return rows


def import_run(store: Store, in_dir: Path) -> str:
    """Load a folder written by `export_run` into `store`, replacing that run if present; returns its id."""
    in_dir = Path(in_dir)
    run_id = _read_manifest(in_dir)["run_id"]
    tables = {table: _read_table(in_dir, table, run_id) for table in _RUN_ROWS}
    runs = tables["runs"]
    assert runs is not None  # only _OPTIONAL tables may be absent, and runs is not one of them
    if runs.num_rows != 1:
        raise LabInputError(f"{in_dir / 'runs.parquet'}: expected one run row, found {runs.num_rows}")
    with store._transaction() as con:
        for table in _REPLACED:
            con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        for table, rows in tables.items():
            if rows is None or not rows.num_rows:
                continue
            con.register("_rows", rows)
            # BY NAME: an export from an older schema lacks later columns; they take their defaults (a v6
            # token record, always a conversation's, gets round_idx -1).
            verb = "INSERT OR REPLACE" if table == "tasks" else "INSERT"
            con.execute(f"{verb} INTO {table} BY NAME SELECT * FROM _rows")
            con.unregister("_rows")
    return run_id


__all__ = ["MANIFEST", "export_run", "import_run"]
