"""What an evaluation runs on: tasks, how they are graded, and the tools a benchmark brings.

Each benchmark becomes an `EvalSource`. The offline world's tasks are graded by `lab.graders` (the
bookshop tasks by the final database of the rollout, as tau2-bench does); FRAMES and HLE by exact
match / numeric tolerance / multiple choice; BFCL by its AST checker over the calls the orchestrator
made to the task's functions, which are offered as tools that record calls (BFCL never executes them).
tau2-bench retail is executed: its 16 tools act on each rollout's own copy of the real db.json and the
rollout is graded as tau2 grades it (`lab.benchmarks.tau2_env`: write calls replayed against the gold
database, communicate info, golden actions; NL assertions not judged without a judge model), with the
per-criterion verdicts stored as `criteria_json`. tau2 airline has no database here, so its golden
actions are compared with the calls made to tools of the same names, and its `criteria_json` says the
database was not judged. `toolscale:DIR` runs the domains `orchestra synth` wrote (`lab.synth.env`), graded
the same way; bare `toolscale` runs the default synthesized dataset; `toolscale:FILE.parquet` the
released ToolScale table, which has no databases, so it is graded by golden actions as airline is. All of them talk to a simulated user (`lab.benchmarks.tau2_user.ScriptedUser`, offline):
it opens with the reason for the call and answers the orchestrator's questions from the scenario.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.graders import grade
from lab.records import TaskRecord
from lab.tools.base import Observation, Tool, ToolContext
from lab.toolspec import ToolSpec

RECORDED = "recorded_calls"


@dataclass
class EvalSource:
    benchmark: str
    tasks: list[Any]
    grader: Callable[[Any, str | None, ToolContext], Any]
    records: list[TaskRecord]
    task_tools: Callable[[Any], dict[str, Tool]] | None = None
    #: The simulated user of a task that is a conversation (tau2), else None.
    user: Callable[[Any], Any] | None = None

    def tools_for(self, task: Any) -> dict[str, Tool]:
        return self.task_tools(task) if self.task_tools else {}

    def user_for(self, task: Any) -> Any:
        return self.user(task) if self.user else None


def load_source(config: EvalConfig) -> EvalSource:
    from lab.benchmarks import world_family

    base, _, qualifier = config.benchmark.partition(":")
    if base == "toolscale" and not qualifier.endswith(".parquet"):
        source = _synth_source(config, qualifier or None)
    elif base == "world":
        source = _world_source(config, family=world_family(qualifier))
    else:
        source = _benchmark_source(config)
    tasks = source.tasks
    if config.tasks:
        wanted = set(config.tasks)
        unknown = wanted - {t.task_id for t in tasks}
        if unknown:
            raise LabInputError(f"--tasks: unknown task id(s) {', '.join(sorted(unknown)[:5])} in {config.benchmark}")
        tasks = [t for t in tasks if t.task_id in wanted]
    if config.limit:
        tasks = tasks[: config.limit]
    if not tasks:
        raise LabInputError(f"--benchmark {config.benchmark}: no tasks in split '{config.split}'")
    source.tasks = tasks
    keep = {t.task_id for t in tasks}
    source.records = [r for r in source.records if r.task_id in keep]
    return source


def _world_source(config: EvalConfig, family: str | None) -> EvalSource:
    from lab.benchmarks import from_world_task
    from lab.world.build import build_world
    from lab.world.domain_tools import DOMAIN, make_domain_tools, untouched_session

    world = build_world(seed=0, progress=True)
    # a stable shuffle, so `--limit N` samples every family instead of the first one
    tasks = sorted(world.select(family=family, split=config.split),
                   key=lambda t: hashlib.sha256(t.task_id.encode()).hexdigest())

    async def grader(task: Any, answer: str | None, context: ToolContext) -> float:
        if task.answer_type == "actions" and DOMAIN not in context.state:
            # a rollout that touched no shop tool is judged on the untouched shop (read-only, no copy)
            context.state[DOMAIN] = untouched_session(world.db)
        return float(grade(task, answer, context).correct)

    # every WorldTask field (evidence, difficulty, family...) lands in meta, where calibration reads it
    records = [from_world_task(t).to_record() for t in tasks]
    domain_tools = make_domain_tools(world.db)
    return EvalSource("world", tasks, grader, records,
                      task_tools=lambda task: domain_tools if task.family == "tau2" else {})


def _benchmark_source(config: EvalConfig) -> EvalSource:
    from lab.benchmarks import check_bfcl_task, load_benchmark
    from lab.benchmarks.tau2_env import grade_retail, retail_tools
    from lab.benchmarks.tau2_user import ScriptedUser

    tasks = load_benchmark(config.benchmark, path=config.benchmark_path, split=config.split)
    base = config.benchmark.split(":")[0]
    retail = retail_tools() if any(_executable(t) for t in tasks) else {}

    async def grader(task: Any, answer: str | None, context: ToolContext) -> float:
        calls = context.state.get(RECORDED, [])
        if task.answer_type == "function_calls":
            return float(check_bfcl_task(task, [{"name": c["name"], "arguments": c["arguments"]} for c in calls]).valid)
        if task.answer_type == "actions" and _executable(task):
            return await grade_retail(task, answer, context)
        if task.answer_type == "actions":
            done = _actions_done(task.answer or [], calls)
            context.criteria = {"db": None, "communicate": None, "actions": done, "nl": None}
            return float(done)
        return float(grade(task, answer, context).correct)

    def task_tools(task: Any) -> dict[str, Tool]:
        if task.answer_type == "function_calls":
            return {f["name"]: RecordingTool(_bfcl_spec(f)) for f in task.meta.get("functions", [])}
        if task.answer_type == "actions" and _executable(task):
            return dict(retail)
        if task.answer_type == "actions":
            return {a["name"]: RecordingTool(_action_spec(a["name"])) for a in task.answer or [] if isinstance(a, dict)}
        return {}

    scripted_user = ScriptedUser()

    def user(task: Any) -> Any:
        return scripted_user if getattr(task, "benchmark", "") == "tau2" else None

    return EvalSource(base, tasks, grader, [t.to_record() for t in tasks], task_tools=task_tools, user=user)


def _synth_source(config: EvalConfig, folder: str | None) -> EvalSource:
    """`toolscale:DIR`: the domain folders `orchestra synth` wrote, executed and graded as tau2 grades;
    bare `toolscale`: the default dataset (every domain, built into the cache on first use)."""
    from lab.benchmarks.tau2 import load_tau2
    from lab.benchmarks.tau2_user import ScriptedUser
    from lab.synth.dataset import default_dataset
    from lab.synth.env import domain_of, domain_tools, grade_synth

    folder = folder or str(default_dataset())

    tasks = load_tau2(folder, split=config.split, domain=None)
    tools = {t.domain: domain_tools(domain_of(t)) for t in {t.domain: t for t in tasks}.values()}  # once per domain
    user = ScriptedUser()
    return EvalSource("toolscale", tasks, grade_synth, [t.to_record() for t in tasks],
                      task_tools=lambda task: dict(tools[task.domain]), user=lambda task: user)


def _executable(task: Any) -> bool:
    """A tau2 task whose domain's tools run here: retail, with its db.json."""
    return getattr(task, "benchmark", "") == "tau2" and task.domain == "retail" and bool(task.meta.get("db_path"))


