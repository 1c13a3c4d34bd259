"""The offline world (`lab.world`) as a benchmark: `world` for every family, `world:<family>` for one.

Its tasks are graded by `lab.graders`, the bookshop's (tau2-like) by the final database of the rollout,
as tau2-bench grades; the bookshop tasks bring the shop's tools. It is the one benchmark a simulated
judge may grade (`sim:` models know only the world's answers). The world is imported late: loading a
real benchmark must not need it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from lab.benchmarks.base import BenchmarkTask, apply_limit
from lab.benchmarks.source import BenchmarkSource, EvalSource
from lab.errors import LabInputError
from lab.graders import grade
from lab.task import Task
from lab.tools.base import Tool, ToolContext
from lab.world.task import WorldTask

#: The offline world's task families by the name `world:<name>` selects them with.
WORLD_FAMILIES = {"frames": "frames", "hle": "hle", "bookshop": "tau2"}


def world_family(qualifier: str) -> str | None:
    """The world family `world:<qualifier>` names (None for the whole world), or one clear error."""
    if not qualifier:
        return None
    if qualifier not in WORLD_FAMILIES:
        raise LabInputError(f"benchmark world:{qualifier}: unknown family (choose from {', '.join(WORLD_FAMILIES)})")
    return WORLD_FAMILIES[qualifier]


def from_world_task(task: Task) -> BenchmarkTask:
    """A `WorldTask` (or a BenchmarkTask already) as a BenchmarkTask; world-only fields go to meta."""
    if isinstance(task, BenchmarkTask):
        return task
    data = task.model_dump() if hasattr(task, "model_dump") else dict(task)
    core = ("task_id", "split", "domain", "question", "answer", "answer_type", "choices", "meta")
    meta = {**data.get("meta", {}), **{k: v for k, v in data.items() if k not in core}}
    return BenchmarkTask(
        benchmark="world",
        task_id=str(data["task_id"]),
        split=data.get("split", "test"),
        domain=data.get("domain", ""),
        question=data["question"],
        answer=data.get("answer"),
        answer_type=data.get("answer_type", "exact"),
        choices=data.get("choices", []),
        meta=meta,
    )


def _load(
    qualifier: str, path: str | Path | None, split: str | None, limit: int | None, seed: int = 0
) -> list[BenchmarkTask]:
    """The world's tasks as BenchmarkTasks (world-only fields such as `evidence` go to meta); `path` is a
    built world's folder (default: the cached world of `seed`, built on first use)."""
    from lab.world.build import build_world, load_world

    family = world_family(qualifier)
    world = load_world(out_dir=path) if path else build_world(seed=seed, progress=False)
    tasks = [from_world_task(task) for task in world.select(family=family, split=split)]
    return apply_limit(tasks, limit)


def _open(qualifier: str, path: str | None, split: str | None) -> EvalSource:
    """The cached world of seed 0, its tasks as they are (`WorldTask`s, which graders and simulated
    models read), in a stable shuffle so `--limit N` samples every family instead of the first one."""
    from lab.world.build import build_world
    from lab.world.domain_tools import DOMAIN, make_domain_tools, untouched_session

    family = world_family(qualifier)
    world = build_world(seed=0, progress=True)
    tasks = sorted(world.select(family=family, split=split),
                   key=lambda t: hashlib.sha256(t.task_id.encode()).hexdigest())

    async def grader(task: WorldTask, answer: str | None, context: ToolContext) -> float:
        if task.answer_type == "actions" and DOMAIN not in context.state:
            # a rollout that touched no shop tool is judged on the untouched shop (read-only, no copy)
            context.state[DOMAIN] = untouched_session(world.db)
        return float(grade(task, answer, context).correct)

    domain_tools = make_domain_tools(world.db)

    def task_tools(task: WorldTask) -> dict[str, Tool]:
        return domain_tools if task.family == "tau2" else {}

    # every WorldTask field (evidence, difficulty, family...) lands in meta, where calibration reads it
    records = [from_world_task(t).to_record() for t in tasks]
    return EvalSource("world", list(tasks), grader, records, task_tools=task_tools)


SOURCE = BenchmarkSource(
    name="world", usage="world (or world:frames, world:hle, world:bookshop)",
    description="the offline world (lab.world); world:<family> for frames, hle or bookshop (its tau2-like shop)",
    load=_load, open=_open, qualified=True, rounds=True, simulated_judge=True,
)
