"""`merge_stores`: fold other store files (one per machine or shard) into one store, each row once.

Why through the spool: a source becomes one segment of the target (`lab.store.spool`), and compaction
applies it with the store's one replacement rule, so a trajectory that two sources hold (a shard run
twice) lands once, merging again changes nothing, and a run's shards from several files become one run
that is finished when all of its shards are.

Refused before anything is written, in one line: a run split into different numbers of shards in two
places, and shards of one evaluation that ran under different configs (their run ids differ, so each is
left incomplete: the line names the first setting that differs).

    merge_stores(Store("all.duckdb"), [Path("shard-1.duckdb"), Path("shard-2.duckdb")])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa

from lab.errors import LabInputError
from lab.store.schema import TABLES
from lab.store.store import Store

#: Config keys that do not make two shards' runs different evaluations.
_SHARD_KEYS = {"shard", "concurrency", "rate_limit", "budget_usd"}


@dataclass(frozen=True)
class MergeResult:
    """What a merge folded in: rows per table over all sources, and the sharded runs it completed or not."""

    rows: dict[str, int]
    finished_runs: list[str]
    incomplete_runs: dict[str, list[int]]  # run id -> its missing shards


def _tables(store: Store, tables: Sequence[str] = tuple(TABLES)) -> dict[str, pa.Table]:
    return {table: store._read_arrow(f"SELECT * FROM {table}") for table in tables}


def merge_stores(target: Store, sources: Sequence[Path]) -> MergeResult:
    """Fold every source store into `target` (sources are only read); see the module docstring."""
    if target.spooled:
        raise ValueError("merge into a store opened without spool=True: the merge folds the spool in")
    resolved = {Path(s).resolve() for s in sources}
    if target.path.resolve() in resolved:
        raise LabInputError(f"{target.path}: is both the target and a source of the merge")
    read = {Path(s): _tables(Store(s, read_only=True)) for s in sources}
    places = {target.path: _tables(target, ("run_shards", "runs")), **read}  # the target: only what the check reads
    shards = pd.concat([_shards(str(path), tables["run_shards"], tables["runs"]) for path, tables in places.items()],
                       ignore_index=True)
    _check_shards(shards)
    for tables in read.values():
        target.segments.write(tables)
    target.compact()
    rows = {table: sum(t[table].num_rows for t in read.values()) for table in TABLES}
    finished, incomplete = shard_states(target)
    return MergeResult(rows=rows, finished_runs=finished, incomplete_runs=incomplete)


def shard_states(store: Store) -> tuple[list[str], dict[str, list[int]]]:
    """The store's sharded runs: those every shard finished, and the others with their unfinished shards
    (running, killed, interrupted or never started)."""
    shards = store._read("SELECT run_id, shard, shards, status FROM run_shards")
    finished, incomplete = [], {}
    for run_id, group in shards.groupby("run_id"):
        done = set(group.shard[group.status == "finished"])
        missing = sorted(set(range(1, int(group.shards.max()) + 1)) - done)
        if missing:
            incomplete[str(run_id)] = missing
        else:
            finished.append(str(run_id))
    return sorted(finished), incomplete


def _shards(place: str, run_shards: pa.Table, runs: pa.Table) -> pd.DataFrame:
    """Each shard row with where it was read and its run's config (the identity of the evaluation)."""
    frame = run_shards.to_pandas()
    configs = runs.select(["run_id", "name", "config_json"]).to_pandas()
    frame = frame.merge(configs, on="run_id", how="left")
    frame["place"] = place
    return frame


def _check_shards(shards: pd.DataFrame) -> None:
    """One line for the first run split two ways, or the first evaluation whose shards ran under two configs."""
    for run_id, group in shards.groupby("run_id"):
        counts = group.drop_duplicates("shards")
        if len(counts) > 1:
            first, second = counts.iloc[0], counts.iloc[1]
            raise LabInputError(f"run {run_id}: split into {first.shards} shards in {first.place} but "
                                f"{second.shards} in {second.place}; shards of one run must share --shard i/N's N")
    # an evaluation's runs share the run id's prefix (its --run-name, else benchmark and orchestrator kind)
    by_prefix: dict[str, list[pd.Series]] = {}
    for run_id, group in shards.groupby("run_id"):
        if group.shard.nunique() < int(group.shards.max()):
            by_prefix.setdefault(str(run_id).rsplit("-", 1)[0], []).append(group.iloc[0])
    for name, rows in by_prefix.items():
        if len(rows) > 1:
            difference = _first_difference(rows[0].config_json, rows[1].config_json)
            raise LabInputError(
                f"shards of evaluation {name!r} ran under different configs ({difference}): run "
                f"{rows[0].run_id} in {rows[0].place} and run {rows[1].run_id} in {rows[1].place}; re-run the "
                "odd shard with the others' flags")


def _first_difference(first: object, second: object) -> str:
    a = {k: v for k, v in json.loads(str(first or "{}")).items() if k not in _SHARD_KEYS}
    b = {k: v for k, v in json.loads(str(second or "{}")).items() if k not in _SHARD_KEYS}
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            return f"{key}: {a.get(key)!r} vs {b.get(key)!r}"
    return "same settings, another toolkit or model"


__all__ = ["MergeResult", "merge_stores", "shard_states"]
