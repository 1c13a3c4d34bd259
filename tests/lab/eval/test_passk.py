"""Tests for the pass@N build filter (lab.eval.passk, `orchestra synth --solver ... --pass-at N`).

What a user would notice: tasks that every rollout of every solver solves are dropped (too easy to
teach anything), tasks none solves are dropped only when asked, a task is never judged on fewer
rollouts than N per solver (errored rollouts do not count either way), the folders are rewritten
consistently (tasks and splits agree), and the counts land in the synth run's statistics.
"""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from lab.eval.passk import ALL_SOLVED, NONE_SOLVED, pass_at_n_filter, solved_counts, verdict
from lab.records import RunRecord, TrajectoryRecord
from lab.store import Store
from lab.synth.dataset import write_dataset
from lab.synth.export import import_domain


@given(st.integers(0, 20), st.integers(0, 20), st.integers(1, 16), st.booleans())
def test_verdict_needs_every_rollout(solved, extra, expected, drop_unsolved):
    total = solved + extra
    outcome = verdict(solved, total, expected, drop_unsolved)
    if total < expected:
        assert outcome is None  # too few rollouts finished to say anything
    elif solved == total:
        assert outcome == ALL_SOLVED
    elif solved == 0:
        assert outcome == (NONE_SOLVED if drop_unsolved else None)
    else:
        assert outcome is None


def test_errored_rollouts_count_neither_way(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    store.write_run(RunRecord(run_id="r", kind="eval"))
    items = [(TrajectoryRecord(run_id="r", task_id="bank-1", sample_idx=i, outcome=1.0), [], None) for i in range(2)]
    items += [(TrajectoryRecord(run_id="r", task_id="bank-1", sample_idx=2, outcome=0.0, status="error",
                                error="HTTP 500"), [], None)]
    store.write_trajectories(items)
    assert solved_counts(store, ["r"]) == {"bank-1": (2, 2)}
    assert verdict(*solved_counts(store, ["r"])["bank-1"], expected=3, drop_unsolved=True) is None


def test_a_solver_that_solves_everything_empties_the_folder(tmp_path):
    write_dataset(tmp_path / "ts", ["bank", "railway"], n_tasks=3, seed=0)
    store = Store(tmp_path / "s.duckdb")
    stats = pass_at_n_filter(tmp_path / "ts", ["bank"], ["scripted:oracle"], 2, store, console=Console(quiet=True))
    assert stats["bank"][ALL_SOLVED] == 3 and stats["bank"]["tasks/kept"] == 0
    bank = import_domain(tmp_path / "ts" / "bank")
    assert bank.tasks == [] and all(ids == [] for ids in bank.splits.values())
    assert len(import_domain(tmp_path / "ts" / "railway").tasks) == 3  # a domain not named is left alone


def test_a_mix_of_solvers_keeps_what_some_fail(tmp_path):
    write_dataset(tmp_path / "ts", ["railway"], n_tasks=3, seed=0)
    store = Store(tmp_path / "s.duckdb")
    before = import_domain(tmp_path / "ts" / "railway")
    stats = pass_at_n_filter(tmp_path / "ts", ["railway"], ["scripted:oracle", "scripted:cheapest-first"], 2, store,
                             drop_unsolved=True, console=Console(quiet=True))
    assert stats["railway"] == {**stats["railway"], ALL_SOLVED: 0, NONE_SOLVED: 0, "tasks/kept": 3}
    assert import_domain(tmp_path / "ts" / "railway") == before


def test_cli_records_the_pass_at_n_counts(tmp_path):
    out, db = tmp_path / "ts", tmp_path / "s.duckdb"
    done = subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", "synth", "--domains", "bank",
                           "--tasks-per-domain", "3", "--out", str(out), "--db", str(db), "--solver",
                           "scripted:cheapest-first", "--pass-at", "2", "--drop-unsolved", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["stats"]["bank"]
    assert stats[NONE_SOLVED] == 3 and stats["tasks/kept"] == 0 and stats["tasks/generated"] >= 3
