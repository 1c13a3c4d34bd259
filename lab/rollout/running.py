"""What every rollout loop shares: the running totals of a rollout, the caps, and running one call.

Why a module of its own: the conversation loop (`lab.rollout.engine`), the round loop
(`lab.rollout.rounds`) and the released tau2 agent (`lab.rollout.tau2_released`) must count, cap and
execute identically, or the reward would differ by protocol.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from lab.records import StepRecord, utcnow
from lab.rollout.config import RolloutConfig
from lab.rollout.parse import ToolCall
from lab.tools.base import Observation, Tool, ToolContext, validate_arguments
from lab.tools.findings import finding


@dataclass
class RolloutState:
    """Running totals of one rollout."""

    steps: list[StepRecord] = field(default_factory=list)
    tool_counts: Counter = field(default_factory=Counter)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    format_ok: bool = True
    answer: str | None = None
    stop_reason: str | None = None
    cut: bool = False
    turns: int = 0


async def execute_call(
    call: ToolCall, index: int, tools: dict[str, Tool], context: ToolContext, config: RolloutConfig
) -> tuple[Observation, bool]:
    """Run one call -> (observation, malformed). Every failure becomes an error observation the
    orchestrator can read; malformed calls (bad JSON, unknown tool, schema violation, over the per-turn
    limit) are also flagged for the format-consistency filter."""
    if call.error:
        return Observation.failure(call.error), True
    if index >= config.max_calls_per_turn:
        return Observation.failure(f"more than {config.max_calls_per_turn} tool calls in one "
                                   "turn; this one was not run"), True
    if call.name not in tools:
        return Observation.failure(f"unknown tool '{call.name}' (available: {', '.join(tools)})"), True
    tool = tools[call.name]
    problem = validate_arguments(tool.spec, call.arguments)
    if problem:
        return Observation.failure(problem), True
    started = time.monotonic()
    try:
        return await asyncio.wait_for(tool.execute(call.arguments, context), timeout=config.tool_timeout_s), False
    except TimeoutError:
        message = f"tool '{call.name}' timed out after {config.tool_timeout_s:g} s (the run's tool_timeout_s)"
    except Exception as exc:  # a tool bug is reported to the orchestrator, the rollout goes on
        message = f"tool '{call.name}' failed: {type(exc).__name__}: {exc}"
    return Observation.failure(message, latency_s=time.monotonic() - started), False


def record_call(state: RolloutState, context: ToolContext, key: dict[str, Any], call: ToolCall, obs: Observation,
                malformed: bool, call_idx: int = 0, reasoning: str = "", prompt: str = "") -> None:
    """Count one executed (or malformed) call, log its step, and add what it found to the rollout's
    transcript and findings: tool counts are the calls per feature (the tool, or a slot tool's slot in
    `meta["counted_as"]`); a malformed call is a format error and counts toward no tool."""
    if malformed:
        state.format_ok = False
    else:
        state.tool_counts[obs.meta.get("counted_as") or call.name] += 1
    state.cost_usd += obs.cost_usd
    state.steps.append(StepRecord(
        **key, call_idx=call_idx, kind="format_error" if malformed else "tool", reasoning=reasoning,
        tool_name=call.name,
        model=obs.model, arguments_json=json.dumps(call.arguments, ensure_ascii=False, default=str),
        observation=obs.text,
        input_tokens=obs.input_tokens, output_tokens=obs.output_tokens, cost_usd=obs.cost_usd, latency_s=obs.latency_s,
        error=obs.error, started_at=utcnow(), simulated=obs.simulated, prompt=prompt,
    ))
    context.transcript.append(obs.text)
    found = obs.meta.get("finding", obs.text)  # a model's reply sets "" (a claim, not a finding)
    if context.findings is not None and not malformed and obs.error is None and found:
        context.findings.append(finding(found, call.arguments))


def judge_steps(context: ToolContext, key: dict[str, Any], after: list[StepRecord]) -> list[StepRecord]:
    """The grader's judge calls (`context.judge_calls`) as steps of kind `judge`, on the turn after the
    last of `after` (the rollout's steps): they never share a key with the orchestrator's steps, and
    their tokens and cost are the judge's, never added to the rollout's totals."""
    turn = 1 + max((step.turn for step in after), default=-1)
    return [StepRecord(
        **key, turn=turn, call_idx=i, kind="judge", tool_name=call.tool_name, model=call.observation.model,
        arguments_json=json.dumps({"prompt": call.prompt}, ensure_ascii=False), observation=call.observation.text,
        input_tokens=call.observation.input_tokens, output_tokens=call.observation.output_tokens,
        cost_usd=call.observation.cost_usd, latency_s=call.observation.latency_s, error=call.observation.error,
        simulated=call.observation.simulated,
    ) for i, call in enumerate(context.judge_calls)]


def cap_reached(config: RolloutConfig, state: RolloutState, elapsed_s: float) -> tuple[str | None, bool]:
    """(why the rollout stops, whether it was cut by the cost cap) or (None, False)."""
    if config.cost_cap_usd is not None and state.cost_usd >= config.cost_cap_usd:
        return f"cost cap ${config.cost_cap_usd:g} reached", True
    if config.wall_clock_s is not None and elapsed_s >= config.wall_clock_s:
        return f"wall-clock cap {config.wall_clock_s:g} s reached", False
    return None, False
