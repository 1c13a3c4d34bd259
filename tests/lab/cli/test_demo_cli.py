"""`orchestra demo` (the README's main job) runs offline end to end, and every next step it prints works."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from lab.store import Store, queries

ORCHESTRATORS = ["scripted:cheapest-first", "scripted:always-strongest", "scripted:qwen3-8b-prompted", "scripted:oracle"]


def orchestra(*args: str, cwd, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from lab.cli import main; main()", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def test_demo_compares_four_orchestrators_on_both_toolkits_and_its_next_steps_work(tmp_path, world):
    db = tmp_path / "demo.duckdb"
    result = orchestra("demo", "--limit", "6", "--db", str(db), "--html", str(tmp_path / "demo.html"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    runs = queries.runs_summary_df(Store(db))
    assert sorted(runs.orchestrator) == sorted(ORCHESTRATORS * 2)
    assert (runs.trajectories == 6).all() and (runs.status == "finished").all() and (runs.errors == 0).all()
    assert "(simulated)" in result.stdout and "Pareto frontier" in result.stdout
    assert "scripted:oracle (privileged upper bound)" in result.stdout
    assert "answer-1" in result.stdout  # the paper toolkit's slots appear among the tool calls
    assert (tmp_path / "demo.html").read_text().count("<div") >= 4
    hints = [line.removeprefix("next: ") for line in result.stdout.splitlines() if line.startswith("next: ")]
    assert len(hints) == 3
    for hint in hints:
        args = shlex.split(hint)
        assert args[0] == "orchestra"
        done = orchestra(*args[1:], "--json", cwd=tmp_path)
        assert done.returncode == 0, (hint, done.stderr)
        assert '"run_id"' in done.stdout or '"run_ids"' in done.stdout
    rescored = orchestra(*shlex.split(hints[0])[1:], "--json", cwd=tmp_path).stdout
    assert '"preference_score"' in rescored  # a meaningful score, not the zeros of a one-member group
