"""Stores for the dashboard tests, built from records (no models, no world): two evaluation runs with
two samples per task, a training run with three logged steps and two evaluations linked to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_server import Served

from lab.records import RunRecord, TaskRecord, TrainMetricsRecord
from lab.store import Store


def build_store(path: Path, make_run) -> Path:
    store = Store(path)
    store.write_tasks([TaskRecord(benchmark="world", task_id=f"t{i}", split="test", domain="shop" if i < 3 else "maths",
                                  question=f"Question {i}?", answer_json=json.dumps(f"answer {i}"),
                                  meta_json=json.dumps({"difficulty": "easy" if i == 1 else "hard"})) for i in (1, 2, 3)])
    runs = [make_run("eval-a", {"t1": [1, 0], "t2": [1, 1], "t3": [0, 0]}, tool="gpt-5"),
            make_run("eval-b", {"t1": [1, 1], "t2": [0, 1], "t3": [1, 0]}, tool="qwen3-32b")]
    for step in (1, 3):
        runs.append(make_run(f"eval-step{step}", {"t1": [float(step == 3)], "t2": [1.0]},
                             config={"train_run_id": "train-x", "train_step": step}))
    for run, items in runs:
        store.write_run(run)
        store.write_trajectories(items)
        store.finish_run(run.run_id)
    store.write_run(RunRecord(run_id="train-x", kind="train", name="train-x", orchestrator="hf:tiny", benchmark="world"))
    store.write_train_metrics([TrainMetricsRecord(run_id="train-x", step=s, metrics_json=json.dumps(
        {"reward/mean": 0.1 * s, "loss": 1.0 / s, "filtered/format": 0.1, "tools/share/gpt-5": 0.2 * s}))
        for s in (1, 2, 3)])
    store.finish_run("train-x")
    return path


@pytest.fixture
def app_store(tmp_path, make_run, monkeypatch) -> Path:
    """A store with eval and training runs, and $ORCHESTRA_DB pointing the app at it."""
    path = build_store(tmp_path / "app.duckdb", make_run)
    monkeypatch.setenv("ORCHESTRA_DB", str(path))
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory, make_run):
    """One server per test module (starting one costs seconds); the tests only read its store."""
    server = Served(build_store(tmp_path_factory.mktemp("served") / "served.duckdb", make_run))
    server.wait_ready()
    yield server
    server.stop()
