"""The world build's self-check: reference programs print their answers, every computational task has
verified wrong programs, evidence is where it should be, and golden bookshop actions are accepted.

Why one child process for all reference programs: starting Python ~250 times costs several seconds on
2 cores; one fresh interpreter that runs each program in its own namespace with stdout captured still
proves the code runs standalone (no generator state leaks in), at a fraction of the cost.
"""

from __future__ import annotations

import json
import subprocess
import sys

from lab.env.state import clone
from lab.graders import numeric_match
from lab.world.bookshop import BOOKSHOP
from lab.world.corpus import Document
from lab.world.task import WorldTask

_HARNESS = r"""
import contextlib, io, json, signal, sys
programs, per_program_s = json.load(sys.stdin)
def expire(signum, frame):
    raise TimeoutError("ran past %s s" % per_program_s)
signal.signal(signal.SIGALRM, expire)
out = {}
for key, code in programs.items():
    buffer = io.StringIO()
    try:
        signal.setitimer(signal.ITIMER_REAL, per_program_s)
        with contextlib.redirect_stdout(buffer):
            exec(compile(code, key, "exec"), {"__name__": "__main__"})
        out[key] = buffer.getvalue()
    except Exception as exc:
        out[key] = "ERROR " + type(exc).__name__ + ": " + str(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
json.dump(out, sys.stdout)
"""


def run_programs(programs: dict[str, str], per_program_s: float = 30.0, timeout_s: float = 300.0) -> dict[str, str]:
    """key -> what each program printed (or "ERROR ..."), all run in one fresh `python -I` process,
    each in its own namespace and stopped after `per_program_s`."""
    if not programs:
        return {}
    done = subprocess.run([sys.executable, "-I", "-c", _HARNESS], input=json.dumps([programs, per_program_s]),
                          capture_output=True, text=True, timeout=timeout_s, check=True)
    return json.loads(done.stdout)


def run_reference_programs(tasks: list[WorldTask]) -> dict[str, str]:
    """task_id -> what its reference program printed."""
    return run_programs({t.task_id: t.reference_code for t in tasks if t.reference_code})


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
        if task.reference_code and not task.meta.get("wrong_programs"):
            problems.append(f"{task.task_id}: no verified wrong program (a simulated coder needs one)")
    by_id = {d.id: d.text for d in docs}
    shop = clone(db)  # tasks use distinct customers, so their golden actions can share one copy
    for task in tasks:
        if task.family == "frames":
            texts = " ".join(by_id.get(i, "") for i in task.support_doc_ids)
            problems += [f"{task.task_id}: evidence not in support docs: {e!r}"
                         for e in task.evidence if e not in texts]
        if task.family == "tau2":
            problems += _golden_problems(task, shop)
    return problems


def _golden_problems(task: WorldTask, shop: dict) -> list[str]:
    """Every golden action must be accepted by the shop's policy (a refused one would make the task unsolvable)."""
    for action in task.answer:
        text, refused = BOOKSHOP.call(shop, action["name"], dict(action["arguments"]))
        if refused:
            return [f"{task.task_id}: golden action {action['name']} refused: {text.removeprefix('Error: ')}"]
    return []
