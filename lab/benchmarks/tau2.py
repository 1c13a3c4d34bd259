"""tau2-bench (Barres et al. 2025) and ToolScale-style domains: a policy, a database and tasks.

One domain folder holds `tasks.json` (a JSON array of tasks), optionally `split_tasks.json`
(`{"train": [ids], "test": [ids], "base": [all ids]}`), `db.json` and `policy.md`. The shared folder
has `tau2/retail` (all four files) and `tau2/airline` (no db.json: the airline tasks load but cannot
be executed).

A task becomes a `BenchmarkTask` whose question is the simulated user's instruction (what the user
wants and knows), whose answer is the golden action list (`evaluation_criteria.actions`, each
`{action_id, name, arguments, ...}`), and whose meta carries what a tau2 grader needs besides:
`reward_basis`, `communicate_info`, `nl_assertions`, the policy text and the db path.
`Tau2Domain` holds the policy and the loaded database for the environment that executes actions.
The question is the whole scenario; in a rollout the orchestrator never sees it: a simulated user
(`lab.benchmarks.tau2_user`) opens the conversation and answers what it is asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from lab.benchmarks.base import BenchmarkTask, apply_limit, read_json, require
from lab.benchmarks.recording import RecordingTool, recorded_calls
from lab.benchmarks.source import BenchmarkSource, EvalSource
from lab.benchmarks.tau2_folders import available_domains, domain_dir
from lab.env.layout import DB_FILE, POLICY_FILE, SPLITS_FILE, TASKS_FILE
from lab.errors import LabInputError
from lab.tools.base import Tool, ToolContext
from lab.toolspec import ToolSpec

#: Splits a split file may name; `base` is every task.
SPLITS = ("train", "test", "base")

#: Order in which instruction fields are written into the question.
_INSTRUCTION_FIELDS = (
    ("reason_for_call", "Reason for call"),
    ("known_info", "Known info"),
    ("unknown_info", "Unknown info"),
    ("task_instructions", "Task instructions"),
)


class Tau2Domain(BaseModel):
    """A tau2 domain as its environment needs it: policy text, database and split membership."""

    name: str = Field(description="Domain name, e.g. `retail`.")
    folder: Path = Field(description="Folder the domain was read from.")
    policy: str = Field("", description="The agent policy (Markdown); empty when policy.md is absent.")
    db: dict[str, Any] | None = Field(None, description="Parsed db.json, or None when the file is absent.")
    db_path: Path | None = Field(None, description="Path of db.json, or None when absent.")
    splits: dict[str, list[str]] = Field(default_factory=dict, description="Split name -> task ids.")

    @property
    def has_db(self) -> bool:
        """Whether actions can be executed (airline ships without its database here)."""
        return self.db is not None


def load_tau2_domain(domain: str = "retail", path: str | Path | None = None, with_db: bool = True) -> Tau2Domain:
    """Read a domain's policy, splits and (with `with_db`) its database."""
    folder = domain_dir(domain, path)
    db_path = folder / DB_FILE if (folder / DB_FILE).is_file() else None
    db = None
    if with_db and db_path is not None:
        db = read_json(db_path)
        if not isinstance(db, dict):
            raise LabInputError(f"{db_path.name} line 1: expected a JSON object of tables, got {type(db).__name__}")
    policy_path = folder / POLICY_FILE
    policy = policy_path.read_text(encoding="utf-8") if policy_path.is_file() else ""
    return Tau2Domain(name=domain, folder=folder, policy=policy, db=db, db_path=db_path, splits=_read_splits(folder))


def load_tau2(
    path: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    domain: str | None = "retail",
) -> list[BenchmarkTask]:
    """Load tau2 tasks of one domain (or of every domain found, with `domain=None`).

    `split` is `train`, `test` or `base` (all); None also means all. Each task's own `split` is `train`
    or `test` from split_tasks.json (`test` when the folder has no split file).
    """
    if split is not None and split not in SPLITS:
        raise LabInputError(f"tau2: unknown split '{split}' (choose from {', '.join(SPLITS)})")
    domains = [domain] if domain else available_domains(path)
    tasks: list[BenchmarkTask] = []
    for name in domains:
        info = load_tau2_domain(name, path, with_db=False)  # tasks only need the db path, not its content
        tasks.extend(_domain_tasks(info, split))
    return apply_limit(tasks, limit)


def _read_splits(folder: Path) -> dict[str, list[str]]:
    """split_tasks.json as `{split: [task ids as strings]}`; empty when the folder has none."""
    file = folder / SPLITS_FILE
    if not file.is_file():
        return {}
    raw = read_json(file)
    if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
        raise LabInputError(f"{file.name} line 1: expected an object mapping split names to lists of task ids")
    return {str(name): [str(task_id) for task_id in ids] for name, ids in raw.items()}


def _domain_tasks(info: Tau2Domain, split: str | None) -> list[BenchmarkTask]:
    """Every task of one domain that belongs to `split`, in tasks.json order."""
    file = info.folder / TASKS_FILE
    raw = read_json(file)
    if not isinstance(raw, list):
        raise LabInputError(f"{file.name} line 1: expected a JSON array of tasks, got {type(raw).__name__}")
    train_ids = set(info.splits.get("train", []))
    wanted: set[str] | None = None
    if split not in (None, "base"):
        if split not in info.splits:
            raise LabInputError(f"{info.folder / SPLITS_FILE}: no split '{split}' for domain '{info.name}'")
        wanted = set(info.splits[split])
    tasks = []
    for index, entry in enumerate(raw):
        where = f"{file.name} task {index}"
        if not isinstance(entry, dict):
            raise LabInputError(f"{where}: expected an object, got {type(entry).__name__}")
        task_id = str(require(entry, "id", where))
        if wanted is not None and task_id not in wanted:
            continue
        own_split = "train" if task_id in train_ids else "test"
        tasks.append(tau2_task(entry, info, own_split, f"{file.name} task id {task_id}"))
    return tasks


