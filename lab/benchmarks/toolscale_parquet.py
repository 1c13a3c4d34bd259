"""The released ToolScale parquet (nvidia/ToolScale, one row per task) read as tau2 tasks, and written.

Why a converter: the authors released their tasks as one parquet table whose layout is tau2's task
format flattened for Arrow, with four differences a tau2 loader trips on. An action names its tool
in `function_name` (tau2: `name`); every action's `arguments` is one struct holding the argument
names of *every* tool, so an action carries nulls for the arguments it does not take; dates are
Arrow timestamps (tau2: ISO strings); and `communicate_info` / `nl_assertions` may be a single
string (tau2: a list). `row_to_task` undoes each, so a row becomes exactly the `tasks.json` entry
tau2 would read. The table holds no databases or policies, so its tasks are graded by their golden
actions (as tau2 airline is here), never by database state.

`write_toolscale_parquet` writes tau2 tasks in that released layout, so the lab's own ToolScale
dataset can go to tools built for the released file (and the reader is tested on real parquet).

    tasks = load_toolscale_parquet("train-00000-of-00001.parquet")     # BenchmarkTasks by domain
    orchestra eval --benchmark toolscale:train-00000-of-00001.parquet
"""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from lab.benchmarks.base import BenchmarkTask, apply_limit
from lab.benchmarks.tau2 import SPLITS, Tau2Domain, tau2_task
from lab.errors import LabInputError

_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: evaluation_criteria fields tau2 holds as lists, which the released table may hold as one string.
_LIST_FIELDS = ("communicate_info", "nl_assertions")


def _plain(value: Any) -> Any:
    """A parquet value as tau2 JSON: timestamps as ISO text (a day alone when at midnight)."""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == datetime.min.time() else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _action(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise LabInputError(f"{where}: an action must be an object, got {type(raw).__name__}")
    name = raw.get("name") or raw.get("function_name")
    if not name:
        raise LabInputError(f"{where}: action without a name (neither 'name' nor 'function_name')")
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise LabInputError(f"{where}: action {name}: arguments must be an object")
    action = {k: _plain(v) for k, v in raw.items() if k not in ("function_name", "arguments") and v is not None}
    action["name"] = name
    action["arguments"] = {k: _plain(v) for k, v in arguments.items() if v is not None}
    return action


def row_to_task(row: dict[str, Any], where: str) -> dict[str, Any]:
    """One parquet row as a tau2 `tasks.json` entry (see the module docstring for what changes)."""
    if row.get("id") is None:
        raise LabInputError(f"{where}: row without an 'id'")
    task = {k: _plain(v) for k, v in row.items() if k != "evaluation_criteria"}
    task["id"] = str(row["id"])
    scenario = task.get("user_scenario")
    if not isinstance(scenario, dict) or not isinstance(scenario.get("instructions"), dict):
        raise LabInputError(f"{where} (task {task['id']}): user_scenario.instructions must be an object")
    if not scenario["instructions"].get("domain"):
        raise LabInputError(f"{where} (task {task['id']}): user_scenario.instructions.domain is missing")
    criteria = dict(row.get("evaluation_criteria") or {})
    criteria["actions"] = [_action(a, f"{where} (task {task['id']}) action {i}")
                           for i, a in enumerate(criteria.get("actions") or [])]
    for name in _LIST_FIELDS:
        if isinstance(criteria.get(name), str):
            criteria[name] = [criteria[name]]
    task["evaluation_criteria"] = {k: _plain(v) for k, v in criteria.items()}
    return task


def read_toolscale_parquet(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """tau2 task entries by domain (`user_scenario.instructions.domain`), in row order."""
    import pyarrow.parquet as pq  # late: only this format needs Arrow

    path = Path(path)
    if not path.is_file():
        raise LabInputError(f"{path}: no such parquet file")
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several types for a file that is not parquet
        raise LabInputError(f"{path}: not a readable parquet file ({exc})") from None
    by_domain: dict[str, list[dict[str, Any]]] = {}
    for number, row in enumerate(rows):
        task = row_to_task(row, f"{path.name} row {number}")
        by_domain.setdefault(task["user_scenario"]["instructions"]["domain"], []).append(task)
    return by_domain


def load_toolscale_parquet(path: str | Path, split: str | None = None, limit: int | None = None) -> list[BenchmarkTask]:
    """The released table as BenchmarkTasks (benchmark `tau2`, graded by golden actions: no db).

    The released file has one split; every task is a `train` task, so `split='test'` gives none.
    """
    if split is not None and split not in SPLITS:
        raise LabInputError(f"toolscale parquet: unknown split '{split}' (choose from {', '.join(SPLITS)})")
    path = Path(path)
    tasks = []
    for domain, entries in read_toolscale_parquet(path).items():
        info = Tau2Domain(name=domain, folder=path.parent)
        if split != "test":
            tasks += [tau2_task(entry, info, "train", f"{path.name} task {entry['id']}") for entry in entries]
    return apply_limit(tasks, limit)


def _released_action(action: dict[str, Any]) -> dict[str, Any]:
    return {**{k: v for k, v in action.items() if k != "name"}, "function_name": action["name"]}


def write_toolscale_parquet(tasks: list[dict[str, Any]], path: str | Path) -> Path:
    """Write tau2 task entries in the released layout: `function_name`, one arguments struct with
    every tool's argument names (null where an action lacks one), arguments that are always ISO days
    as timestamps, and communicate_info / nl_assertions as one string (or null) when every task has
    null or exactly one, so that reading the file back gives the tasks as they were."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    actions = [a for t in tasks for a in t["evaluation_criteria"].get("actions") or []]
    names = sorted({k for a in actions for k in a["arguments"]})
    days = {n for n in names if all(isinstance(v, str) and _ISO_DAY.fullmatch(v)  # an argument that is always a day
                                    for a in actions if (v := a["arguments"].get(n)) is not None)}
    single = {f for f in _LIST_FIELDS  # the released column is a string where it can be: null or one entry each
              if all(t["evaluation_criteria"].get(f) is None or len(t["evaluation_criteria"][f]) == 1 for t in tasks)}
    rows = []
    for task in tasks:
        criteria = dict(task["evaluation_criteria"])
        criteria["actions"] = [{**_released_action(a), "arguments": {
            n: datetime.fromisoformat(v) if n in days and v is not None else v
            for n in names for v in [a["arguments"].get(n)]}} for a in criteria.get("actions") or []]
        for name in single:
            criteria[name] = (criteria.get(name) or [None])[0]
        rows.append({**task, "evaluation_criteria": criteria})
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise LabInputError(f"toolscale parquet: the tasks do not fit one table ({exc}); an argument name "
                            "must hold one type across every tool") from None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path
