"""The multi-turn rollout engine, shared by evaluation and training (paper §3.1 loop).

Two protocols share it (`RolloutConfig.protocol`): `conversation`, below, and `rounds`, the released
checkpoint's (a fresh prompt per round, the context built by the environment: `lab.rollout.rounds`).
A tau2 conversation may instead run the released evaluation's agent (`RolloutConfig.tau2_agent`,
`lab.rollout.tau2_released`). All return the same records, counted, capped and executed by `lab.rollout.running`.

Conversation protocol, one rollout: system prompt (priced tool catalog + preference instruction), the task,
then turns of reasoning + tool calls until an answer, the turn limit, the cost cap or the wall-clock cap. The calls of
one turn run concurrently. Every call, answer and malformed output becomes a `StepRecord`; the
rollout becomes one `TrajectoryRecord` (and, when the policy has tokens, a token-level record: one for the
conversation, or under the round protocol one per round).

What the policy sees of the task is a `TaskView` (id and question), unless it is `privileged`.
A tool may end the episode with an answer (the paper toolkit's `answer`: `meta["final_answer"]`).
Tool counts, the first reward features, are defined here once: executed (well-formed) calls per
feature name (the tool, or the paper toolkit's slot in `meta["counted_as"]`); malformed calls are
format errors and count toward no tool. The status says how the rollout ended (`TrajectoryStatus`);
an `EndpointUnavailable` from the policy is an outage, returned as `unavailable` and never graded.
A grader with a judge model (`lab.eval.judged`) leaves its calls in the context: they become steps of
kind `judge` after the last turn, their cost the trajectory's `judge_cost_usd`, apart from `cost_usd`;
a `JudgeError` (no verdict) is returned as `judge_failed`, a rollout without a result like an outage.

Latency is the critical path: per turn the orchestrator's own time plus the slowest of its concurrent
calls, summed over turns. Simulated tools report latency without sleeping, so offline runs are fast
and still carry the latency the real models would have.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from lab.errors import EndpointUnavailable, JudgeError
from lab.records import StepRecord, TokenTrajectoryRecord, TrajectoryRecord
from lab.rollout.config import RolloutConfig
from lab.rollout.parse import ParsedTurn, parse_turn
from lab.rollout.policy import Policy, TaskView, TokenTrajectory
from lab.rollout.prompt import system_prompt, tool_response_text
from lab.rollout.rounds import RoundRecord, play_rounds
from lab.rollout.running import RolloutState, cap_reached, execute_call, judge_steps, record_call
from lab.rollout.tau2_released import offered, opening_messages, play_released
from lab.task import Task
from lab.tools.base import AGENT_MESSAGES, CONVERSATION, Tool, ToolContext, estimate_tokens

#: (task, final answer or None, tool context) -> outcome in [0, 1]
Grader = Callable[[Task, str | None, ToolContext], Awaitable[float]]

FORMAT_REMINDER = ("Your last message had no valid tool call or answer: {error}. "
                   "Use <tool_call>{{...}}</tool_call> or <answer>...</answer>.")


@dataclass
class RolloutRequest:
    """Which rollout to run and how it will be keyed in the store."""

    run_id: str
    task: Task
    sample_idx: int = 0
    train_step: int = 0
    group_id: str = ""
    preference: dict[str, float] = field(default_factory=dict)
    preference_instruction: str | None = None
    seed: int = 0
    benchmark: str = ""
    #: A simulated user (`lab.benchmarks.tau2_user`): it opens the conversation instead of the task's
    #: question, reads every answer, and the rollout goes on with its reply until it ends the call.
    user: Any = None


@dataclass
class RolloutResult:
    trajectory: TrajectoryRecord
    steps: list[StepRecord]
    tokens: TokenTrajectory | None = None
    context: ToolContext | None = None
    #: Set when the policy's endpoint was unavailable: the rollout is no result and must not be stored.
    unavailable: str | None = None
    #: Round protocol: each round's tokens (the trainer's rows), for policies that have tokens.
    rounds: list[RoundRecord] = field(default_factory=list)
    #: Set when the grader's judge model gave no verdict: the rollout has no grade and must not be stored.
    judge_failed: str | None = None

    def store_item(self) -> tuple[TrajectoryRecord, list[StepRecord], list[TokenTrajectoryRecord]]:
        """What the store writes for this rollout: the trajectory, its steps and its token records."""
        return self.trajectory, self.steps, self.token_records()

    def token_records(self) -> list[TokenTrajectoryRecord]:
        """Every token record of the rollout: the conversation's (round -1), and under the round protocol one
        per round that produced tokens, with whether it ran a valid call. Stored so that what the trainer
        trained on, round by round, can be inspected and replayed; empty for policies without tokens."""
        t = self.trajectory
        key = dict(run_id=t.run_id, task_id=t.task_id, sample_idx=t.sample_idx, train_step=t.train_step)
        records = []
        if self.tokens is not None and self.tokens.completion_ids:
            records.append(TokenTrajectoryRecord(**key, prompt_ids=self.tokens.prompt_ids,
                                                 completion_ids=self.tokens.completion_ids,
                                                 mask=self.tokens.mask, logprobs=self.tokens.logprobs))
        for played in self.rounds:
            tokens = played.tokens
            records.append(TokenTrajectoryRecord(**key, round_idx=played.turn, prompt_ids=tokens.prompt_ids,
                                                 completion_ids=tokens.completion_ids, mask=tokens.mask,
                                                 logprobs=tokens.logprobs, valid=played.valid))
        return records


async def run_rollout(
    policy: Policy,
    tools: dict[str, Tool],
    request: RolloutRequest,
    grader: Grader,
    config: RolloutConfig | None = None,
    state: RolloutState | None = None,
) -> RolloutResult:
    """Run one rollout to the end and grade it. Never raises for model or tool misbehaviour.

    `state` (empty) is the caller's to watch: its steps and totals fill as the rollout runs (the
    Playground reads them from another thread to show each round as it ends)."""
    config = config or RolloutConfig()
    task = request.task
    specs = [tool.spec for tool in tools.values()]
    context = ToolContext(task_id=task.task_id, task=task, seed=request.seed,
                          rng=random.Random(request.seed), findings=[])
    user = request.user.session(task) if request.user is not None else None
    question = user.opening() if user is not None else task.question
    seen = task if getattr(policy, "privileged", False) else TaskView(
        task_id=task.task_id, question=question, family=str(getattr(task, "family", "") or ""),
        preference=tuple(sorted(request.preference.items())))
    released = config.tau2_agent == "released"
    session = policy.session(seen, offered(specs) if released else specs, request.seed)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(specs, request.preference_instruction)},
        {"role": "user", "content": question},
    ]
    if released:  # the domain policy in the system prompt, and the agent's greeting before the user's opening
        messages = opening_messages((getattr(task, "meta", None) or {}).get("policy") or "", question)
    context.state[CONVERSATION] = messages
    state = state if state is not None else RolloutState()
    started = time.monotonic()
    error: str | None = None
    unavailable: str | None = None
    rounds: list[RoundRecord] = []
    key = dict(run_id=request.run_id, task_id=task.task_id, sample_idx=request.sample_idx,
               train_step=request.train_step)
    try:
        if config.protocol == "rounds":
            count = getattr(policy, "count_tokens", None) or estimate_tokens
            rounds = await play_rounds(session, tools, question, request.preference_instruction, context, config, key,
                                       state, count, started)
        elif released:
            await play_released(session, tools, request, config, context, messages, user, state, started)
        else:
            await _converse(session, tools, request, config, context, messages, user, state, started)
    except EndpointUnavailable as exc:
        unavailable = f"endpoint unavailable: {exc}"
    except Exception as exc:  # a broken policy ends this rollout, not the run; recorded on the trajectory
        error = f"policy failed: {type(exc).__name__}: {exc}"
    outcome = 0.0
    judge_failed: str | None = None
    if state.answer is not None and unavailable is None and error is None:
        try:
            outcome = await grader(task, state.answer, context)
        except JudgeError as exc:  # no verdict is neither right nor wrong: the harness does not store it
            judge_failed = str(exc)
        except Exception as exc:  # a grader bug is recorded on the trajectory, not raised into the run
            error = f"grader failed: {type(exc).__name__}: {exc}"
    status = _status(state, error)
    verdicts = context.verdicts or {"exact": outcome >= 1.0}
    trajectory = TrajectoryRecord(
        run_id=request.run_id, task_id=task.task_id, sample_idx=request.sample_idx, train_step=request.train_step,
        group_id=request.group_id, preference_json=json.dumps(request.preference), outcome=float(outcome),
        final_answer=state.answer, n_turns=state.turns, cost_usd=state.cost_usd, latency_s=state.latency_s,
        input_tokens=state.input_tokens, output_tokens=state.output_tokens, format_ok=state.format_ok,
        valid_output=state.answer is not None, error=unavailable or error or state.stop_reason,
        benchmark=request.benchmark,
        tool_counts_json=json.dumps(dict(state.tool_counts), sort_keys=True), status=status,
        criteria_json=json.dumps(context.criteria, sort_keys=True) if context.criteria is not None else None,
        exact_correct=None if status == "cut" else bool(verdicts["exact"]), judge_correct=verdicts.get("judge"),
        judge_cost_usd=sum(call.observation.cost_usd for call in context.judge_calls),
    )
    steps = state.steps + judge_steps(context, key, state.steps)
    return RolloutResult(trajectory, steps, session.token_trajectory(), context, unavailable=unavailable, rounds=rounds,
                         judge_failed=judge_failed)


async def _converse(session: Any, tools: dict[str, Tool], request: RolloutRequest, config: RolloutConfig,
                    context: ToolContext, messages: list[dict[str, Any]], user: Any,
                    state: RolloutState, started: float) -> None:
    """The conversation protocol: the orchestrator reads the whole conversation, its own turns included."""
    for turn in range(config.max_turns):
        state.turns = turn + 1
        output = await session.generate(messages, observations=_tool_replies(messages))
        state.input_tokens += output.input_tokens
        state.output_tokens += output.output_tokens
        state.cost_usd += output.cost_usd
        parsed = parse_turn(output.text, output.native_calls)
        messages.append(_assistant_message(output.text, output.native_calls))
        turn_latency = await _apply_turn(parsed, turn, tools, context, config, request, state, messages)
        state.latency_s += output.latency_s + turn_latency
        if state.answer is not None and (user is None or await _user_ends(user, turn, request,
                                                                          state, messages, context)):
            return
        state.stop_reason, state.cut = cap_reached(config, state, time.monotonic() - started)
        if state.stop_reason:
            return
    state.stop_reason = f"turn limit {config.max_turns} reached without an answer"


def _tool_replies(messages: list[dict[str, Any]]) -> list[str]:
    """The tool messages since the orchestrator's last turn, in order (what a script reads back)."""
    out: list[str] = []
    for message in reversed(messages):
        if message["role"] == "assistant":
            break
        if message["role"] == "tool":
            out.append(message["content"])
    return list(reversed(out))


