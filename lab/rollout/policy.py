"""What the engine needs from an orchestrator policy, whatever runs it (transformers, an HTTP endpoint, a script).

A policy opens one session per rollout. The engine owns the chat messages; the session owns anything
engine-specific, notably the token-level trajectory that training needs: prompt ids, then completion
ids built by concatenating each turn's sampled ids with the ids of the tool responses, a mask
(1 = model token, 0 = tool output) and per-token logprobs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from lab.task import Task
from lab.toolspec import ToolSpec


@dataclass(frozen=True)
class TaskView:
    """What an orchestrator may know of a task: its id and the question it is asked, nothing else.

    Why a view and not the task: a task carries its reference answer, the facts that answer it and
    how it was made; a policy that read those would be graded on knowledge no deployed orchestrator
    has. Only policies that declare `privileged = True` (the oracle upper bound) get the whole task.
    """

    task_id: str
    question: str
    #: The benchmark family the task comes from (`frames`, `hle`...; public, as a benchmark's name is).
    family: str = ""
    #: The user's preference vector P for this task (the instruction states it too); `()` when none.
    preference: tuple[tuple[str, float], ...] = ()


class TokenTrajectory(BaseModel):
    """Token-level record of a rollout, for the trainer (never re-rendered from text)."""

    prompt_ids: list[int] = Field(default_factory=list)
    completion_ids: list[int] = Field(default_factory=list)
    mask: list[int] = Field(default_factory=list, description="1 = sampled by the model, 0 = tool output / template.")
    logprobs: list[float] = Field(default_factory=list, description="Per completion token; 0.0 where mask is 0.")


class PolicyOutput(BaseModel):
    """One orchestrator turn."""

    text: str = Field(description="The raw completion (reasoning, tool calls or answer).")
    native_calls: list[dict[str, Any]] | None = Field(None,
                                                      description="OpenAI-style tool_calls, if the server parsed them.")
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    tokens: TokenTrajectory | None = Field(
        None, description="Round protocol: this round's prompt and completion ids, for policies that have tokens.")


def sampling_seed(seed: int, task_id: str) -> int:
    """The seed a model policy samples one rollout with: the rollout's seed and its task's id, hashed.

    Why the task: an evaluation seeds every task's rollout of sample k alike (its simulated tools mix in
    the task themselves), so a policy that sampled from the bare seed would draw the same random numbers
    on every task, and its choices across tasks would be correlated, not independent samples."""
    return int.from_bytes(hashlib.blake2b(f"{seed}/{task_id}".encode(), digest_size=8).digest(), "little") >> 1


class PolicySession(Protocol):
    async def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       observations: list[str] | None = None) -> PolicyOutput:
        """The next turn.

        Conversation protocol: `messages` is the whole conversation so far (system, user, assistant and
        tool messages), `tools` None (the catalog is in the system prompt). Round protocol: `messages` is
        the round's fresh prompt, `tools` the catalog to render natively (chat template `tools=`, or the
        server's), and the output carries the round's `tokens`. `observations` are the tool results since
        the policy's last turn, for scripts (a model reads only its prompt)."""
        ...

    def token_trajectory(self) -> TokenTrajectory | None:
        """The token-level trajectory, or None for policies that have no tokens (scripts, remote APIs)."""
        ...


class Policy(Protocol):
    """A factory of sessions; `name` is recorded as the run's orchestrator.

    `session` receives a `TaskView`, or the whole task when the policy sets `privileged = True`."""

    name: str

    def session(self, task: Task, specs: list[ToolSpec], seed: int) -> PolicySession: ...
