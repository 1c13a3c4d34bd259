"""What the dashboard tests build and drive: a store of eval and training runs, a page of the app in
Streamlit's AppTest, and `orchestra app` in a real process (for the browser test)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from streamlit.testing.v1 import AppTest

import app
from lab.records import RunRecord, TaskRecord, TrainMetricsRecord
from lab.store import Store
from orchestra.cli.dashboard import free_port, wait_healthy

#: the app's entry file, the router every AppTest starts from
MAIN = str(Path(app.__file__).parent / "main.py")


def started() -> AppTest:
    """The app as a user first opens it (the runs page), run once."""
    return AppTest.from_file(MAIN, default_timeout=120).run()


def on(page: str, at: AppTest | None = None, **params: str) -> AppTest:
    """The page at url path `page`, opened with `params` in its URL, as a link would open it."""
    at = at or started()
    for key, value in params.items():
        at.query_params[key] = value
    return at.switch_page(f"views/{page}.py").run()


def problems(at: AppTest) -> list[str]:
    """Every exception and `st.error` the last run showed."""
    return [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]


def charts(at: AppTest) -> list[go.Figure]:
    """The plotly figures the last run drew, read back from the JSON the page sent, with plotly's packed
    arrays (`{"dtype": "f8", "bdata": ...}`) unpacked into lists."""
    return [go.Figure(_unpacked(json.loads(chart.proto.spec))) for chart in at.get("plotly_chart")]


def _unpacked(value):
    if isinstance(value, dict) and set(value) >= {"dtype", "bdata"}:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(n) for n in str(value.get("shape", len(array))).split(",")]   # e.g. "3, 1"
        return array.reshape(shape).tolist()
    if isinstance(value, dict):
        return {key: _unpacked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unpacked(item) for item in value]
    return value


def assert_renders(page: str) -> AppTest:
    """Every page's first check, on a seeded store: it opens with its title and shows no exception or error."""
    at = on(page)
    assert problems(at) == []
    assert at.title and at.title[0].value
    return at


def assert_says_the_store_is_empty(page: str) -> None:
    """Every page's check on an empty store: no exception, and the one line saying what to do."""
    at = on(page)
    assert not at.exception and "No runs in" in at.info[0].value


class Served:
    """`orchestra app` in a real process on a free port, ready once /_stcore/health says ok."""

    def __init__(self, db: Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
        """`cwd` and `env` as a user's shell would have them (the demo's folder, its cache), for a store whose
        runs name models by relative paths."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from orchestra.cli import main; main()",
             "app", "--db", str(db), "--port", str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env={**os.environ, **(env or {})})

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        wait_healthy(self.url, self.process, timeout_s)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def build_store(path: Path, make_run) -> Path:
    """Two evaluation runs with two samples per task, a training run with three logged steps and two
    evaluations linked to it, at `path`; `make_run` is the `make_run` fixture of `tests/conftest.py`."""
    store = Store(path)
    store.write_tasks([TaskRecord(benchmark="world", task_id=f"t{i}", split="test",
                                  domain="shop" if i < 3 else "maths", question=f"Question {i}?",
                                  answer_json=json.dumps(f"answer {i}"),
                                  meta_json=json.dumps({"difficulty": "easy" if i == 1 else "hard"}))
                       for i in (1, 2, 3)])
    runs = [make_run("eval-a", {"t1": [1, 0], "t2": [1, 1], "t3": [0, 0]}, tool="gpt-5"),
            make_run("eval-b", {"t1": [1, 1], "t2": [0, 1], "t3": [1, 0]}, tool="qwen3-32b")]
    for step in (1, 3):
        runs.append(make_run(f"eval-step{step}", {"t1": [float(step == 3)], "t2": [1.0]},
                             config={"train_run_id": "train-x", "train_step": step}))
    for run, items in runs:
        store.write_run(run)
        store.write_trajectories(items)
        store.finish_run(run.run_id)
    store.write_run(RunRecord(run_id="train-x", kind="train", name="train-x", orchestrator="hf:tiny",
                              benchmark="world"))
    store.write_train_metrics([TrainMetricsRecord(run_id="train-x", step=s, metrics_json=json.dumps(
        {"reward/mean": 0.1 * s, "loss": 1.0 / s, "filtered/format": 0.1, "tools/share/gpt-5": 0.2 * s}))
        for s in (1, 2, 3)])
    store.finish_run("train-x")
    return path