async def _user_ends(user: Any, turn: int, request: RolloutRequest, state: RolloutState,
                     messages: list[dict[str, Any]], context: ToolContext) -> bool:
    """Hand the orchestrator's answer to the simulated user; True when the user ended the call, else
    its reply becomes the next user message and the rollout goes on (the answer was a message, not the end)."""
    context.state.setdefault(AGENT_MESSAGES, []).append(state.answer)
    reply = await user.reply(state.answer)
    index = 1 + max((s.call_idx for s in state.steps if s.turn == turn), default=-1)
    state.steps.append(StepRecord(run_id=request.run_id, task_id=request.task.task_id, sample_idx=request.sample_idx,
                                  train_step=request.train_step, turn=turn, call_idx=index, kind="user",
                                  observation=reply.text))
    if reply.ended:
        return True
    messages.append({"role": "user", "content": reply.text})
    state.answer = None
    return False


def _status(state: RolloutState, error: str | None) -> str:
    if error is not None:
        return "error"
    if state.answer is not None:
        return "answered"
    return "cut" if state.cut else "no_answer"


async def _apply_turn(
    parsed: ParsedTurn, turn: int, tools: dict[str, Tool], context: ToolContext,
    config: RolloutConfig, request: RolloutRequest, state: RolloutState, messages: list[dict[str, Any]],
) -> float:
    """Record the turn's steps, run its calls concurrently, append observations; returns its tool latency."""
    key = dict(run_id=request.run_id, task_id=request.task.task_id, sample_idx=request.sample_idx,
               train_step=request.train_step, turn=turn)
    if parsed.answer is not None:
        state.answer = parsed.answer
        state.steps.append(StepRecord(**key, kind="answer", reasoning=parsed.reasoning, observation=parsed.answer))
        return 0.0
    if parsed.format_error:
        state.format_ok = False
        state.steps.append(StepRecord(**key, kind="format_error", reasoning=parsed.reasoning,
                                      error=parsed.format_error))
        messages.append({"role": "user", "content": FORMAT_REMINDER.format(error=parsed.format_error)})
        return 0.0
    calls = parsed.calls
    results = await asyncio.gather(*(execute_call(call, i, tools, context, config) for i, call in enumerate(calls)))
    observations = [obs for obs, _ in results]
    for i, (call, (obs, malformed)) in enumerate(zip(calls, results)):
        record_call(state, context, key, call, obs, malformed, i, parsed.reasoning if i == 0 else "")
        message = {"role": "tool", "name": call.name or "", "content": tool_response_text(call.name or "?", obs.text,
                                                                                          config.observation_chars)}
        if call.id:
            message["tool_call_id"] = call.id
        messages.append(message)
    final = next((obs.meta["final_answer"] for obs, malformed in results
                  if not malformed and obs.error is None and obs.meta.get("final_answer") is not None), None)
    if final is not None:  # a tool that answers (the paper toolkit's `answer`) ends the episode
        state.answer = str(final)
        state.steps.append(StepRecord(**key, call_idx=len(calls), kind="answer", observation=state.answer))
    return max((obs.latency_s for obs in observations), default=0.0)


def _assistant_message(text: str, native_calls: list[dict[str, Any]] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if native_calls:
        message["tool_calls"] = native_calls
    return message
