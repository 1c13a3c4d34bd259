"""Rollout limits, with the paper's values as defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: `conversation`: the orchestrator reads the whole conversation (its own turns, tool responses);
#: `rounds`: a fresh prompt every round, the context built by the environment (`lab.rollout.rounds`).
Protocol = Literal["conversation", "rounds"]
PROTOCOLS: tuple[str, ...] = ("conversation", "rounds")

#: The agent a tau2 conversation runs: `lab` (the conversation protocol, the lab's own prompt) or
#: `released` (the released evaluation's agent: `lab.rollout.tau2_released`).
Tau2Agent = Literal["lab", "released"]


class RolloutConfig(BaseModel):
    """How far one rollout may go before it is stopped."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(50, ge=1, description="Orchestrator turns before the rollout stops (paper §4: 50).")
    cost_cap_usd: float | None = Field(
        None, gt=0,
        description="Stop once the rollout's cost reaches this (the budget's allowance): such a "
                    "rollout is `cut`, no result.")
    wall_clock_s: float | None = Field(None, gt=0, description="Stop once the rollout has run this long (real time).")
    max_calls_per_turn: int = Field(8, ge=1,
                                    description="Tool calls executed per turn; further ones are format errors.")
    observation_chars: int = Field(6000, ge=100, description="Tool output shown to the orchestrator is cut here.")
    tool_timeout_s: float = Field(120.0, gt=0, description="A tool call running longer becomes an error observation.")
    protocol: Protocol = Field("conversation",
                               description="How the orchestrator is prompted: the whole conversation, or "
                                           "a fresh prompt per round.")
    context_tokens: int = Field(27000, ge=0,
                                description="Rounds: tokens of environment context, minus the "
                                            "problem's (released HLE: 27,000).")
    document_chars: int = Field(1200, ge=1,
                                description="Rounds: characters of each document shown (released "
                                            "HLE: 1,200; FRAMES: 4,000).")
    document_suffix: str = Field(" ...",
                                 description="Rounds: text after each document shown (released "
                                             "HLE: ' ...'; FRAMES: none).")
    withdraw_search_after_documents: bool = Field(False,
                                                  description="Rounds: offer `search` only until a document "
                                                              "exists (released FRAMES rule).")
    catalog: str | None = Field(None,
                                description="Rounds: a tool catalog file in the released format (tools.json) "
                                            "instead of the toolkit's own.")
    tau2_agent: Tau2Agent = Field("lab", description="tau2: the lab's agent, or the released evaluation's (domain "
                                                     "policy in the system prompt, call_expert, <message> replies, "
                                                     "200 tau2 steps).")
