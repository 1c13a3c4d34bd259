"""The pass@N build filter (paper §3.3): drop synthesized tasks every configured model already solves.

Why: a task that all of N rollouts of every model solve teaches GRPO nothing (its group has no reward
spread, and the trainer would skip it anyway) and says nothing in an evaluation; a task none solves
may be broken in a way the execution checks cannot see, so dropping those too is an option. The
rollouts are ordinary eval runs of the written folder (`--benchmark toolscale:DIR`), so every one of
them is in the store to inspect; the folders are then rewritten without the dropped tasks. It lives
with evaluation, not synthesis: it runs evaluations, and `lab.synth` needs nothing from `lab.eval`.

    counts = pass_at_n_filter(Path("data/toolscale"), ["bank"], ["openai:qwen3-32b@http://gpu:8000/v1"], n=8,
                              store=store)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.store import Store, queries
from lab.synth.export import export_domain, folder_hash, import_domain

ALL_SOLVED, NONE_SOLVED = "filter/pass_at_n_all_solved", "filter/pass_at_n_none_solved"


def solved_counts(store: Store, run_ids: list[str]) -> dict[str, tuple[int, int]]:
    """Task id -> (rollouts that solved it, rollouts finished) over the runs; errored rollouts are
    left out, so an endpoint that fails cannot make a task look unsolvable."""
    trajs = queries.trajectories_df(store, run_ids)
    finished = trajs[trajs.status != "error"]
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for task_id, outcome in zip(finished.task_id, finished.outcome):
        counts[task_id][0] += outcome >= 1.0
        counts[task_id][1] += 1
    return {task_id: (solved, total) for task_id, (solved, total) in counts.items()}


def verdict(solved: int, total: int, expected: int, drop_unsolved: bool) -> str | None:
    """The filter a task fails (`ALL_SOLVED` / `NONE_SOLVED`), or None to keep it.

    A task with fewer finished rollouts than `expected` is kept: "every rollout solved it" must mean
    all N of every model, not the few that happened to finish.
    """
    if total >= expected and solved == total:
        return ALL_SOLVED
    if drop_unsolved and total >= expected and solved == 0:
        return NONE_SOLVED
    return None


def pass_at_n_filter(out: Path, names: list[str], solvers: list[str], n: int, store: Store,
                     drop_unsolved: bool = False, console: Console | None = None,
                     seed: int = 0) -> dict[str, dict[str, int]]:
    """Run every solver `n` times on every task of the domain folders `out/<name>`, drop what
    `verdict` says, rewrite those folders; per domain, how many tasks each pass@N filter dropped and
    how many remain kept."""
    if not solvers:
        raise LabInputError("--pass-at: name at least one --solver "
                            "(an orchestrator: openai:<model>@<url>, hf:<dir> ...)")
    contents = [import_domain(out / name) for name in names]
    task_ids = [f"{content.name}-{task['id']}" for content in contents for task in content.tasks]
    run_ids = []
    for solver in solvers:
        config = EvalConfig.build(benchmark=f"toolscale:{out}", split="base", orchestrator=solver, samples=n, seed=seed,
                                  tasks=task_ids, run_name=f"pass-at-{n}")
        run_ids += [summary.run_id for summary in run_eval(config, store, console)]
    counts = solved_counts(store, run_ids)
    stats: dict[str, dict[str, int]] = {}
    for content in contents:
        folder = out / content.name
        dropped = {task["id"]: verdict(*counts.get(f"{content.name}-{task['id']}", (0, 0)), n * len(solvers),
                                       drop_unsolved) for task in content.tasks}
        keep = [task for task in content.tasks if dropped[task["id"]] is None]
        splits = {name: [i for i in ids if dropped.get(i) is None] for name, ids in content.splits.items()}
        export_domain(replace(content, tasks=keep, splits=splits), folder)
        reasons = list(dropped.values())
        stats[content.name] = {ALL_SOLVED: reasons.count(ALL_SOLVED), NONE_SOLVED: reasons.count(NONE_SOLVED),
                               "tasks/kept": len(keep), "folder_hash": folder_hash(folder)}
    return stats
