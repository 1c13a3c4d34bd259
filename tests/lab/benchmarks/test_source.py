"""Tests for lab.benchmarks.source.

Adding a benchmark is one new module: `tests/helpers/arith_benchmark.py` defines `arith`, and the real
`orchestra eval --benchmark tests/helpers/arith_benchmark.py` runs it, stores its rollouts and reports an
accuracy, no lab file edited; imported first (as a built-in or a plugin is), it is selectable by name.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from lab.store import Store, queries
from lab.tools.base import ToolContext
from tests.conftest import REPO, orchestra

ARITH = REPO / "tests" / "helpers" / "arith_benchmark.py"
WITH_ARITH = "import tests.helpers.arith_benchmark; from orchestra.cli import main; main()"


def orchestra_with_arith(*args: str) -> subprocess.CompletedProcess:
    """`orchestra` in its own process, the arith module imported first (as a plugin would be)."""
    return subprocess.run([sys.executable, "-c", WITH_ARITH, *args], capture_output=True, text=True, timeout=600,
                          cwd=REPO, env={**os.environ, "COLUMNS": "250"})


def test_a_benchmark_in_one_module_file_runs_through_orchestra_eval(tmp_path: Path):
    db = tmp_path / "runs.duckdb"
    result = orchestra("eval", "--benchmark", str(ARITH), "--orchestrator", "scripted:cheapest-first",
                       "--db", str(db), "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = json.loads(result.stdout)
    assert row["run_id"].startswith("arith-scripted-")  # the source's name, not the file's path
    store = Store(db)
    trajs = queries.trajectories_df(store, [row["run_id"]])
    assert sorted(trajs.task_id) == ["arith-0", "arith-1", "arith-2"] and set(trajs.benchmark) == {"arith"}
    # the simulated models know no sums, so the script answers "unknown" and exact match marks it wrong
    assert set(trajs.final_answer) == {"unknown"} and row["accuracy"] == trajs.outcome.mean() == 0.0
    assert queries.runs_df(store).benchmark.tolist() == ["arith"]

    again = orchestra("eval", "--benchmark", f"{ARITH}:2", "--db", str(db), "--json")
    assert again.returncode == 0, again.stderr[-3000:]
    (row2,) = json.loads(again.stdout)
    assert row2["trajectories"] == 2 and row2["run_id"].startswith("arith-2-scripted-")  # its qualifier is its own


def test_a_module_file_that_is_no_benchmark_is_refused_in_one_line(tmp_path: Path):
    plain = tmp_path / "plain.py"
    plain.write_text("X = 1\n")
    for value, said in [(str(plain), "the module defines no SOURCE = BenchmarkSource(...)"),
                        (str(tmp_path / "absent.py"), "no such file")]:
        result = orchestra("eval", "--benchmark", value, "--db", str(tmp_path / "runs.duckdb"))
        assert result.returncode == 2 and said in result.stderr and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs.duckdb").exists()


def test_a_module_imported_first_is_selectable_by_name(tmp_path: Path):
    db = tmp_path / "runs.duckdb"
    result = orchestra_with_arith("eval", "--benchmark", "arith:2", "--db", str(db), "--json")
    assert result.returncode == 0 and json.loads(result.stdout)[0]["trajectories"] == 2, result.stderr[-3000:]


def test_the_registry_names_it_in_help_and_validation():
    result = orchestra_with_arith("eval", "--help")
    assert "arith[:N]" in result.stdout
    refused = orchestra_with_arith("eval", "--benchmark", "gsm8k")
    assert (refused.returncode == 2
            and "expected one of world, frames, hle, tau2, toolscale, bfcl, arith" in refused.stderr)


def test_its_grader_is_the_one_a_run_grades_with(monkeypatch):
    from lab.benchmarks import source as registry
    from lab.eval.config import EvalConfig
    from lab.eval.sources import load_source

    # registered in a copy of the registry, so the other tests of this process see only the built-in benchmarks
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.delitem(sys.modules, "tests.helpers.arith_benchmark", raising=False)
    importlib.import_module("tests.helpers.arith_benchmark")

    source = load_source(EvalConfig.build(benchmark="arith"))
    task = source.tasks[1]
    graded = [asyncio.run(source.grader(task, answer,
                                        ToolContext(task_id=task.task_id, task=task))) for answer in ("42", "41")]
    assert (task.question, graded) == ("What is 40 + 2?", [1.0, 0.0])
