"""The generic tools every synthetic domain offers: a calculator and a hand-over to a human.

Why shared: tau2's domains all carry these two (TOOLS.md §2.1) and they touch no database, so one
copy serves every domain. The calculator is tau2's (`lab.env.calculator`, tau2 retail's too), so its
arithmetic and rounding are the benchmark's; its errors are re-raised naming the expression.
"""

from __future__ import annotations

from typing import Any

from lab.env.calculator import evaluate
from lab.env.errors import ToolRefused
from lab.env.schema import Toolbox


def calculate(db: dict[str, Any], expression: str) -> str:
    """Evaluate an arithmetic expression and give the result rounded to 2 decimals.

    expression: digits, + - * /, parentheses and decimal points, e.g. '(1250.5 - 300) / 3'.
    """
    try:
        return evaluate(expression)
    except (ToolRefused, ArithmeticError, RecursionError) as exc:  # 1/0, 10**400 * 1.0, deep nesting
        raise ToolRefused(f"cannot evaluate {expression!r}: {exc}") from None


def transfer_to_human_agents(db: dict[str, Any], summary: str) -> str:
    """Hand the conversation to a human agent, with a short summary of what the user needs.

    summary: one or two sentences on the user's request and why it is handed over.
    """
    return "Transfer successful"


def add_generic_tools(box: Toolbox) -> None:
    """Register both generic tools in `box`."""
    box.generic(calculate)
    box.generic(transfer_to_human_agents)