class RecordingTool:
    """A function the benchmark defines but never executes (BFCL): the call is the answer, so it is
    recorded for the grader and acknowledged."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        if context is not None:
            context.state.setdefault(RECORDED, []).append({"name": self.spec.name, "arguments": arguments})
        return Observation(text=f"{self.spec.name} called with {json.dumps(arguments, default=str)}")


def _bfcl_spec(function: dict[str, Any]) -> ToolSpec:
    params = dict(function.get("parameters") or {"type": "object", "properties": {}})
    params["type"] = "object"  # BFCL writes "dict"
    params["properties"] = {k: _json_schema(v) for k, v in params.get("properties", {}).items()}
    return ToolSpec(name=function["name"], description=function.get("description", ""), parameters=params, category="basic")


def _json_schema(prop: dict[str, Any]) -> dict[str, Any]:
    mapping = {"dict": "object", "float": "number", "tuple": "array", "any": None}
    prop = dict(prop)
    if prop.get("type") in mapping:
        kind = mapping[prop["type"]]
        if kind is None:
            prop.pop("type")
        else:
            prop["type"] = kind
    if isinstance(prop.get("items"), dict):
        prop["items"] = _json_schema(prop["items"])
    if isinstance(prop.get("properties"), dict):
        prop["properties"] = {k: _json_schema(v) for k, v in prop["properties"].items()}
    return prop


def _action_spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, description=f"Domain action '{name}'.", parameters={"type": "object"}, category="basic")


def _actions_done(golden: list[dict[str, Any]], calls: list[dict[str, Any]]) -> bool:
    """Every golden action was called with (at least) its golden arguments."""
    return all(
        any(c["name"] == g.get("name") and all(c["arguments"].get(k) == v for k, v in (g.get("arguments") or {}).items()) for c in calls)
        for g in golden if isinstance(g, dict)
    )
