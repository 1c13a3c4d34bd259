"""Synthesized ToolScale domains as live environments: `orchestra eval --benchmark toolscale:DIR`.

DIR holds domain folders in tau2's layout, as `orchestra synth` writes them (`lab.synth.export`); the
tasks load with the tau2 loader, and each domain's tools are the code registry's (`lab.synth.DOMAINS`:
a folder records data, not code), or, for a domain an LLM wrote, its folder's domain.py, run only in
the sandbox (`lab.synth.sandboxed`). As for tau2 retail (`lab.benchmarks.tau2_env`), every rollout acts
on its own copy of the folder's db.json, every call is logged, and the grade is tau2's: the rollout's
write calls replayed from the start state against the golden end state, the information the user
must be told, the golden actions; per-criterion verdicts go to `context.criteria`.
"""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from lab.benchmarks.tau2 import POLICY_FILE
from lab.benchmarks.tau2_grading import actions_ok, communicate_ok, outcome_of
from lab.errors import LabInputError
from lab.synth import DOMAINS
from lab.synth.domain import Domain, canonical_hash, clone
from lab.synth.export import CODE_FILE
from lab.synth.sandboxed import SandboxDomain
from lab.synth.verify import replay_writes, run_golden
from lab.tools.base import AGENT_MESSAGES, Observation, ToolContext
from lab.toolspec import ToolSpec

STATE_KEY = "toolscale"


@dataclass
class SynthSession:
    """One rollout's copy of its domain's database and every call made on it, in order."""

    db: dict[str, Any]
    calls: list[dict[str, Any]] = field(default_factory=list)


def domain_of(task: Any) -> Domain | SandboxDomain:
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


def start_db(task: Any) -> dict[str, Any]:
    """A fresh copy of the task's start state (its folder's db.json)."""
    return clone(_start_db(str(task.meta["db_path"])))


class SynthTool:
    """One tool of a synthesized domain; writes change only the calling rollout's database."""

    def __init__(self, domain: Domain, name: str) -> None:
        schema = domain.tools[name].schema
        self.domain, self.writes = domain, domain.kind(name) == "write"
        self.spec = ToolSpec(name=name, description=schema["description"], category="basic",
                             parameters=schema["parameters"], backend={"kind": f"toolscale:{domain.name}"})

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        if context is None:
            return Observation.failure(f"tool '{self.spec.name}' needs a rollout context to hold the domain's state")
        session = context.state.get(STATE_KEY)
        if session is None:
            session = context.state[STATE_KEY] = SynthSession(db=start_db(context.task))
        if isinstance(self.domain, SandboxDomain):  # a sandbox run: off the event loop
            text, failed = await asyncio.to_thread(self.domain.call, session.db, self.spec.name, arguments)
        else:
            text, failed = self.domain.call(session.db, self.spec.name, arguments)
        session.calls.append({"name": self.spec.name, "arguments": copy.deepcopy(arguments)})
        meta = {"domain": self.domain.name, "writes": self.writes}
        return Observation(text=text, error=text.removeprefix("Error: ") if failed else None, meta=meta)


def domain_tools(domain: Domain | SandboxDomain) -> dict[str, SynthTool]:
    return {name: SynthTool(domain, name) for name in domain.tools}


_GOLD: dict[tuple[str, str], str] = {}


def _gold_hash(task: Any, domain: Domain) -> str:
    key = (task.task_id, str(task.meta["db_path"]))
    if key not in _GOLD:
        raw = {"evaluation_criteria": {"actions": list(task.answer or [])}}
        _GOLD[key] = run_golden(domain, _start_db(key[1]), raw).gold_hash  # run_golden works on its own copy
    return _GOLD[key]


async def grade_synth(task: Any, answer: str | None, context: ToolContext) -> float:
    """tau2's verdict on one rollout of a synthesized task (see the module docstring); 0 without an answer."""
    domain = domain_of(task)
    session = context.state.get(STATE_KEY)
    calls = session.calls if session else []
    said = context.state.get(AGENT_MESSAGES) or ([answer] if answer else [])

    def db_ok() -> bool:
        return canonical_hash(replay_writes(domain, _start_db(str(task.meta["db_path"])), calls)) == _gold_hash(task, domain)

    context.criteria = {
        "db": await asyncio.to_thread(db_ok) if isinstance(domain, SandboxDomain) else db_ok(),
        "communicate": communicate_ok(task.meta.get("communicate_info"), said),
        "actions": actions_ok(list(task.answer or []), calls),
        "nl": None if task.meta.get("nl_assertions") else True,
    }
    return outcome_of(context.criteria, task.meta.get("reward_basis")) if answer is not None else 0.0
