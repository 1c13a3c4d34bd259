"""Benchmark loaders: FRAMES, HLE (text-only), tau2-bench and BFCL, behind one registry.

Every loader is `load_<name>(path=None, split=None, limit=None, ...) -> list[BenchmarkTask]` and reads
local files (default: `$LAB_BENCHMARKS_DIR`, else `../shared/benchmarks` beside the repo). Only
`source="hub"` (FRAMES, HLE) reaches the network, and only when passed explicitly.

`load_benchmark(name, ...)` picks a loader by name:

| name                       | loader                                   |
| -------------------------- | ---------------------------------------- |
| `frames`                   | `load_frames`                            |
| `hle`                      | `load_hle`                               |
| `tau2`, `tau2:<domain>`    | `load_tau2` (all domains, or one)        |
| `bfcl`, `bfcl:<category>`  | `load_bfcl` (all five, or a comma list)  |
| `world`, `world:<family>`  | the offline world (all, or frames, hle, bookshop) |
| `toolscale`, `toolscale:DIR` | the synthesized ToolScale domains (`lab.synth`) |
| `toolscale:FILE.parquet`   | the released ToolScale table (`load_toolscale_parquet`) |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lab.benchmarks.base import AnswerType, BenchmarkTask, apply_limit, default_benchmarks_dir
from lab.benchmarks.bfcl import CATEGORIES as BFCL_CATEGORIES
from lab.benchmarks.bfcl import check_task as check_bfcl_task
from lab.benchmarks.bfcl import load_bfcl
from lab.benchmarks.bfcl_checker import CheckResult, FunctionCall, check_bfcl, parse_calls
from lab.benchmarks.frames import load_frames
from lab.benchmarks.hle import load_hle
from lab.benchmarks.tau2 import Tau2Domain, load_tau2, load_tau2_domain
from lab.benchmarks.toolscale_parquet import load_toolscale_parquet
from lab.errors import LabInputError

__all__ = [
    "AnswerType",
    "BFCL_CATEGORIES",
    "BenchmarkTask",
    "CheckResult",
    "FunctionCall",
    "Tau2Domain",
    "check_bfcl",
    "check_bfcl_task",
    "default_benchmarks_dir",
    "from_world_task",
    "list_benchmarks",
    "world_family",
    "load_benchmark",
    "load_bfcl",
    "load_frames",
    "load_hle",
    "load_tau2",
    "load_tau2_domain",
    "load_toolscale_parquet",
    "parse_calls",
]

#: Names without a `:` qualifier, with what the qualifier means.
BENCHMARKS: dict[str, str] = {
    "frames": "FRAMES multi-hop QA (824 questions)",
    "hle": "Humanity's Last Exam, text-only (local JSONL/Parquet or source='hub')",
    "tau2": "tau2-bench; tau2:<domain> for one domain (retail, airline)",
    "bfcl": "BFCL v4 AST categories; bfcl:<category>[,<category>] for some",
    "world": "the offline world (lab.world); world:<family> for frames, hle or bookshop (its tau2-like shop)",
    "toolscale": ("the synthesized ToolScale domains (default dataset); toolscale:DIR for what orchestra synth "
                  "wrote; toolscale:FILE.parquet for the released table (graded by golden actions)"),
}

#: The offline world's task families by the name `world:<name>` selects them with.
WORLD_FAMILIES = {"frames": "frames", "hle": "hle", "bookshop": "tau2"}


def world_family(qualifier: str) -> str | None:
    """The world family `world:<qualifier>` names (None for the whole world), or one clear error."""
    if not qualifier:
        return None
    if qualifier not in WORLD_FAMILIES:
        raise LabInputError(f"benchmark world:{qualifier}: unknown family (choose from {', '.join(WORLD_FAMILIES)})")
    return WORLD_FAMILIES[qualifier]


def list_benchmarks() -> dict[str, str]:
    """Registry names with a one-line description each."""
    return dict(BENCHMARKS)


def load_benchmark(
    name: str,
    path: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    **options: Any,
) -> list[BenchmarkTask]:
    """Load a benchmark by registry name; `options` go to the loader (e.g. `source="hub"`)."""
    base, _, qualifier = name.strip().partition(":")
    base = base.lower()
    if base == "frames" and not qualifier:
        return load_frames(path, split, limit, **options)
    if base == "hle" and not qualifier:
        return load_hle(path, split, limit, **options)
    if base == "tau2":
        return load_tau2(path, split, limit, domain=qualifier or None, **options)
    if base == "bfcl":
        categories = [c.strip() for c in qualifier.split(",") if c.strip()] or None
        return load_bfcl(path, split, limit, categories=categories, **options)
    if base == "world":
        return _load_world(path, split, limit, family=world_family(qualifier), **options)
    if base == "toolscale" and qualifier.endswith(".parquet"):
        return load_toolscale_parquet(qualifier, split, limit)
    if base == "toolscale":
        from lab.synth.dataset import default_dataset  # late: only ToolScale needs the synthesis code

        return load_tau2(qualifier or path or default_dataset(), split, limit, domain=None)
    raise LabInputError(f"benchmark: unknown name '{name}' (choose from {', '.join(BENCHMARKS)})")


def _load_world(
    path: str | Path | None, split: str | None, limit: int | None, family: str | None = None, seed: int = 0
) -> list[BenchmarkTask]:
    """The offline world's tasks as BenchmarkTasks (world-only fields such as `evidence` go to meta);
    `path` is a built world's folder (default: the cached world of `seed`, built on first use)."""
    from lab.world.build import build_world, load_world  # late: real benchmarks must not need the world

    world = load_world(out_dir=path) if path else build_world(seed=seed, progress=False)
    tasks = [from_world_task(task) for task in world.select(family=family, split=split)]
    return apply_limit(tasks, limit)


def from_world_task(task: Any) -> BenchmarkTask:
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
