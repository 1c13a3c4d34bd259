"""`scripted:oracle`: the cheapest tool sequence that solves each task, a *privileged* upper bound for routing.

For each task the oracle dry-runs every candidate plan through the real engine (each model's scripted
solution, and for question tasks each model answering directly) and keeps the cheapest one the grader
accepts, then plays that plan for real. It reads the grader, so it knows which answers are right: it
is a reference point ("how cheap could this accuracy have been?"), never a baseline to beat, and every
report labels it a privileged upper bound. Its plans see only the question, like any script; the
privilege is the grader. Exact only where tools are deterministic given the seed, as in the offline world.

On real tau2-bench tasks (whose simulated models cannot plan: they know nothing of real tasks) one more
plan reads the answer itself: the task's golden actions, called in order, then an answer holding the
information the user must be told. That is tau2's own gold trajectory, so the oracle's score there is
the check that the executed domain and its grading agree with tau2 (every retail task passes its DB check).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from lab.policies.scripted import Kit, Script, _ScriptSession, answer, ask_prompt, call, extract_answer, solve
from lab.rollout.config import RolloutConfig
from lab.rollout.engine import Grader, RolloutRequest, run_rollout
from lab.rollout.policy import PolicyOutput, TaskView, TokenTrajectory
from lab.task import Task
from lab.tools.base import Tool
from lab.toolspec import ToolSpec

#: How reports name it.
ORACLE_LABEL = "privileged upper bound: picks the cheapest plan the grader accepts"


def candidate_plans(view: TaskView, specs: list[ToolSpec], task: Task | None = None) -> list[Script]:
    """Every plan the oracle considers: each model's scripted solution (its own queries, and the
    cheapest generalist's), the cheapest-first cascade, and each model answering directly. The
    baselines' own plans are among them, so on a task a baseline solves the oracle is never dearer.
    For a real tau2 `task`, its golden actions come first (see the module docstring)."""
    kit = Kit(specs)
    golden = [_golden(task)] if _replayable(task, specs) else []
    models, cheapest = kit.models(), kit.generalists()[0]
    plans = [solve(view, kit, [model], escalate=False) for model in models]
    plans += [solve(view, kit, kit.generalists(), escalate=True)]
    if not kit.domain:
        plans += [solve(view, kit, [model], escalate=False, writer=cheapest) for model in models if model != cheapest]
        plans += [_direct(view, kit, model) for model in models]
    return golden + plans


def _replayable(task: Task, specs: list[ToolSpec]) -> bool:
    names = {s.name for s in specs}
    return (getattr(task, "benchmark", None) == "tau2" and task.answer_type == "actions"
            and all(isinstance(a, dict) and a.get("name") in names for a in task.answer or []))


def _golden(task: Task) -> Script:
    for action in task.answer or []:
        yield call(action["name"], **(action.get("arguments") or {}))
    yield answer(" ".join(task.meta.get("communicate_info") or []) or "Done.")


def _direct(view: TaskView, kit: Kit, model: str) -> Script:
    if kit.paper:
        yield call("answer", model=kit.slot("answer", model))
        return
    (reply,) = yield call(kit.tool_for(model), prompt=ask_prompt(view.question, []))
    yield answer(extract_answer(reply) or "unknown")


class _Memo:
    """A deterministic tool whose observations the dry runs share: the same program or query gives the
    same result, so the oracle's candidate plans need not re-run it (the real run uses the real tool)."""

    def __init__(self, tool: Tool) -> None:
        self.spec, self.tool, self.seen = tool.spec, tool, {}

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Any:
        key = json.dumps(arguments, sort_keys=True, default=str)
        if key not in self.seen:
            self.seen[key] = await self.tool.execute(arguments, context)
        return self.seen[key].model_copy(deep=True)


#: Toolkit tools that are pure functions of their arguments in the offline world.
_PURE = ("code_interpreter", "local_search")


class OraclePolicy:
    name = "scripted:oracle"
    privileged = True  # the engine hands it the whole task; it uses only what the grader says

    def __init__(self, tools: dict[str, Tool], grader: Grader,
                 task_tools: Callable[[Task], dict[str, Tool]] | None = None) -> None:
        self.tools = tools
        self.grader = grader
        self.task_tools = task_tools

    def session(self, task: Task, specs: list[ToolSpec], seed: int) -> _OracleSession:
        return _OracleSession(self, task, specs, seed)


class _PlanPolicy:
    """Plays one fixed plan; used for the dry runs."""

    name = "scripted:oracle-plan"

    def __init__(self, index: int, task: Task) -> None:
        self.index, self.task = index, task

    def session(self, task: TaskView, specs: list[ToolSpec], seed: int) -> _ScriptSession:
        return _ScriptSession(candidate_plans(task, specs, self.task)[self.index])


class _OracleSession:
    def __init__(self, policy: OraclePolicy, task: Task, specs: list[ToolSpec], seed: int) -> None:
        self.policy, self.task, self.specs, self.seed = policy, task, specs, seed
        self.view = TaskView(task.task_id, task.question)
        self.inner: _ScriptSession | None = None

    async def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       observations: list[str] | None = None) -> PolicyOutput:
        if self.inner is None:
            self.inner = _ScriptSession(candidate_plans(self.view, self.specs, self.task)[await self._best_plan()])
        return await self.inner.generate(messages, tools, observations)

    async def _best_plan(self) -> int:
        """Index of the cheapest solving plan (or the cheapest plan when none solves)."""
        scored = []
        tools = {name: _Memo(tool) if name in _PURE else tool for name, tool in self.policy.tools.items()}
        tools.update(self.policy.task_tools(self.task) if self.policy.task_tools else {})
        for index in range(len(candidate_plans(self.view, self.specs, self.task))):
            request = RolloutRequest(run_id="oracle-dry-run", task=self.task, seed=self.seed)
            result = await run_rollout(_PlanPolicy(index, self.task), tools, request, self.policy.grader,
                                       RolloutConfig(max_turns=30))
            scored.append((-result.trajectory.outcome, result.trajectory.cost_usd, index))
        return min(scored)[2] if scored else 0

    def token_trajectory(self) -> TokenTrajectory | None:
        return None


__all__ = ["ORACLE_LABEL", "OraclePolicy", "candidate_plans"]
