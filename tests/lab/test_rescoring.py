"""Rescoring logged runs whose trajectories also called benchmark tools (tau2 domain functions)."""

from __future__ import annotations

import json

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
