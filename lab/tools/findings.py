"""What a tool call *found*: its observation without the call's own argument strings.

Why beside the tool interface: the rollout engine records a finding for every successful call
(`ToolContext.findings`), and the offline world's evidence rule (`lab.world.task.evidence_found`)
reads them; both sit above the tools, so the rule for what counts as found lives here, below both.
"""

from __future__ import annotations

import re
from typing import Any

#: A fact that is a number (`42`, `-3.5`, `1/3`, `1,024`): found only where it stands alone.
NUMBER_FACT = re.compile(r"[-+]?[\d.,/]+")


def finding(observation: str, arguments: dict[str, Any] | None = None) -> str:
    """What one successful tool call *found*: its observation without the call's own argument strings.

    Why strip arguments: a tool that echoes its input ("No passages found for \"1834\"", "no order
    '#O05001'") would otherwise let an orchestrator turn a guess into a finding by passing it as a query."""
    text = observation
    for value in _strings(arguments or {}):
        if NUMBER_FACT.fullmatch(value.strip()):  # a number, however short, where it stands alone
            text = standalone(value.strip()).sub(" ", text)
        elif len(value) >= 2:
            text = text.replace(value, " ")
    return text


def standalone(number: str) -> re.Pattern[str]:
    """`number` not inside a longer one ("3" is not in "1.35")."""
    return re.compile(rf"(?<![\d.]){re.escape(number)}(?!\.?\d)")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
