"""`orchestra demo` (the README's main job) runs offline end to end."""

from __future__ import annotations

import os
import subprocess
import sys

from lab.store import Store, queries


def test_demo_compares_four_orchestrators_and_writes_figures(tmp_path, world):
    result = subprocess.run(
        [sys.executable, "-c", "from lab.cli import main; main()", "demo", "--limit", "6",
         "--db", str(tmp_path / "demo.duckdb"), "--html", str(tmp_path / "demo.html")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    runs = queries.runs_summary_df(Store(tmp_path / "demo.duckdb"))
    assert sorted(runs.orchestrator) == sorted(["scripted:cheapest-first", "scripted:always-strongest",
                                                "scripted:qwen3-8b-prompted", "scripted:oracle"])
    assert (runs.trajectories == 6).all() and (runs.status == "finished").all()
    assert "(simulated)" in result.stdout and "Pareto frontier" in result.stdout
    assert (tmp_path / "demo.html").read_text().count("<div") >= 4
