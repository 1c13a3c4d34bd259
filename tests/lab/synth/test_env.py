"""Tests for lab.synth.env.

`orchestra synth` writes verified domains a user can evaluate at once with `--benchmark toolscale:DIR`.

Also grading one rollout of a synthesized task as tau2 does (`grade_synth`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.eval.sources import load_source
from lab.store import Store, queries
from lab.synth import DOMAINS
from lab.synth.dataset import write_dataset
from lab.tools.base import AGENT_MESSAGES, ToolContext


def orchestra(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from orchestra.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=300)


def test_synth_then_eval_the_written_domains(tmp_path: Path):
    out, db = tmp_path / "toolscale", tmp_path / "s.duckdb"
    done = orchestra("synth", "--domains", "all", "--tasks-per-domain", "6", "--out", str(out), "--db", str(db),
                     "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for name in DOMAINS:
        assert {p.name for p in (out / name).iterdir()} == {"tasks.json", "split_tasks.json", "db.json", "policy.md"}
        assert report["stats"][name]["tasks/kept"] == 6 == len(json.loads((out / name / "tasks.json").read_text()))
    (run,) = [r for r in queries.runs_df(Store(db)).itertuples() if r.kind == "synth"]
    assert run.status == "finished" and json.loads(run.config_json)["stats"] == report["stats"]

    store = Store(tmp_path / "e.duckdb")
    config = EvalConfig.build(benchmark=f"toolscale:{out}", split="base", orchestrator="scripted:oracle")
    (summary,) = run_eval(config, store, Console(quiet=True))
    trajs = queries.trajectories_df(store, [summary.run_id])
    # the golden chains, played through the engine
    assert len(trajs) == 6 * len(DOMAINS) and trajs.outcome.eq(1.0).all()
    assert all(json.loads(c)["db"] for c in trajs.criteria_json)

    # and the database check is the real one: the same task without its writes fails
    source = load_source(config)
    task = next(t for t in source.tasks if any(source.tools_for(t)[a["name"]].writes for a in t.answer))
    tools, context = source.tools_for(task), ToolContext(task_id=task.task_id, task=task)

    async def reads_only() -> float:
        for action in task.answer:
            if not tools[action["name"]].writes:
                await tools[action["name"]].execute(action["arguments"], context)
        return await source.grader(task, "Done.", context)

    assert asyncio.run(reads_only()) == 0.0 and context.criteria["db"] is False


def test_an_unknown_domain_is_one_line():
    done = orchestra("synth", "--domains", "bank,casino", "--out", "/tmp/never-written")
    assert done.returncode == 2 and "unknown domain 'casino'" in done.stderr and "Traceback" not in done.stderr
    assert not Path("/tmp/never-written").exists()


def _play(source, task, calls, said: list[str]) -> tuple[float, dict]:
    tools, context = source.tools_for(task), ToolContext(task_id=task.task_id, task=task)

    async def run() -> float:
        for action in calls:
            await tools[action["name"]].execute(action["arguments"], context)
        context.state[AGENT_MESSAGES] = said
        return await source.grader(task, said[-1], context)

    return asyncio.run(run()), context.criteria


def test_the_told_value_and_the_writes_are_each_their_own_criterion(tmp_path):
    write_dataset(tmp_path / "ts", ["railway", "bank"], n_tasks=30, seed=0)
    source = load_source(EvalConfig.build(benchmark=f"toolscale:{tmp_path / 'ts'}", split="base",
                                          orchestrator="scripted:oracle"))
    tools_of = source.tools_for
    task = next(t for t in source.tasks if t.meta["communicate_info"]
                and any(tools_of(t)[a["name"]].writes for a in t.answer))
    info = task.meta["communicate_info"]

    outcome, criteria = _play(source, task, task.answer, ["All done, anything else?"])
    assert outcome == 0.0 and criteria["communicate"] is False and criteria["db"] is True

    outcome, criteria = _play(source, task, task.answer, [f"Done: {', '.join(info)}."])
    assert outcome == 1.0 and criteria == {"db": True, "communicate": True, "actions": True, "nl": True}

    reads = [a for a in task.answer if not tools_of(task)[a["name"]].writes]
    outcome, criteria = _play(source, task, reads, [f"Done: {', '.join(info)}."])
    assert (outcome == 0.0 and criteria["db"] is False and criteria["communicate"] is True
            and criteria["actions"] is False)
