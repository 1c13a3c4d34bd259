"""Synthesized ToolScale domains as live environments: `orchestra eval --benchmark toolscale:DIR`.

DIR holds domain folders in tau2's layout, as `orchestra synth` writes them (`lab.synth.export`); the
tasks load with the tau2 loader, and each domain's tools are the code registry's (`lab.synth.DOMAINS`:
a folder records data, not code), or, for a domain an LLM wrote, its folder's domain.py, run only in
the sandbox (`lab.synth.sandboxed`). As for tau2 retail, every rollout acts on its own copy of the
folder's db.json (a `lab.env.state.Session` under `context.state["toolscale"]`), every call is logged,
and the grade is tau2's (`lab.env.grading`): the rollout's write calls replayed from the start state
against the golden end state, the information the user must be told, the golden actions;
per-criterion verdicts go to `context.criteria`.
"""

from __future__ import annotations

import asyncio
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from lab.env.adapter import EnvTool
from lab.env.grading import criteria_of, outcome_of
from lab.env.layout import POLICY_FILE
from lab.env.replay import ExpectedStates, replay_writes
from lab.env.state import Session, canonical_hash, clone
from lab.errors import LabInputError
from lab.synth import DOMAINS
from lab.synth.domain import Domain
from lab.synth.export import CODE_FILE
from lab.synth.sandboxed import SandboxDomain
from lab.synth.verify import run_golden
from lab.task import Task
from lab.tools.base import AGENT_MESSAGES, ToolContext
from lab.toolspec import ToolSpec

STATE_KEY = "toolscale"


def domain_of(task: Task) -> Domain | SandboxDomain:
    """The task's domain: the code in its folder's domain.py (an LLM-built domain, run in the
    sandbox), else the registry's domain of that name."""
    code = _folder_code(str(Path(task.meta["tasks_path"]).parent)) if task.meta.get("tasks_path") else None
    if code is not None:
        return code
    if task.domain not in DOMAINS:
        raise LabInputError(f"task {task.task_id}: no tools for domain '{task.domain}' (known: {', '.join(DOMAINS)})")
    return DOMAINS[task.domain]


@lru_cache(maxsize=16)
def _folder_code(folder: str) -> SandboxDomain | None:
    path = Path(folder) / CODE_FILE
    if not path.is_file():
        return None
    policy = (Path(folder) / POLICY_FILE).read_text(encoding="utf-8")
    return SandboxDomain.from_code(Path(folder).name, path.read_text(encoding="utf-8"), policy)


@lru_cache(maxsize=16)
def _start_db(db_path: str) -> dict[str, Any]:
    return json.loads(Path(db_path).read_text(encoding="utf-8"))


def start_db(task: Task) -> dict[str, Any]:
    """A fresh copy of the task's start state (its folder's db.json)."""
    return clone(_start_db(str(task.meta["db_path"])))


def domain_tools(domain: Domain | SandboxDomain) -> dict[str, EnvTool]:
    """Every tool of `domain` by name; writes change only the calling rollout's database, and a
    sandboxed domain's calls run off the event loop."""
    def start(context: ToolContext) -> Session:
        return Session(env=domain, initial=_start_db(str(context.task.meta["db_path"])), db=start_db(context.task))

    return {name: EnvTool(ToolSpec(name=name, description=tool.schema["description"], category="basic",
                                   parameters=tool.schema["parameters"], backend={"kind": f"toolscale:{domain.name}"}),
                          domain, STATE_KEY, start, in_thread=isinstance(domain, SandboxDomain))
            for name, tool in domain.tools.items()}


_GOLD = ExpectedStates()


def _gold_hash(task: Task, domain: Domain | SandboxDomain) -> str:
    key = (task.task_id, str(task.meta["db_path"]))
    raw = {"evaluation_criteria": {"actions": list(task.answer or [])}}
    return _GOLD.get(key, lambda: run_golden(domain, _start_db(key[1]), raw).gold_hash)  # on its own copy


async def grade_synth(task: Task, answer: str | None, context: ToolContext) -> float:
    """tau2's verdict on one rollout of a synthesized task (see the module docstring); 0 without an answer."""
    domain = domain_of(task)
    session = context.state.get(STATE_KEY)
    calls = session.calls if session else []
    said = context.state.get(AGENT_MESSAGES) or ([answer] if answer else [])

    def db_ok() -> bool:
        return canonical_hash(replay_writes(domain,
                                            _start_db(str(task.meta["db_path"])), calls)) == _gold_hash(task, domain)

    ok = await asyncio.to_thread(db_ok) if isinstance(domain, SandboxDomain) else db_ok()
    context.criteria = criteria_of(task, ok, calls, said)
    return outcome_of(context.criteria, task.meta.get("reward_basis")) if answer is not None else 0.0
