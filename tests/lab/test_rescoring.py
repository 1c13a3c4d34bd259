"""Rescoring logged runs whose trajectories also called benchmark tools (tau2 domain functions)."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.rescoring import rescore_run
from lab.store import Store, queries


def test_rescore_covers_benchmark_tools_and_keeps_the_threshold(tmp_path, world):
    store = Store(tmp_path / "r.duckdb")
    (summary,) = run_eval(EvalConfig(benchmark="toolscale", split="test", orchestrator="scripted:cheapest-first",
                                     limit=4, samples=2), store, Console(quiet=True))
    counted = set().union(*(json.loads(t) for t in queries.trajectories_df(store).tool_counts_json))
    assert any(not name.startswith(("sim:", "local_search", "code_interpreter")) for name in counted)
    strict = rescore_run(store, summary.run_id, "outcome=1,compute=1", std_threshold=10.0).summary()
    loose = rescore_run(store, summary.run_id, "outcome=1,compute=1", std_threshold=0.0).summary()
    assert strict["groups"] == loose["groups"] == 4 and strict["groups_kept"] == 0
    assert loose["groups_kept"] >= strict["groups_kept"]


def test_reprice_includes_the_orchestrators_own_tokens(tmp_path):
    from lab.pricing import PriceTable
    from lab.records import RunRecord, StepRecord, TrajectoryRecord
    from lab.rescoring import reprice_steps, with_orchestrator_steps

    store = Store(tmp_path / "o.duckdb")
    run = RunRecord(run_id="o", kind="eval", orchestrator="openai:qwen3-32b@http://127.0.0.1:1/v1")
    own = PriceTable.load().price("qwen3-32b").cost(10_000, 2_000)
    step = StepRecord(run_id="o", task_id="t", turn=0, tool_name="sim:gpt-5", model="gpt-5",
                      input_tokens=100, output_tokens=50, cost_usd=PriceTable.load().price("gpt-5").cost(100, 50))
    traj = TrajectoryRecord(run_id="o", task_id="t", input_tokens=10_000, output_tokens=2_000, cost_usd=own + step.cost_usd)
    store.write_run(run)
    store.write_trajectories([(traj, [step], None)])
    steps = with_orchestrator_steps(queries.steps_df(store, "o"), queries.trajectories_df(store, ["o"]), run.orchestrator)
    by_model = reprice_steps(steps, PriceTable.load("deepinfra")).set_index("model")
    assert by_model.loc["qwen3-32b", "old_cost_usd"] == pytest.approx(own)
    assert by_model.loc["qwen3-32b", "new_cost_usd"] == pytest.approx((10_000 * 0.10 + 2_000 * 0.28) / 1e6)
    assert by_model.old_cost_usd.sum() == pytest.approx(traj.cost_usd)
