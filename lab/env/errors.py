"""The one error a domain tool raises to refuse a call, and the line an agent reads for it.

Why one type: the bookshop, tau2 retail and the ToolScale domains all refuse calls the same way (an
unknown id, a policy the call breaks, an argument of the wrong type), and the adapter, the replay and
the golden-chain runner all catch it; one name means no layer catches the wrong one.
"""

from __future__ import annotations


class ToolRefused(ValueError):
    """A refused or impossible tool call; its text is what the agent is told, after `Error: `."""


def error_line(name: str, message: str) -> str:
    """A refusal as a typed domain reports it: `Error: <tool>: <message>` on one line.

    >>> error_line("get_user", "user 'u1' not found")
    "Error: get_user: user 'u1' not found"
    >>> error_line("get_user", "get_user: missing required argument 'id'")
    "Error: get_user: missing required argument 'id'"
    """
    message = " ".join(message.split())
    return f"Error: {message if message.startswith(name + ':') else f'{name}: {message}'}"