def tau2_task(entry: dict[str, Any], info: Tau2Domain, split: str, where: str) -> BenchmarkTask:
    """One tasks.json entry -> one task with golden actions as its answer."""
    scenario = require(entry, "user_scenario", where)
    if not isinstance(scenario, dict):
        raise LabInputError(f"{where}: 'user_scenario' must be an object")
    instructions = require(scenario, "instructions", f"{where} user_scenario")
    criteria = entry.get("evaluation_criteria") or {}
    if not isinstance(criteria, dict):
        raise LabInputError(f"{where}: 'evaluation_criteria' must be an object")
    actions = criteria.get("actions") or []
    if not isinstance(actions, list) or not all(isinstance(a, dict) and "name" in a for a in actions):
        raise LabInputError(f"{where}: evaluation_criteria.actions must be a list of objects with a 'name'")
    task_id = str(entry["id"])
    return BenchmarkTask(
        benchmark="tau2",
        task_id=f"{info.name}-{task_id}",
        split=split,
        domain=info.name,
        question=user_instruction(instructions),
        answer=actions,
        answer_type="actions",
        meta={
            "tau2_id": task_id,
            "reward_basis": criteria.get("reward_basis") or [],
            "communicate_info": criteria.get("communicate_info") or [],
            "nl_assertions": criteria.get("nl_assertions") or [],
            "outputs": criteria.get("outputs") or [],
            "description": entry.get("description") or {},
            "user_scenario": scenario,
            "initial_state": entry.get("initial_state"),
            "issues": entry.get("issues") or [],
            "annotations": entry.get("annotations"),
            "policy": info.policy,
            "db_path": str(info.db_path) if info.db_path else None,
            "tasks_path": str(info.folder / TASKS_FILE),
        },
    )


def user_instruction(instructions: Any) -> str:
    """The user simulator's instruction as text: a plain string, or the structured fields in order.

    Older tau-bench tasks store one string; tau2 stores `reason_for_call`, `known_info`, ... as fields.
    """
    if isinstance(instructions, str):
        return instructions.strip()
    if not isinstance(instructions, dict):
        kind = type(instructions).__name__
        raise LabInputError(f"user_scenario.instructions: expected text or an object, got {kind}")
    parts = [
        f"{label}: {str(instructions[key]).strip()}"
        for key, label in _INSTRUCTION_FIELDS
        if instructions.get(key)
    ]
    return "\n".join(parts)


def conversations(benchmark: str, tasks: list[BenchmarkTask]) -> EvalSource:
    """tau2 tasks as a run plays them: a scripted user (`lab.benchmarks.tau2_user`) opens each conversation;
    retail (with its db.json) is executed on the rollout's own copy of the database and graded as tau2
    grades it (`lab.benchmarks.tau2_env`); a domain without a database here (airline, the released
    ToolScale table) offers its golden actions' names as tools that record calls, and is graded by
    whether every golden action was called, its `criteria_json` saying the database was not judged."""
    from lab.benchmarks.tau2_env import grade_retail, retail_tools
    from lab.benchmarks.tau2_user import ScriptedUser

    retail = retail_tools() if any(_executable(t) for t in tasks) else {}

    async def grader(task: BenchmarkTask, answer: str | None, context: ToolContext) -> float:
        if _executable(task):
            return await grade_retail(task, answer, context)
        done = actions_done(task.answer or [], recorded_calls(context))
        context.criteria = {"db": None, "communicate": None, "actions": done, "nl": None}
        return float(done)

    def task_tools(task: BenchmarkTask) -> dict[str, Tool]:
        if _executable(task):
            return dict(retail)
        return {a["name"]: RecordingTool(_action_spec(a["name"])) for a in task.answer or [] if isinstance(a, dict)}

    user = ScriptedUser()
    return EvalSource(benchmark, list(tasks), grader, [t.to_record() for t in tasks], task_tools=task_tools,
                      user=lambda task: user)


def _executable(task: BenchmarkTask) -> bool:
    """A tau2 task whose domain's tools run here: retail, with its db.json."""
    return task.domain == "retail" and bool(task.meta.get("db_path"))


def _action_spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, description=f"Domain action '{name}'.", parameters={"type": "object"}, category="basic")


def actions_done(golden: list[dict[str, Any]], calls: list[dict[str, Any]]) -> bool:
    """Every golden action was called with (at least) its golden arguments."""
    return all(
        any(c["name"] == g.get("name")
            and all(c["arguments"].get(k) == v for k, v in (g.get("arguments") or {}).items()) for c in calls)
        for g in golden if isinstance(g, dict)
    )


def _load(
    qualifier: str, path: str | Path | None, split: str | None, limit: int | None, **options: Any
) -> list[BenchmarkTask]:
    return load_tau2(path, split, limit, domain=qualifier or None, **options)


def _open(qualifier: str, path: str | None, split: str | None) -> EvalSource:
    return conversations("tau2", _load(qualifier, path, split, None))


SOURCE = BenchmarkSource(
    name="tau2", usage="tau2[:domain]", description="tau2-bench; tau2:<domain> for one domain (retail, airline)",
    load=_load, open=_open, qualified=True, released_agent=True,
)
