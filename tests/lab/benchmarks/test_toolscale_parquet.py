"""Tests for the released ToolScale parquet layout (lab.benchmarks.toolscale_parquet).

The released file is not here, so rows are written in its layout: `function_name`, one arguments
struct holding every tool's argument names (null where an action lacks one), dates as Arrow
timestamps, single-string communicate_info. What a user would notice: such a file loads as the
tau2 tasks it encodes, nothing lost or invented; a bad row is one line naming it; and
`--benchmark toolscale:FILE.parquet` runs and grades by golden actions (no database to check).
"""

from __future__ import annotations

import json
from datetime import datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from lab.benchmarks import load_benchmark
from lab.benchmarks.toolscale_parquet import read_toolscale_parquet, row_to_task, write_toolscale_parquet
from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.store import Store, queries
from lab.synth import build_domain

RELEASED_ROW = {  # shaped like the published rows: nulls for other tools' arguments, a timestamp date
    "id": "10315",
    "description": {"purpose": "", "relevant_policies": None, "notes": None},
    "user_scenario": {"persona": None, "instructions": {
        "task_instructions": "Ask for tomorrow's forecast.", "reason_for_call": "Planning a rooftop party.",
        "known_info": "You live in Albuquerque.", "unknown_info": "", "domain": "weather"}},
    "initial_state": None,
    "evaluation_criteria": {
        "actions": [{"action_id": "a0", "function_name": "get_forecast",
                     "arguments": {"city": "Albuquerque", "start_date": datetime(2025, 9, 6), "player_id": None,
                                   "expression": None}},
                    {"action_id": "a1", "function_name": "calculate",
                     "arguments": {"city": None, "start_date": None, "player_id": None, "expression": "19.5 - 7"}}],
        "communicate_info": "19:42", "nl_assertions": None},
}


def _write_rows(rows, path):
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_a_released_row_becomes_the_tau2_task_it_encodes(tmp_path):
    (task,) = read_toolscale_parquet(_write_rows([RELEASED_ROW], tmp_path / "t.parquet"))["weather"]
    criteria = task["evaluation_criteria"]
    assert criteria["actions"] == [
        {"action_id": "a0", "name": "get_forecast", "arguments": {"city": "Albuquerque", "start_date": "2025-09-06"}},
        {"action_id": "a1", "name": "calculate", "arguments": {"expression": "19.5 - 7"}}]
    assert criteria["communicate_info"] == ["19:42"] and criteria["nl_assertions"] is None
    assert (task["id"] == "10315"
            and task["user_scenario"]["instructions"]["reason_for_call"] == "Planning a rooftop party.")
    (loaded,) = load_benchmark(f"toolscale:{tmp_path / 't.parquet'}")
    assert loaded.task_id == "weather-10315" and loaded.domain == "weather" and loaded.answer == criteria["actions"]
    assert loaded.meta["communicate_info"] == ["19:42"] and loaded.meta["db_path"] is None


def test_the_lab_dataset_survives_the_released_layout(tmp_path):
    tasks = {name: build_domain(name, 6, seed=0)[2] for name in ("bank", "railway")}
    path = write_toolscale_parquet([t for name in tasks for t in tasks[name]], tmp_path / "ts.parquet")
    schema = pq.read_schema(path)
    action = schema.field("evaluation_criteria").type.field("actions").type.value_type
    assert action.get_field_index("function_name") >= 0 and action.get_field_index("name") < 0
    arguments = action.field("arguments").type
    assert pa.types.is_timestamp(arguments.field("date").type)  # railway's travel day, as the release stores dates
    assert {"email", "account_id", "train_id"} <= {arguments.field(i).name for i in range(arguments.num_fields)}
    assert read_toolscale_parquet(path) == tasks  # every field back, nulls of other tools' arguments dropped


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.one_of(st.none(), st.integers(), st.text(max_size=5))))
def test_null_arguments_are_dropped_and_the_rest_kept(arguments):
    row = {**RELEASED_ROW, "evaluation_criteria": {"actions": [{"function_name": "f", "arguments": arguments}]}}
    (action,) = row_to_task(row, "row 0")["evaluation_criteria"]["actions"]
    assert action["arguments"] == {k: v for k, v in arguments.items() if v is not None}


@pytest.mark.parametrize("change, message", [
    (lambda r: r["user_scenario"]["instructions"].pop("domain"),
     "row 0 .task 10315.: user_scenario.instructions.domain"),
    (lambda r: r["evaluation_criteria"]["actions"][0].pop("function_name"), "action 0: action without a name"),
    (lambda r: r.pop("id"), "row 0: row without an 'id'"),
])
def test_a_bad_row_is_one_line_naming_it(tmp_path, change, message):
    row = json.loads(json.dumps(RELEASED_ROW, default=str))
    change(row)
    with pytest.raises(LabInputError, match=message):
        read_toolscale_parquet(_write_rows([row], tmp_path / "bad.parquet"))


def test_a_file_that_is_not_parquet_is_refused(tmp_path):
    (tmp_path / "x.parquet").write_text("id,question\n1,hi\n")
    with pytest.raises(LabInputError, match="x.parquet: not a readable parquet file"):
        read_toolscale_parquet(tmp_path / "x.parquet")


def test_eval_on_the_parquet_grades_by_golden_actions(tmp_path):
    path = write_toolscale_parquet(build_domain("bank", 3, seed=0)[2], tmp_path / "ts.parquet")
    store = Store(tmp_path / "s.duckdb")
    (summary,) = run_eval(EvalConfig.build(benchmark=f"toolscale:{path}", split=None, orchestrator="scripted:oracle"),
                          store, Console(quiet=True))
    trajs = queries.trajectories_df(store, [summary.run_id])
    assert len(trajs) == 3 and trajs.outcome.eq(1.0).all()
    assert all(json.loads(c) == {"db": None, "communicate": None, "actions": True,
                                 "nl": None} for c in trajs.criteria_json)
