"""The world build's self-check: reference programs print their answers, evidence is where it should be,
and golden bookshop actions are accepted by the shop.

Why one child process for all reference programs: starting Python ~250 times costs several seconds on
2 cores; one fresh interpreter that runs each program in its own namespace with stdout captured still
proves the code runs standalone (no generator state leaks in), at a fraction of the cost.
"""

from __future__ import annotations

import json
import subprocess
import sys

from lab.graders import numeric_match
from lab.world.bookshop import DomainError, apply, clone
from lab.world.corpus import Document
from lab.world.task import WorldTask

_HARNESS = r"""
import contextlib, io, json, sys
programs = json.load(sys.stdin)
out = {}
for task_id, code in programs.items():
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            exec(compile(code, task_id, "exec"), {"__name__": "__main__"})
        out[task_id] = buffer.getvalue()
    except Exception as exc:
        out[task_id] = "ERROR " + type(exc).__name__ + ": " + str(exc)
json.dump(out, sys.stdout)
"""


def run_reference_programs(tasks: list[WorldTask], timeout_s: float = 120.0) -> dict[str, str]:
    """task_id -> what its reference program printed, each run in one fresh `python -I` process."""
    programs = {t.task_id: t.reference_code for t in tasks if t.reference_code}
    if not programs:
        return {}
    done = subprocess.run([sys.executable, "-I", "-c", _HARNESS], input=json.dumps(programs), capture_output=True,
                          text=True, timeout=timeout_s, check=True)
    return json.loads(done.stdout)


def printed_answer_ok(task: WorldTask, printed: str) -> bool:
    """Does a program's output state the task's answer (within the task's tolerance)?"""
    return numeric_match(printed.strip(), task.answer, task.tolerance).correct


def self_check(docs: list[Document], tasks: list[WorldTask], db: dict) -> list[str]:
    """Every problem found, one line each; an empty list means the world is consistent."""
    problems: list[str] = []
    outputs = run_reference_programs(tasks)
    for task in tasks:
        if task.task_id in outputs and not printed_answer_ok(task, outputs[task.task_id]):
            problems.append(f"{task.task_id}: reference printed {outputs[task.task_id][:60]!r}, answer {task.answer!r}")
    by_id = {d.id: d.text for d in docs}
    shop = clone(db)  # tasks use distinct customers, so their golden actions can share one copy
    for task in tasks:
        if task.family == "frames":
            texts = " ".join(by_id.get(i, "") for i in task.support_doc_ids)
            problems += [f"{task.task_id}: evidence not in support docs: {e!r}" for e in task.evidence if e not in texts]
        if task.family == "tau2":
            problems += _golden_problems(task, shop)
    return problems


def _golden_problems(task: WorldTask, shop: dict) -> list[str]:
    """Every golden action must be accepted by the shop's policy (a refused one would make the task unsolvable)."""
    for action in task.answer:
        try:
            apply(shop, action["name"], dict(action["arguments"]))
        except DomainError as exc:
            return [f"{task.task_id}: golden action {action['name']} refused: {exc}"]
    return []
