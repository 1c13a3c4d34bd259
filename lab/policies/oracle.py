"""`scripted:oracle`: the cheapest tool sequence that solves each task, an upper bound for routing.

For each task the oracle dry-runs every candidate plan through the real engine (answer directly, or
gather evidence first, with each model) and keeps the cheapest one that the grader accepts, then plays
that plan for real. It reads the grader, so it knows which answers are right: it is a reference point
("how cheap could this accuracy have been?"), never a baseline to beat. Exact only where tools are
deterministic given the seed, as in the offline world.
"""

from __future__ import annotations

from typing import Any, Callable

from lab.policies.scripted import Script, _ScriptSession, answer, ask_prompt, call, extract_answer, llm_tools, needs, solve_with
from lab.rollout.config import RolloutConfig
from lab.rollout.engine import Grader, RolloutRequest, run_rollout
from lab.rollout.policy import PolicyOutput, TokenTrajectory
from lab.tools.base import Tool
from lab.toolspec import ToolSpec


def candidate_plans(task: Any, specs: list[ToolSpec]) -> list[Script]:
    """Every plan the oracle considers: each model, with the evidence steps and (if the task may not
    need them) without."""
    plans = [solve_with(task, specs, [model], escalate=False) for model in llm_tools(specs)]
    if "actions" not in needs(task):
        plans += [_direct(task, model) for model in llm_tools(specs)]
    return plans


def _direct(task: Any, model: ToolSpec) -> Script:
    (reply,) = yield call(model.name, prompt=ask_prompt(task, []))
    yield answer(extract_answer(reply) or "unknown")


class OraclePolicy:
    name = "scripted:oracle"

    def __init__(self, tools: dict[str, Tool], grader: Grader, task_tools: Callable[[Any], dict[str, Tool]] | None = None) -> None:
        self.tools = tools
        self.grader = grader
        self.task_tools = task_tools

    def session(self, task: Any, specs: list[ToolSpec], seed: int) -> "_OracleSession":
        return _OracleSession(self, task, specs, seed)


class _PlanPolicy:
    """Plays one fixed plan; used for the dry runs."""

    name = "scripted:oracle-plan"

    def __init__(self, index: int) -> None:
        self.index = index

    def session(self, task: Any, specs: list[ToolSpec], seed: int) -> _ScriptSession:
        return _ScriptSession(candidate_plans(task, specs)[self.index])


class _OracleSession:
    def __init__(self, policy: OraclePolicy, task: Any, specs: list[ToolSpec], seed: int) -> None:
        self.policy, self.task, self.specs, self.seed = policy, task, specs, seed
        self.inner: _ScriptSession | None = None

    async def generate(self, messages: list[dict[str, Any]]) -> PolicyOutput:
        if self.inner is None:
            self.inner = _ScriptSession(candidate_plans(self.task, self.specs)[await self._best_plan()])
        return await self.inner.generate(messages)

    async def _best_plan(self) -> int:
        """Index of the cheapest solving plan (or the cheapest plan when none solves)."""
        scored = []
        for index in range(len(candidate_plans(self.task, self.specs))):
            request = RolloutRequest(run_id="oracle-dry-run", task=self.task, seed=self.seed)
            tools = {**self.policy.tools, **(self.policy.task_tools(self.task) if self.policy.task_tools else {})}
            result = await run_rollout(_PlanPolicy(index), tools, request, self.policy.grader, RolloutConfig(max_turns=20))
            scored.append((-result.trajectory.outcome, result.trajectory.cost_usd, index))
        return min(scored)[2] if scored else 0

    def token_trajectory(self) -> TokenTrajectory | None:
        return None


__all__ = ["OraclePolicy", "candidate_plans"]
