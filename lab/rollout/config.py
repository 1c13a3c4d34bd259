"""Rollout limits, with the paper's values as defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lab.tools.experts import DocumentOrder, ExpertProtocol, Variant

#: `conversation`: the orchestrator reads the whole conversation (its own turns, tool responses);
#: `rounds`: a fresh prompt every round, the context built by the environment (`lab.rollout.rounds`).
Protocol = Literal["conversation", "rounds"]
PROTOCOLS: tuple[str, ...] = ("conversation", "rounds")

#: `first`: a round runs its first valid call; `distinct`: every distinct valid tool of the round.
CallsPerRound = Literal["first", "distinct"]

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
    tool_timeout_s: float | None = Field(
        None, gt=0,
        description="A ceiling on any one tool call of the orchestrator: a call running longer becomes an error "
                    "observation naming the tool and this limit. None: each tool's own limit (a model backend's "
                    "`timeout_s`, the code interpreter's, the expert protocol's `expert_timeout_s`).")
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
    calls_per_round: CallsPerRound = Field(
        "first", description="Rounds: which calls of a round run: the first valid one (released HLE and FRAMES "
                             "evaluation: eval_frames.py's loop ends in an unconditional `break`), or every distinct "
                             "valid tool, together, `answer` last (released training, and what eval_frames.py's "
                             "`processed_tools` intends).")
    run_programs: bool = Field(
        True, description="Rounds, released experts: whether an `enhance_reasoning` expert's program runs and its "
                          "output joins the context. False is the released FRAMES evaluation, whose reader indexes "
                          "the reply as `response['content'][0]['text']`, which fails on a chat completion: the "
                          "expert is asked (and paid) and nothing runs.")
    document_order: DocumentOrder = Field(
        "reverse", description="Rounds: how a search's documents join the context: after the others, least relevant "
                               "first (released evaluation), or interleaved with them (released training's "
                               "merge_documents).")
    catalog: str | None = Field(None,
                                description="Rounds: a tool catalog file in the released format (tools.json) "
                                            "instead of the toolkit's own.")
    expert_protocol: ExpertProtocol | None = Field(
        None, description="How slot tools ask their experts: the released evaluation's prompts, contexts, sampling "
                          "and waiting per model, or the lab's own prompts (`lab.tools.experts`). `released` also "
                          "builds the orchestrator's context and checks its calls as the released evaluation does "
                          "(`lab.rollout.rounds`). None: `released` under the round protocol, `lab` under the "
                          "conversation protocol.")
    expert_variant: Variant = Field("hle", description="Rounds, released experts: which released script's prompts and "
                                                       "budgets (eval_hle.py or eval_frames.py); set by the benchmark.")
    expert_timeout_s: float = Field(3600.0, gt=0,
                                    description="Released experts: ceiling on one expert call, retries included (the "
                                                "released client retries without end).")
    expert_retries: int = Field(60, ge=0, description="Released experts: retries of a failed expert call, a minute "
                                                      "apart at most.")
    tau2_agent: Tau2Agent = Field("lab", description="tau2: the lab's agent, or the released evaluation's (domain "
                                                     "policy in the system prompt, call_expert, <message> replies, "
                                                     "200 tau2 steps).")

    @model_validator(mode="after")
    def _experts_follow_the_protocol(self) -> RolloutConfig:
        """The expert protocol defaults to the released one under rounds; it needs the rounds' context."""
        if self.expert_protocol is None:
            self.expert_protocol = "released" if self.protocol == "rounds" else "lab"
        elif self.expert_protocol == "released" and self.protocol != "rounds":
            raise ValueError("expert_protocol 'released' needs protocol 'rounds' (the released experts read the "
                             "documents and programs the round protocol gathers)")
        return self
