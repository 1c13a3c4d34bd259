"""Rollout limits, with the paper's values as defaults."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RolloutConfig(BaseModel):
    """How far one rollout may go before it is stopped."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(50, ge=1, description="Orchestrator turns before the rollout stops (paper §4: 50).")
    cost_cap_usd: float | None = Field(
        None, gt=0, description="Stop once the rollout's cost reaches this (the budget's allowance): such a rollout is `cut`, no result.")
    wall_clock_s: float | None = Field(None, gt=0, description="Stop once the rollout has run this long (real time).")
    max_calls_per_turn: int = Field(8, ge=1, description="Tool calls executed per turn; further ones are format errors.")
    observation_chars: int = Field(6000, ge=100, description="Tool output shown to the orchestrator is cut here.")
    tool_timeout_s: float = Field(120.0, gt=0, description="A tool call running longer becomes an error observation.")
