"""Benchmarks: FRAMES, HLE (text-only), tau2-bench, BFCL, ToolScale and the offline world, each a registered source.

Every benchmark module ends with one `SOURCE` (`lab.benchmarks.source.BenchmarkSource`): how to load
its tasks for a qualifier, what a run of them needs (grader, tools, simulated user) and the facts the
CLI and the harness read about it. They are registered here, in the order `orchestra eval --help`
lists them; a new benchmark is one module that calls `register(SOURCE)` (see `source.py`).

Loaders read local files (default: `$LAB_BENCHMARKS_DIR`, else `../shared/benchmarks` beside the
repo). Only `source="hub"` (FRAMES, HLE) reaches the network, and only when passed explicitly.

`load_benchmark(name, ...)` loads a benchmark's tasks by name:

| name                       | module                                   |
| -------------------------- | ---------------------------------------- |
| `world`, `world:<family>`  | `world`: the offline world (all, or frames, hle, bookshop) |
| `frames`                   | `frames` (`load_frames`)                 |
| `hle`                      | `hle` (`load_hle`)                       |
| `tau2`, `tau2:<domain>`    | `tau2` (`load_tau2`: all domains, or one) |
| `toolscale`, `toolscale:DIR` | `toolscale`: the synthesized ToolScale domains (`lab.synth`) |
| `toolscale:FILE.parquet`   | `toolscale` (`load_toolscale_parquet`: the released table) |
| `bfcl`, `bfcl:<category>`  | `bfcl` (`load_bfcl`: all five, or a comma list) |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lab.benchmarks import bfcl, frames, hle, tau2, toolscale, world
from lab.benchmarks.base import AnswerType, BenchmarkTask, default_benchmarks_dir
from lab.benchmarks.bfcl import CATEGORIES as BFCL_CATEGORIES
from lab.benchmarks.bfcl import check_task as check_bfcl_task
from lab.benchmarks.bfcl import load_bfcl
from lab.benchmarks.bfcl_checker import CheckResult, FunctionCall, check_bfcl, parse_calls
from lab.benchmarks.frames import load_frames
from lab.benchmarks.hle import load_hle
from lab.benchmarks.source import BenchmarkSource, EvalSource, find_source, register, resolve, sources
from lab.benchmarks.tau2 import Tau2Domain, load_tau2, load_tau2_domain
from lab.benchmarks.toolscale_parquet import load_toolscale_parquet
from lab.benchmarks.world import from_world_task
from lab.task import Task

__all__ = [
    "AnswerType",
    "BFCL_CATEGORIES",
    "BenchmarkSource",
    "BenchmarkTask",
    "CheckResult",
    "EvalSource",
    "FunctionCall",
    "Tau2Domain",
    "check_bfcl",
    "check_bfcl_task",
    "default_benchmarks_dir",
    "find_source",
    "from_world_task",
    "list_benchmarks",
    "load_benchmark",
    "load_bfcl",
    "load_frames",
    "load_hle",
    "load_tau2",
    "load_tau2_domain",
    "load_toolscale_parquet",
    "parse_calls",
    "register",
    "resolve",
    "sources",
]

for _module in (world, frames, hle, tau2, toolscale, bfcl):
    register(_module.SOURCE)


def list_benchmarks() -> dict[str, str]:
    """Registry names with a one-line description each."""
    return {source.name: source.description for source in sources()}


def load_benchmark(
    name: str,
    path: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    **options: Any,
) -> list[Task]:
    """Load a benchmark by registry name; `options` go to the loader (e.g. `source="hub"`)."""
    source, qualifier = resolve(name)
    return source.load(qualifier, path, split, limit, **options)
