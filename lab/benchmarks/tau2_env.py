"""tau2-bench retail as a live environment: its 16 tools behind the lab's Tool interface, per rollout.

Why state lives in the rollout's context: the tools are shared by every concurrent rollout, but each
must act on its own copy of the shop. The first retail call of a rollout puts a `RetailSession` (a
copy of the canonical db.json) into `context.state[DOMAIN]`; later calls of that rollout see its
changes and no other rollout does. Every call is logged in order, errors included, because tau2's
DB check replays the trajectory's write calls (§3.2 of TOOLS.md), never the live state.

Tools are called as tau2 calls them: keyword arguments exactly as the orchestrator wrote them, with no
schema validation or coercion, so a wrong type fails the way it fails in tau2 (`tau2_retail.call`).

    tools = retail_tools()
    ctx = ToolContext(task_id=task.task_id, task=task)
    obs = await tools["get_order_details"].execute({"order_id": "#W2378156"}, ctx)
    outcome = await grade_retail(task, answer, ctx)   # fills ctx.criteria
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from lab.benchmarks.tau2_grading import gold_db, judge_retail, outcome_of
from lab.benchmarks.tau2_retail import TOOL_SCHEMAS, TOOL_TYPES, call, load_retail_db, retail_db_snapshot
from lab.tools.base import AGENT_MESSAGES, Observation, ToolContext
from lab.toolspec import ToolSpec

DOMAIN = "tau2:retail"


@dataclass
class RetailSession:
    """One rollout's shop: the live database and every call made, in order, with its error flag."""

    db: dict[str, Any]
    calls: list[dict[str, Any]] = field(default_factory=list)


def session_of(context: ToolContext) -> RetailSession:
    """The rollout's session, started from a fresh copy of db.json on first use."""
    session = context.state.get(DOMAIN)
    if session is None:
        session = context.state[DOMAIN] = RetailSession(db=load_retail_db(_db_path(context.task)))
    return session


def _db_path(task: Any) -> str | None:
    """The db.json a task was loaded with (None: the shared one)."""
    return (getattr(task, "meta", None) or {}).get("db_path")


class RetailTool:
    """One retail tool; writes change only the calling rollout's database."""

    def __init__(self, name: str) -> None:
        schema = TOOL_SCHEMAS[name]
        self.writes = TOOL_TYPES[name] == "write"
        self.spec = ToolSpec(name=name, description=schema["description"], category="basic",
                             parameters=schema["parameters"], backend={"kind": DOMAIN})

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        if context is None:
            return Observation.failure(f"tool '{self.spec.name}' needs a rollout context to hold the shop's state")
        session = session_of(context)
        text, failed = call(session.db, self.spec.name, arguments)
        session.calls.append({"name": self.spec.name, "arguments": copy.deepcopy(arguments), "error": failed})
        meta = {"domain": DOMAIN, "writes": self.writes}
        if failed:
            return Observation(text=text, error=text.removeprefix("Error: "), meta=meta)
        return Observation(text=text, meta=meta)


def retail_tools() -> dict[str, RetailTool]:
    """All 16 retail tools by name."""
    return {name: RetailTool(name) for name in TOOL_SCHEMAS}


_GOLD: dict[tuple[str, str | None], dict[str, Any]] = {}


def gold_state(task: Any) -> dict[str, Any]:
    """The database the task's golden actions leave (computed once per task: every rollout of it is
    compared with the same one)."""
    key = (task.task_id, _db_path(task))
    if key not in _GOLD:
        _GOLD[key] = gold_db(task, retail_db_snapshot(key[1]))
    return _GOLD[key]


async def grade_retail(task: Any, answer: str | None, context: ToolContext) -> float:
    """tau2's verdict on one rollout: its write calls replayed on a fresh database against the gold
    state, the information it had to tell the user, the golden actions, and NL assertions (not judged
    without a judge model). The per-criterion verdicts go to `context.criteria`; the outcome is the
    product of the judged criteria of the task's reward basis. A rollout without an answer scores 0
    (tau2 scores only conversations that ended properly)."""
    session = context.state.get(DOMAIN) or RetailSession(db={})
    calls = [{"name": c["name"], "arguments": c["arguments"]} for c in session.calls]
    said = context.state.get(AGENT_MESSAGES) or ([answer] if answer else [])  # with a simulated user: every message
    criteria = judge_retail(task, retail_db_snapshot(_db_path(task)), gold_state(task), calls, said)
    context.criteria = criteria
    return outcome_of(criteria, task.meta.get("reward_basis")) if answer is not None else 0.0
