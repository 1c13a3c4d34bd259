"""Plausible wrong programs for the world's computational tasks: the reference program with one slip.

Why this exists: a simulated coder that does not "know how" must still write a program that looks
like the right one, or an orchestrator learns to re-ask until the program *computes something* (a
wrong program that only prints a literal gives itself away). Real coding slips are one token wide: an
off-by-one bound, a wrong constant, `+` for `-`, `<` for `<=`. So each wrong program is the reference
source with exactly one such token replaced in place (comments, names and layout untouched, so right
and wrong programs cannot be told apart by their surface), and the world build keeps only those that
run, print a single value, and print one the task's grader rejects (`verified_wrong_programs`).
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from typing import Any

from lab.world.selfcheck import printed_answer_ok, run_programs
from lab.world.task import WorldTask

#: Wrong programs kept per task, and candidate slips tried per task (each candidate runs once at build).
KEEP = 3
TRY = 8
_OPERATOR_SWAPS = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "+"), ast.FloorDiv: ("//", "%")}
_COMPARE_SWAPS = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">")}


def slips(code: str) -> Iterator[tuple[str, str]]:
    """Every one-token slip of `code` as (kind, new source): constants off by one or by ~10%,
    swapped arithmetic operators and comparison bounds. Exponents and `while` loops are left alone
    (a slip there can make a program run for hours)."""
    tree = ast.parse(code)
    lines = code.splitlines(keepends=True)
    exponents = {id(n.right) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)}
    looping = {id(inner) for loop in ast.walk(tree) if isinstance(loop, ast.While) for inner in ast.walk(loop)}
    for node in ast.walk(tree):
        if id(node) in looping:
            continue
        if isinstance(node, ast.Constant) and id(node) not in exponents and _is_number(node.value):
            for new in _constant_slips(node.value):
                yield "constant", _replace(lines, node.lineno, node.col_offset, node.end_col_offset, repr(new))
        elif isinstance(node, ast.BinOp) and type(node.op) in _OPERATOR_SWAPS:
            old, new = _OPERATOR_SWAPS[type(node.op)]
            patched = _swap_between(lines, node.left, node.right, old, new)
            if patched:
                yield "operator", patched
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE_SWAPS:
            old, new = _COMPARE_SWAPS[type(node.ops[0])]
            patched = _swap_between(lines, node.left, node.comparators[0], old, new)
            if patched:
                yield "bound", patched


def candidate_slips(task: WorldTask, n: int = TRY) -> list[str]:
    """Up to `n` distinct slips of the task's reference program, a stable sample per task."""
    code = task.reference_code or ""
    unique = list(dict.fromkeys(new for _, new in slips(code) if new != code))
    random.Random(f"wrong-programs:{task.task_id}:{task.question}").shuffle(unique)
    return unique[:n]


def verified_wrong_programs(tasks: list[WorldTask]) -> dict[str, list[str]]:
    """task_id -> up to `KEEP` slipped programs that run and print one value the task's grader rejects.

    A first pass tries `TRY` slips per task; tasks left with none (slips within the tolerance of a large
    answer, say) get a second pass over all their slips."""
    kept = _verified(tasks, {t.task_id: candidate_slips(t) for t in tasks if t.reference_code})
    lacking = [t for t in tasks if t.reference_code and t.task_id not in kept]
    if lacking:
        kept.update(_verified(lacking, {t.task_id: candidate_slips(t, n=10_000)[TRY:] for t in lacking}))
    return kept


def _verified(tasks: list[WorldTask], slipped: dict[str, list[str]]) -> dict[str, list[str]]:
    candidates = {f"{task_id}#{i}": code for task_id, codes in slipped.items() for i, code in enumerate(codes)}
    printed = run_programs(candidates, per_program_s=0.5)
    by_id = {t.task_id: t for t in tasks}
    kept: dict[str, list[str]] = {}
    for key, code in candidates.items():
        task_id = key.rsplit("#", 1)[0]
        out = printed.get(key, "ERROR")
        lines = [ln for ln in out.strip().splitlines() if ln.strip()]
        if out.startswith("ERROR") or len(lines) != 1 or printed_answer_ok(by_id[task_id], out):
            continue
        if len(kept.setdefault(task_id, [])) < KEEP:
            kept[task_id].append(code)
    return {task_id: codes for task_id, codes in kept.items() if codes}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _constant_slips(value: int | float) -> list[int | float]:
    if isinstance(value, int):
        return [value + 1, value - 1] if value not in (0, 1) else [value + 1]
    return [round(value * 1.1, 6), round(value * 0.9, 6)]


def _replace(lines: list[str], lineno: int, start: int, end: int | None, text: str) -> str:
    out = list(lines)
    line = out[lineno - 1]
    out[lineno - 1] = line[:start] + text + line[end:]
    return "".join(out)


def _swap_between(lines: list[str], left: ast.AST, right: ast.AST, old: str, new: str) -> str | None:
    """Replace the operator token between two operands on one line (None when they span lines)."""
    if left.end_lineno != right.lineno:
        return None
    line = lines[right.lineno - 1]
    gap = line[left.end_col_offset:right.col_offset]
    at = gap.find(old)  # the gap holds only this node's operator (and brackets, spaces)
    if at == -1:
        return None
    start = left.end_col_offset + at
    return _replace(lines, right.lineno, start, start + len(old), new)
