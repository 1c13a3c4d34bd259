"""`scripted:best-route`: the best *fixed* route per task family, chosen on the train split under the run's P.

Why: a learned orchestrator should beat the strongest static router a practitioner could build without
training one (the RouteLLM-style anchor). A route is a fixed plan in the paper toolkit's shape: search
with one slot while its model finds something to look up (or not at all), reason once with one slot
(or not), answer with one slot. Each candidate route runs once on the family's train tasks (simulated
models offline, so this costs seconds); for a test task, the route with the best preference score
(`lab.reward.preference_score`, Eq. 2 with the task as the group) under that task's P on its family's
train tasks is played. Nothing of the test task is read but its family and P: no answer, no facts.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lab.policies.scripted import _ScriptSession, call
from lab.reward import feature_matrix, preference_score
from lab.rollout.config import RolloutConfig
from lab.rollout.policy import PolicyOutput, TaskView, TokenTrajectory
from lab.task import Task
from lab.tools.base import Tool
from lab.tools.paper import NOTHING_TO_SEARCH
from lab.toolspec import ToolSpec

#: (search slot or None, reasoning slot or None, answer slot)
Route = tuple[str | None, str | None, str]
#: Searches per route at most (the world's questions have 2-4 hops), as the scripted flows.
MAX_HOPS = 4
#: Train tasks per family each route is measured on.
TRAIN_TASKS_PER_FAMILY = 48


def route_name(route: Route) -> str:
    search, reason, answer = route
    return f"{search or 'no-search'}/{reason or 'no-reasoning'}/{answer}"


def candidate_routes(specs: list[ToolSpec]) -> list[Route]:
    """Every route the catalog allows: each search slot or none, each reasoning slot or none, each answer slot."""
    slots = {s.name: list(s.slots) for s in specs if s.slots}
    if "answer" not in slots:
        return []
    return list(itertools.product([None, *slots.get("search", [])],
                                  [None, *slots.get("enhance_reasoning", [])], slots["answer"]))


def play(route: Route) -> Any:
    """The route as a script of round texts; it reads back each call's observation."""
    search, reason, answer = route
    if search:
        for _ in range(MAX_HOPS):
            (found,) = yield call("search", model=search)
            if NOTHING_TO_SEARCH in found:
                break
    if reason:
        yield call("enhance_reasoning", model=reason)
    yield call("answer", model=answer)


class _FixedRoute:
    """Plays one route (the table's measuring runs)."""

    def __init__(self, route: Route) -> None:
        self.route, self.name = route, f"scripted:route:{route_name(route)}"

    def session(self, task: Task, specs: list[ToolSpec], seed: int) -> _ScriptSession:
        return _ScriptSession(play(self.route))


@dataclass
class RouteTable:
    """Each route's results on each family's train tasks."""

    features: list[str]
    rows: list[dict[str, Any]]  # family, route, task_id, tool_counts, outcome, cost_usd, latency_s

    def best(self, family: str, preference: dict[str, float]) -> Route | None:
        """The family's route with the highest preference score under P (ties: the cheaper)."""
        rows = [r for r in self.rows if r["family"] == family] or self.rows
        if not rows:
            return None
        M = feature_matrix([r["tool_counts"] for r in rows], [r["outcome"] for r in rows],
                           [r["cost_usd"] for r in rows], [r["latency_s"] for r in rows], self.features)
        P = np.array([preference.get(name, 0.0) for name in [*self.features, "outcome", "compute", "latency"]])
        if not P.any():
            P[len(self.features)] = 1.0  # no stated preference: accuracy
        names = [route_name(r["route"]) for r in rows]
        scores = preference_score(M, P, names, [r["task_id"] for r in rows])
        cost: dict[str, float] = {}
        for name, row in zip(names, rows):
            cost[name] = cost.get(name, 0.0) + row["cost_usd"]
        winner = max(scores, key=lambda name: (round(scores[name], 9), -cost[name]))
        return next(r["route"] for r in rows if route_name(r["route"]) == winner)


class BestRoutePolicy:
    """See the module docstring. `train_tasks` are the benchmark's train split, `grader` its grader."""

    name = "scripted:best-route"

    def __init__(self, tools: dict[str, Tool], grader: Any, train_tasks: list[Task], features: list[str],
                 config: RolloutConfig | None = None,
                 task_tools: Callable[[Task], dict[str, Tool]] | None = None) -> None:
        self.tools, self.grader, self.features = tools, grader, features
        self.config = config or RolloutConfig(max_turns=12)
        self.task_tools = task_tools
        by_family: dict[str, list[Any]] = {}
        for task in train_tasks:
            by_family.setdefault(str(getattr(task, "family", "") or ""), []).append(task)
        self.train_tasks = [t for tasks in by_family.values() for t in tasks[:TRAIN_TASKS_PER_FAMILY]]
        self._table: RouteTable | None = None
        self._lock = asyncio.Lock()

    async def table(self) -> RouteTable:
        """Measure every route on the train tasks (once per policy)."""
        async with self._lock:
            if self._table is None:
                self._table = await self._measure()
        return self._table

    async def _measure(self) -> RouteTable:
        from lab.rollout.engine import RolloutRequest, run_rollout

        specs = [tool.spec for tool in self.tools.values()]
        rows: list[dict[str, Any]] = []

        async def one(route: Route, task: Task) -> None:
            tools = {**self.tools, **(self.task_tools(task) if self.task_tools else {})}
            request = RolloutRequest(run_id="best-route-train", task=task, seed=0)
            result = await run_rollout(_FixedRoute(route), tools, request, self.grader, self.config)
            t = result.trajectory
            rows.append({"family": str(getattr(task, "family", "") or ""), "route": route, "task_id": task.task_id,
                         "tool_counts": {k: v for k, v in json.loads(t.tool_counts_json).items() if k in self.features},
                         "outcome": t.outcome, "cost_usd": t.cost_usd, "latency_s": t.latency_s})

        await asyncio.gather(*(one(route, task) for route in candidate_routes(specs) for task in self.train_tasks))
        rows.sort(key=lambda r: (r["family"], route_name(r["route"]), r["task_id"]))  # independent of completion order
        return RouteTable(self.features, rows)

    def session(self, task: TaskView, specs: list[ToolSpec], seed: int) -> _BestRouteSession:
        return _BestRouteSession(self, task)


class _BestRouteSession:
    def __init__(self, policy: BestRoutePolicy, view: TaskView) -> None:
        self.policy, self.view = policy, view
        self.inner: _ScriptSession | None = None

    async def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       observations: list[str] | None = None) -> PolicyOutput:
        if self.inner is None:
            table = await self.policy.table()
            route = table.best(self.view.family, dict(self.view.preference))
            if route is None:
                return PolicyOutput(text="<answer>no route: the toolkit has no answer slot</answer>")
            self.inner = _ScriptSession(play(route))
        return await self.inner.generate(messages, tools, observations)

    def token_trajectory(self) -> TokenTrajectory | None:
        return None
