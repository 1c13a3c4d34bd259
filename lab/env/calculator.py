"""tau2's calculator: the generic tool every domain offers, with tau2 retail's arithmetic and errors.

As in tau2 the expression is Python arithmetic (so `**` and `//` work) and a character check rules out
names; the result is rounded to 2 decimals. Unlike tau2's bare `eval`, a power whose exponent exceeds
`MAX_EXPONENT` is refused: a policy writing `9**9**9` would otherwise stall the rollout (and a trainer)
for hours. Refusals carry tau2's texts (`Invalid characters in expression`, Python's SyntaxError).

>>> evaluate("(1250.5 - 300) / 3")
'316.83'
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from lab.env.errors import ToolRefused

CALCULATOR_CHARS = frozenset("0123456789+-*/(). ")
MAX_EXPONENT = 10_000
_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow,
}


def evaluate(expression: str) -> str:
    """The expression's value rounded to 2 decimals, as text; `ToolRefused` with tau2's text for a bad
    one. Arithmetic errors (1/0, an overflow) and very deep nesting raise Python's own error."""
    if not all(char in CALCULATOR_CHARS for char in expression):
        raise ToolRefused("Invalid characters in expression")
    try:  # eval's own parse: leading blanks stripped, its error text
        tree = compile(expression.lstrip(" \t"), "<string>", "eval", ast.PyCF_ONLY_AST)
    except SyntaxError as exc:
        raise ToolRefused(str(exc)) from None
    return str(round(float(_arithmetic(tree.body)), 2))


def _arithmetic(node: ast.AST) -> Any:
    """Python's value of a parsed arithmetic expression (only what the character check lets through)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ToolRefused(f"exponent {right} is too large (the limit is {MAX_EXPONENT})")
        return _OPERATORS[type(node.op)](left, right)
    raise ToolRefused("Invalid expression")
