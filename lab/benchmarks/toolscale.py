"""ToolScale (paper §3.3, Table 5) as a benchmark: synthesized domains, or the released table.

- `toolscale`: the default synthesized dataset (every registered domain, built into the cache on first
  use by `lab.synth.dataset.default_dataset`); its version (the synthesis code's hash) is part of a
  run's id, so a run of a rebuilt dataset is not resumed as the old one.
- `toolscale:DIR`: the tau2 domain folders `orchestra synth` wrote, executed by `lab.synth.env` and
  graded as tau2 grades.
- `toolscale:FILE.parquet`: the released table (`lab.benchmarks.toolscale_parquet`), which has no
  databases, so it is graded by golden actions as tau2 airline is.

Every task is a conversation with the scripted user. The synthesis code is imported late: the other
benchmarks must not need it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lab.benchmarks.base import BenchmarkTask
from lab.benchmarks.source import BenchmarkSource, EvalSource
from lab.benchmarks.tau2 import conversations, load_tau2
from lab.benchmarks.toolscale_parquet import load_toolscale_parquet
from lab.tools.base import Tool


def _load(
    qualifier: str, path: str | Path | None, split: str | None, limit: int | None, **options: Any
) -> list[BenchmarkTask]:
    if qualifier.endswith(".parquet"):
        return load_toolscale_parquet(qualifier, split, limit)
    from lab.synth.dataset import default_dataset

    return load_tau2(qualifier or path or default_dataset(), split, limit, domain=None)


def _open(qualifier: str, path: str | None, split: str | None) -> EvalSource:
    if qualifier.endswith(".parquet"):
        return conversations("toolscale", load_toolscale_parquet(qualifier, split))
    from lab.benchmarks.tau2_user import ScriptedUser
    from lab.synth.dataset import default_dataset
    from lab.synth.env import domain_of, domain_tools, grade_synth

    tasks = load_tau2(qualifier or str(default_dataset()), split=split, domain=None)
    tools = {t.domain: domain_tools(domain_of(t)) for t in {t.domain: t for t in tasks}.values()}  # once per domain
    user = ScriptedUser()

    def task_tools(task: BenchmarkTask) -> dict[str, Tool]:
        return dict(tools[task.domain])

    return EvalSource("toolscale", list(tasks), grade_synth, [t.to_record() for t in tasks], task_tools=task_tools,
                      user=lambda task: user)


def _run_identity(qualifier: str) -> dict[str, str]:
    """The default dataset is rebuilt when the synthesis code changes: its version is part of the run id."""
    if qualifier:
        return {}
    from lab.synth.dataset import code_key

    return {"dataset": code_key()}


SOURCE = BenchmarkSource(
    name="toolscale", usage="toolscale[:DIR] (DIR: what orchestra synth wrote)",
    description=("the synthesized ToolScale domains (default dataset); toolscale:DIR for what orchestra synth "
                 "wrote; toolscale:FILE.parquet for the released table (graded by golden actions)"),
    load=_load, open=_open, qualified=True, run_identity=_run_identity,
)
