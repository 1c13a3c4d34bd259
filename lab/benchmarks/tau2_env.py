"""tau2-bench retail as a live environment: its 16 tools behind the lab's Tool interface, per rollout,
and tau2's verdict on a rollout.

Each rollout acts on its own copy of the shop (a `lab.env.state.Session` under
`context.state["tau2:retail"]`, started from db.json on the first retail call and copied on its first
write: reads run on the shared db.json); every call is logged
in order, errors included, because tau2's DB check replays the trajectory's write calls (§3.2 of
TOOLS.md), never the live state. Tools are called as tau2 calls them: keyword arguments exactly as the
orchestrator wrote them, with no schema validation or coercion, so a wrong type fails the way it fails
in tau2 (`tau2_retail.call`).

    tools = retail_tools()
    ctx = ToolContext(task_id=task.task_id, task=task)
    obs = await tools["get_order_details"].execute({"order_id": "#W2378156"}, ctx)
    outcome = await grade_retail(task, answer, ctx)   # fills ctx.criteria
"""

from __future__ import annotations

from typing import Any

from lab.benchmarks.tau2_retail import RETAIL, TOOL_SCHEMAS
from lab.benchmarks.tau2_retail_db import copy_db, retail_db_snapshot
from lab.env.adapter import EnvTool
from lab.env.grading import criteria_of, db_matches, outcome_of
from lab.env.replay import ExpectedStates, replay_writes, run_actions
from lab.env.state import Session, canonical_hash
from lab.errors import LabInputError
from lab.task import Task
from lab.tools.base import AGENT_MESSAGES, ToolContext
from lab.toolspec import ToolSpec

DOMAIN = RETAIL.name


def _db_path(task: Task) -> str | None:
    """The db.json a task was loaded with (None: the shared one)."""
    return (getattr(task, "meta", None) or {}).get("db_path")


def _start(context: ToolContext) -> Session:
    """The rollout's shop: the shared db.json until its first write makes a copy of its own (`Session.fork`;
    the retail reads never change what they read)."""
    snapshot = retail_db_snapshot(_db_path(context.task))
    return Session(env=RETAIL, initial=snapshot, db=snapshot, fork=copy_db)


def retail_tools() -> dict[str, EnvTool]:
    """All 16 retail tools by name; writes change only the calling rollout's database."""
    return {name: EnvTool(ToolSpec(name=name, description=schema["description"], category="basic",
                                   parameters=schema["parameters"], backend={"kind": DOMAIN}),
                          RETAIL, DOMAIN, _start, holder="shop's")
            for name, schema in TOOL_SCHEMAS.items()}


def gold_db(task: Task, initial_db: dict) -> dict:
    """The gold environment (§3.2): a copy of `initial_db` after every golden action, reads included.

    `task` is a tasks.json entry or a `BenchmarkTask` from `load_tau2` (whose answer is the actions).
    A failing golden action changes nothing, as in tau2.
    """
    if isinstance(task, dict):
        actions, initial_state = (task.get("evaluation_criteria") or {}).get("actions"), task.get("initial_state")
    else:
        actions, initial_state = task.answer, task.meta.get("initial_state")
    if initial_state is not None:
        raise LabInputError("tau2 retail: tasks with an initial_state are not supported (none exist locally)")
    calls = [{"name": a["name"], "arguments": a.get("arguments") or {}} for a in actions or []]
    return run_actions(RETAIL, initial_db, calls, copy=copy_db)


#: Per (task id, db.json): the canonical hash of the database its golden actions leave. Only hashes and
#: verdicts are kept: a gold database is a full copy of the shop, and dozens of them alive make every full
#: collection of the cyclic garbage collector walk millions of containers.
_GOLD = ExpectedStates()
#: Per db.json: its canonical hash.
_START = ExpectedStates()


def gold_hash(task: Task) -> str:
    """`canonical_hash` of the database the task's golden actions leave (computed once per task: every
    rollout of it is compared with the same one)."""
    path = _db_path(task)
    return _GOLD.get((task.task_id, path), lambda: canonical_hash(gold_db(task, retail_db_snapshot(path))))


def start_passes(task: Task) -> bool:
    """Whether db.json as it is passes the task's DB check: the verdict on every rollout of it that wrote
    nothing (db.json hashed once, the gold database once per task)."""
    path = _db_path(task)
    return _START.get(path, lambda: canonical_hash(retail_db_snapshot(path))) == gold_hash(task)


def judge_retail(task: Task, initial_db: dict, gold: dict, calls: list[dict[str, Any]],
                 agent_texts: list[str]) -> dict[str, bool | None]:
    """tau2's criteria of one retail trajectory (`lab.env.grading.criteria_of`): its write calls
    replayed on `initial_db` against `gold`, the information to tell, the golden actions, NL assertions."""
    db_ok = db_matches(replay_writes(RETAIL, initial_db, calls, copy=copy_db), gold)
    return criteria_of(task, db_ok, calls, agent_texts)


def db_verdict(task: Task, calls: list[dict[str, Any]]) -> bool:
    """tau2's DB check of a rollout of `task` (what `judge_retail` decides with the shared db.json and the
    task's gold database), from what is kept per task: a rollout that wrote nothing ends in the start
    state itself (`start_passes`); one that wrote is replayed and hashed (about 20 ms)."""
    if not any(RETAIL.access(c.get("name")) == "write" for c in calls):
        return start_passes(task)  # a replay would copy the start state and change nothing
    replayed = replay_writes(RETAIL, retail_db_snapshot(_db_path(task)), calls, copy=copy_db)
    return canonical_hash(replayed) == gold_hash(task)


async def grade_retail(task: Task, answer: str | None, context: ToolContext) -> float:
    """tau2's verdict on one rollout; the per-criterion verdicts go to `context.criteria`, the outcome is
    the product of the judged criteria of the task's reward basis. A rollout without an answer scores 0
    (tau2 scores only conversations that ended properly)."""
    session = context.state.get(DOMAIN)
    calls = [{"name": c["name"], "arguments": c["arguments"]} for c in session.calls] if session else []
    said = context.state.get(AGENT_MESSAGES) or ([answer] if answer else [])  # with a simulated user: every message
    criteria = criteria_of(task, db_verdict(task, calls), calls, said)
    context.criteria = criteria
    return outcome_of(criteria, task.meta.get("reward_basis")) if answer is not None else 0.0
