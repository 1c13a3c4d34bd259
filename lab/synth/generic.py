"""The generic tools every synthetic domain offers: a calculator and a hand-over to a human.

Why shared: tau2's domains all carry these two (TOOLS.md §2.1) and they touch no database, so one
copy serves every domain. The calculator is tau2 retail's own (`lab.benchmarks.tau2_retail`), so its
arithmetic and rounding are the benchmark's; only its errors are re-raised as `DomainError`.
"""

from __future__ import annotations

from typing import Any

from lab.benchmarks.tau2_retail import RetailError
from lab.benchmarks.tau2_retail import calculate as retail_calculate
from lab.synth.domain import DomainError, Toolbox


def calculate(db: dict[str, Any], expression: str) -> str:
    """Evaluate an arithmetic expression and give the result rounded to 2 decimals.

    expression: digits, + - * /, parentheses and decimal points, e.g. '(1250.5 - 300) / 3'.
    """
    try:
        return retail_calculate(db, expression)
    except (RetailError, ArithmeticError, RecursionError) as exc:  # 1/0, 10**400 * 1.0, deep nesting
        raise DomainError(f"cannot evaluate {expression!r}: {exc}") from None


def transfer_to_human_agents(db: dict[str, Any], summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of what the user needs.

    summary: one or two sentences on the user's request and why it is handed over.
    """
    return "Transfer successful"


def add_generic_tools(box: Toolbox) -> None:
    """Register both generic tools in `box`."""
    box.generic(calculate)
    box.generic(transfer_to_human_agents)
