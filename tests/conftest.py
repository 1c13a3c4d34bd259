"""Shared fixtures: a tiny store with one logged run, built from records (no models, no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from lab.records import RunRecord, StepRecord, TrajectoryRecord
from lab.store import Store
from lab.toolspec import Toolkit

# shared checks in tests/helpers (e.g. `assert_renders`) report their failures as a test's own asserts do
pytest.register_assert_rewrite("tests.helpers")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

#: The trainer tests' model: a 1-layer Qwen3 on the world's tokenizer, built locally in seconds.
TINY_MODEL = {"tokenizer": "world", "vocab_size": 1024, "hidden_size": 32, "num_hidden_layers": 1,
              "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 64}

TINY_TOOLKIT = {
    "name": "tiny",
    "tools": [
        {"name": "local_search", "category": "basic", "description": "Search the local corpus.",
         "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
        {"name": "gpt-5", "category": "generalist", "model": "gpt-5", "description": "Strong, expensive."},
        {"name": "qwen3-32b", "category": "generalist", "model": "qwen3-32b", "description": "Open, cheap."},
    ],
}


def tiny_toolkit() -> Toolkit:
    return Toolkit.from_dict(TINY_TOOLKIT)


def logged_run(run_id: str = "run-a", outcomes: tuple[float, ...] = (1, 1, 0, 1, 1, 0, 1, 1)) -> tuple[RunRecord, list]:
    """A run of 2 tasks x 4 samples; sample i calls gpt-5 (i even) or qwen3-32b (i odd) once, with
    token counts that make gpt-5 calls cost more."""
    toolkit = tiny_toolkit()
    run = RunRecord(run_id=run_id, kind="eval", name="tiny", toolkit_json=toolkit.model_dump_json(),
                    orchestrator="scripted:test", benchmark="world")
    items = []
    for k, outcome in enumerate(outcomes):
        task_id, sample = f"t{k // 4}", k % 4
        tool = "gpt-5" if sample % 2 == 0 else "qwen3-32b"
        spec = toolkit.get(tool)
        inp, out = 1000 + 100 * sample, 400 + 50 * sample
        cost = spec.cost(inp, out)
        steps = [
            StepRecord(run_id=run_id, task_id=task_id, sample_idx=sample, turn=0, tool_name="local_search",
                       arguments_json=json.dumps({"query": "q"}), observation="passages", latency_s=0.2),
            StepRecord(run_id=run_id, task_id=task_id, sample_idx=sample, turn=1, tool_name=tool, model=spec.model,
                       input_tokens=inp, output_tokens=out, cost_usd=cost, latency_s=5.0 + sample),
            StepRecord(run_id=run_id, task_id=task_id, sample_idx=sample, turn=2, kind="answer", observation="42"),
        ]
        traj = TrajectoryRecord(
            run_id=run_id, task_id=task_id, sample_idx=sample, group_id=task_id, outcome=outcome, final_answer="42",
            n_turns=3, cost_usd=cost, latency_s=5.2 + sample, benchmark="world",
            tool_counts_json=json.dumps({"local_search": 1, tool: 1}), preference_json=json.dumps({"outcome": 1}),
        )
        items.append((traj, steps, None))
    return run, items


@pytest.fixture
def tiny_store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "tiny.duckdb")
    run, items = logged_run()
    store.write_run(run)
    store.write_trajectories(items)
    store.finish_run(run.run_id)
    return store


@pytest.fixture(scope="session")
def world():
    """The offline world as users get it (built once per machine and cached; ~2 min the first time)."""
    from lab.world.build import build_world

    return build_world(progress=False)


def task_run(run_id: str, outcomes: dict[str, list[float]], tool: str = "gpt-5", orchestrator: str = "scripted:test",
             config: dict | None = None) -> tuple[RunRecord, list]:
    """A run with `outcomes[task]` as the outcome of each sample of each task, over the tiny toolkit.

    Every trajectory calls local_search once (free, 0.2 s) and `tool` once with 1000 input and 400
    output tokens (its cost under the default prices, 5 s), so cost and latency are known by hand."""
    toolkit = tiny_toolkit()
    spec = toolkit.get(tool)
    run = RunRecord(run_id=run_id, kind="eval", name=run_id, toolkit_json=toolkit.model_dump_json(),
                    orchestrator=orchestrator,
                    benchmark="world", config_json=json.dumps(config or {}))
    items = []
    for task_id, samples in outcomes.items():
        for sample, outcome in enumerate(samples):
            cost = spec.cost(1000, 400)
            steps = [
                StepRecord(run_id=run_id, task_id=task_id, sample_idx=sample, turn=0, tool_name="local_search",
                           latency_s=0.2),
                StepRecord(run_id=run_id, task_id=task_id, sample_idx=sample, turn=1, tool_name=tool, model=spec.model,
                           input_tokens=1000, output_tokens=400, cost_usd=cost, latency_s=5.0),
                StepRecord(run_id=run_id, task_id=task_id, sample_idx=sample, turn=2, kind="answer", observation="42"),
            ]
            traj = TrajectoryRecord(
                run_id=run_id, task_id=task_id, sample_idx=sample, group_id=task_id, outcome=outcome, n_turns=3,
                cost_usd=cost, latency_s=5.2, benchmark="world",
                tool_counts_json=json.dumps({"local_search": 1, tool: 1}),
                preference_json=json.dumps({"outcome": 1, "compute": 1}),
            )
            items.append((traj, steps, None))
    return run, items


@pytest.fixture
def store_of(tmp_path: Path):
    """`store_of(run, run, ...)`: a fresh store holding these (RunRecord, items) pairs, each finished."""
    def build(*runs: tuple[RunRecord, list]) -> Store:
        store = Store(tmp_path / "runs.duckdb")
        for run, items in runs:
            store.write_run(run)
            if items:
                store.write_trajectories(items)
            store.finish_run(run.run_id)
        return store
    return build


@pytest.fixture(scope="session")
def make_run():
    """The `task_run` builder, for test modules (which cannot import conftest by name)."""
    return task_run


@dataclass
class DemoResult:
    """`orchestra demo --quick --no-app` as a user runs it: its store, its working folder, what it printed."""

    db: Path
    cwd: Path
    stdout: str
    stderr: str
    #: The `$ORCHESTRA_CACHE` it ran on: empty when it started, so the demo built its world and models.
    cache: Path


def orchestra(*args: str, db: Path | None = None, cwd: Path | None = None, timeout: int = 900,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The `orchestra` command in a real process, on the store `db` when given (wide columns, so printed
    lines are not wrapped), with `env` added to the environment."""
    extra = ["--db", str(db)] if db is not None else []
    return subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", *args, *extra],
                          capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env={**os.environ, "COLUMNS": "250", **(env or {})})


@pytest.fixture(scope="session")
def quick_demo(tmp_path_factory, world) -> DemoResult:
    """The quick demo from an empty cache, run once per session: the small store the demo and notebook
    tests read (copy it before writing to it), and everything it printed on the way."""
    cwd = tmp_path_factory.mktemp("demo")
    cache = tmp_path_factory.mktemp("demo-cache")
    db = cwd / "demo.duckdb"
    result = orchestra("demo", "--quick", "--no-app", "--db", str(db), "--html", str(cwd / "demo.html"), cwd=cwd,
                       env={"ORCHESTRA_CACHE": str(cache)})
    assert result.returncode == 0, result.stderr[-4000:]
    return DemoResult(db=db, cwd=cwd, stdout=result.stdout, stderr=result.stderr, cache=cache)
