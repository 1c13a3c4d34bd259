"""`orchestra eval --benchmark tau2:retail --tau2-agent released`: runs end to end, records the agent in the
run's config, keeps the experts' costs in the run's cost, and refuses what it cannot run in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.rollout import PolicyOutput
from lab.rollout.parse import format_tool_call
from lab.store import Store, queries
from tests.conftest import orchestra

TASKS = ["retail-5", "retail-9", "retail-36"]


class Golden:
    """A privileged orchestrator in the released format: the task's golden calls, then a closing message."""

    name = "test:golden-released"
    privileged = True

    def session(self, task: Any, specs: Any, seed: int) -> _Replies:
        calls = [format_tool_call(a["name"], a.get("arguments") or {}) for a in task.answer]
        closing = " ".join(task.meta["communicate_info"]) or "Everything is done."
        return _Replies([*calls, f"<think>done</think><message>{closing}</message>"])


class _Replies:
    def __init__(self, replies: list[str]) -> None:
        self.replies = replies

    async def generate(self, messages: list[dict[str, Any]], **_: Any) -> PolicyOutput:
        return PolicyOutput(text=self.replies.pop(0), input_tokens=50, output_tokens=10)

    def token_trajectory(self) -> None:
        return None


class AskExpert:
    """Hands its first turn to expert-2 (the default toolkit's simulated GPT-5-mini)."""

    name = "test:ask-expert"

    def session(self, task: Any, specs: Any, seed: int) -> _Replies:
        return _Replies([format_tool_call("call_expert", {"expert": "expert-2"})])


def test_retail_tasks_run_end_to_end_and_the_run_records_the_released_agent(tmp_path: Path):
    store = Store(tmp_path / "r.duckdb")
    config = EvalConfig.build(benchmark="tau2:retail", split="test", tasks=TASKS, tau2_agent="released")
    (summary,) = run_eval(config, store, Console(quiet=True), policy=Golden())
    trajs = queries.trajectories_df(store, [summary.run_id])
    assert sorted(trajs.task_id) == sorted(TASKS) and list(trajs.outcome) == [1.0, 1.0, 1.0]
    stored = json.loads(queries.run(store, summary.run_id).config_json)
    assert stored["tau2_agent"] == "released"
    lab_agent = config.model_copy(update={"tau2_agent": "lab"})  # both agents stay selectable, as separate runs
    assert lab_agent.run_id(None, 50) != config.run_id(None, 50)


def test_an_expert_call_is_a_priced_simulated_step_counted_in_the_runs_cost(tmp_path: Path):
    store = Store(tmp_path / "c.duckdb")
    config = EvalConfig.build(benchmark="tau2:retail", split="test", tasks=["retail-5"], tau2_agent="released")
    (summary,) = run_eval(config, store, Console(quiet=True), policy=AskExpert())
    steps = queries.steps_df(store, summary.run_id)
    (expert,) = steps[steps.tool_name == "call_expert"].itertuples()
    assert expert.model == "gpt-5-mini" and expert.simulated and expert.cost_usd > 0
    assert steps[steps.kind == "answer"].observation.iloc[0].startswith("[simulated gpt-5-mini]")  # its reply went to the user
    run_cost = queries.runs_summary_df(store).set_index("run_id").cost_usd[summary.run_id]
    assert run_cost == pytest.approx(expert.cost_usd) and run_cost > 0
    assert json.loads(queries.trajectories_df(store, [summary.run_id]).tool_counts_json.iloc[0]) == {"sim:gpt-5-mini": 1}


def test_a_bad_or_misplaced_tau2_agent_is_one_line_and_exit_2(tmp_path: Path):
    for args, message in [
        (["--benchmark", "tau2:retail", "--tau2-agent", "nope"], "tau2_agent: Input should be 'lab' or 'released'"),
        (["--benchmark", "frames", "--tau2-agent", "released"], "--tau2-agent released runs tau2 conversations"),
    ]:
        result = orchestra("eval", *args, "--limit", "1", db=tmp_path / "x.duckdb", timeout=300)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
