"""Stores for the dashboard tests, built from records (no models, no world): two evaluation runs with
two samples per task, a training run with three logged steps and two evaluations linked to it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lab.records import RunRecord, TrainMetricsRecord
from lab.store import Store


def build_store(path: Path, make_run) -> Path:
    store = Store(path)
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """`orchestra app` in a real process on a free port, ready once /_stcore/health says ok."""

    def __init__(self, db: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from lab.cli import main; main()", "app", "--db", str(db), "--port", str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"orchestra app exited: {self.process.stdout.read()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as reply:
                    if reply.read().decode().strip() == "ok":
                        return
            except OSError:
                pass
            time.sleep(0.2)  # polling a server that is starting, not synchronising with it
        raise RuntimeError(f"orchestra app not ready within {timeout_s} s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture
def served(tmp_path, make_run):
    server = Served(build_store(tmp_path / "served.duckdb", make_run))
    server.wait_ready()
    yield server
    server.stop()
