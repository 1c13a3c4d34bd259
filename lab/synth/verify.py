"""The build filters that decide which generated tasks are kept, and the DB check that grades them.

Why filters: the paper keeps a synthesised task only if it verifies (§3.3). Four checks, in order,
each counted under its own key; a task is dropped by the first it fails:

- `filter/golden_runs`: every golden action runs without an error on a fresh copy of the database;
- `filter/needs_tools`: the golden end state differs from the start, or the task asks the agent to
  tell the user something (`communicate_info`), so no task is solved by doing nothing;
- `filter/writes_count`: every golden write changes the database; a write that changes nothing (a
  limit set to the value it has) could be skipped without the DB check noticing;
- `filter/communicate_from_reads`: every communicate string appears in the output of a golden read
  and nowhere in what the user is told, so it can only be learnt through the tools.

The DB check is tau2's (TOOLS.md §3.2) for these domains: the gold state runs every golden action,
reads included; a trajectory's state replays only its WRITE calls; both are compared by the sha256
of `json.dumps(db, sort_keys=True, default=str)`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lab.env.environment import Environment
from lab.env.replay import replay_writes, run_actions
from lab.env.state import canonical_hash, clone
from lab.synth.tasks import user_visible_text

FILTERS = ("golden_runs", "needs_tools", "writes_count", "communicate_from_reads")


@dataclass(frozen=True)
class GoldenRun:
    """What running a task's golden actions on a fresh copy showed."""

    db: dict[str, Any]
    gold_hash: str
    errors: list[str]
    reads: list[str]
    idle_writes: list[str]


def run_golden(domain: Environment, db: dict[str, Any], task: dict[str, Any],
               start_hash: str | None = None) -> GoldenRun:
    """Every golden action, in order, on a copy of `db`: the gold database and its hash, error lines,
    the outputs of the reads, and the ids of writes that changed nothing. Only writes change the
    state, so the hash is taken once per write; `start_hash` (of `db`) saves the first one."""
    gold = clone(db)
    current = start_hash or canonical_hash(db)
    errors, reads, idle = [], [], []
    actions = task["evaluation_criteria"]["actions"]
    for action, step in zip(actions, domain.run_chain(gold, actions)):
        if step.is_error:
            errors.append(f"{action['action_id']}: {step.text}")
        elif domain.access(action["name"]) == "read":
            reads.append(step.text)
        elif step.hash_after is not None:
            before, current = current, step.hash_after
            if current == before:
                idle.append(action["action_id"])
    return GoldenRun(gold, current, errors, reads, idle)


def db_check(domain: Environment, db: dict[str, Any], task: dict[str, Any], calls: Iterable[dict[str, Any]],
             gold_hash: str | None = None) -> bool:
    """tau2's DB criterion: the trajectory's replayed state hashes like the task's gold state.

    `gold_hash` (a `Verdict.gold_hash`) saves rebuilding the gold state when many trajectories of one
    task are graded, as in a GRPO group.
    """
    if gold_hash is None:  # a failing golden action changes nothing
        gold_hash = canonical_hash(run_actions(domain, db, task["evaluation_criteria"]["actions"]))
    return canonical_hash(replay_writes(domain, db, calls)) == gold_hash


@dataclass(frozen=True)
class Verdict:
    """One task's verification: kept or the filter that dropped it, and what the filters saw."""

    task_id: str
    kept: bool
    failed_filter: str | None
    golden_errors: list[str]
    changes_db: bool
    idle_writes: list[str]
    unreachable_info: list[str]
    gold_hash: str


def verify_task(domain: Environment, db: dict[str, Any], task: dict[str, Any],
                start_hash: str | None = None) -> Verdict:
    """Run the filters on one task; `start_hash` (of `db`) may be passed to save hashing it again."""
    start_hash = start_hash or canonical_hash(db)
    run = run_golden(domain, db, task, start_hash)
    changes_db = run.gold_hash != start_hash
    info = task["evaluation_criteria"]["communicate_info"] or []
    visible = user_visible_text(task)
    unreachable = [s for s in info if s in visible or not any(s in text for text in run.reads)]
    passed = {"golden_runs": not run.errors, "needs_tools": changes_db or bool(info),
              "writes_count": not run.idle_writes, "communicate_from_reads": not unreachable}
    failed = next((name for name in FILTERS if not passed[name]), None)
    return Verdict(task_id=task["id"], kept=failed is None, failed_filter=failed, golden_errors=run.errors,
                   changes_db=changes_db, idle_writes=run.idle_writes, unreachable_info=unreachable,
                   gold_hash=run.gold_hash)


def tally(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """Counts: `tasks/generated`, `tasks/kept`, and `filter/<name>` = tasks dropped by that filter."""
    verdicts = list(verdicts)
    counts = {"tasks/generated": len(verdicts), "tasks/kept": sum(v.kept for v in verdicts)}
    counts.update({f"filter/{name}": sum(v.failed_filter == name for v in verdicts) for name in FILTERS})
    return counts


def verify_tasks(domain: Environment, db: dict[str, Any],
                 tasks: Iterable[dict[str, Any]]) -> tuple[list[Verdict], dict[str, int]]:
    """Per-task verdicts, in order, and the per-filter counts."""
    start_hash = canonical_hash(db)
    verdicts = [verify_task(domain, db, task, start_hash) for task in tasks]
    return verdicts, tally(verdicts)
