"""Functions a benchmark names but nothing here executes: the call is the answer, so it is recorded.

BFCL never runs its functions (its AST checker grades the calls), and tau2 airline and the released
ToolScale table have no database to run their actions on (their golden actions are compared with the
calls). Both offer such functions as `RecordingTool`s and grade what `recorded_calls` returns.
"""

from __future__ import annotations

import json
from typing import Any

from lab.tools.base import Observation, ToolContext
from lab.toolspec import ToolSpec

#: The rollout-state key the calls are kept under.
RECORDED = "recorded_calls"


class RecordingTool:
    """A function the benchmark defines but never executes: the call is recorded and acknowledged."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        if context is not None:
            context.state.setdefault(RECORDED, []).append({"name": self.spec.name, "arguments": arguments})
        return Observation(text=f"{self.spec.name} called with {json.dumps(arguments, default=str)}")


def recorded_calls(context: ToolContext) -> list[dict[str, Any]]:
    """`{name, arguments}` of every recorded call of the rollout, in order."""
    return context.state.get(RECORDED, [])
