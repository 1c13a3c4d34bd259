"""The released evaluation's tau2 agent, as a loop beside the lab's own (`--tau2-agent released`).

What the authors' tau2 evaluation does (evaluation/tau2-bench in the released code, run by its
run.py with `--max-steps 200 --use_model_tool`), and where this loop keeps it:

- The system prompt is instructions plus the domain policy (`<instructions>...</instructions>
  <policy>...</policy>`). For the orchestrator the policy's paragraph on handing the user to a human is
  replaced by one on calling an expert, `transfer_to_human_agents` is withdrawn from its tools,
  `call_expert` is added, and a closing line asks for `<think>`, `<message>` and `<tool_call>` tags.
  The wording here is the lab's; the structure and the facts are the released code's.
- The agent opens with a fixed greeting; the simulated user (gpt-5 in the released runs; here
  `lab.benchmarks.tau2_user`, scripted or an LLM tool of the toolkit) answers it.
- A reply is read after its last `</think>`: tool calls are calls (at most six are kept); otherwise the
  text inside the last `<message>...</message>`, or the whole text when untagged, goes to the user.
- `call_expert` names an expert slot (`lab.benchmarks.tau2_experts`): the slot's model reads the
  conversation with the domain's own prompt and tools, and its reply *is* the agent's turn (a message
  or tool calls). The orchestrator's call is not kept in the conversation, only what the expert did.
- tau2 counts steps: each agent reply, each execution of its tool calls and each user reply is one.
  The conversation stops at 200 steps, or after 10 tool errors; only one the user ended is graded.
- Costs: the released code prices the orchestrator's and the expert's tokens, then sets the cost it
  returns to 0. Here they are kept: the orchestrator's turns in the trajectory's cost, each expert
  call as a step with its model, tokens and cost, counted under the toolkit tool that ran it.

The records are the conversation protocol's (`lab.rollout.engine`): `answer` steps are messages to the
user, `user` steps the user's replies (flagged `simulated` unless a real model wrote them).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from lab.errors import LabInputError
from lab.records import StepRecord
from lab.rollout.config import RolloutConfig
from lab.rollout.parse import ToolCall, parse_turn
from lab.rollout.running import RolloutState, cap_reached, execute_call, record_call
from lab.tools.base import AGENT_MESSAGES, Observation, Tool, ToolContext
from lab.toolspec import ToolSpec

#: tau2 steps before the conversation stops (released run.py: `--max-steps 200`).
MAX_STEPS = 200
#: Tool errors that end the conversation (tau2's default `max_errors`).
MAX_ERRORS = 10
#: Tool calls of one reply that are kept; the released code drops the rest.
MAX_CALLS = 6
CALL_EXPERT = "call_expert"
TRANSFER_TOOL = "transfer_to_human_agents"
GREETING = "Hi! How can I help you today?"
#: Sent to the user for an empty reply (the released code sends a holding line too).
HOLDING = "One moment, please; I will get back to you shortly."

THINK_CLOSE = "</think>"
MESSAGE_OPEN, MESSAGE_CLOSE = "<message>", "</message>"

INSTRUCTIONS = """You are a customer-service agent. Help the user within what the <policy> below allows.
Each turn do one thing only: write a message to the user, or call tools; never both at once.
Be helpful, keep to the policy, and write every tool call as valid JSON."""

#: The opening of the policy paragraph on handing the user to a human (tau2 retail and airline).
TRANSFER_RULE = "You should transfer the user to a human agent"
EXPERT_RULE = ("When you are not sure how to reply or which tool to use, hand the turn to an expert: call "
               "call_expert and choose the expert by how hard the request is, a strong one for a tricky request "
               "and a weaker one for a simple one, weighing what each expert costs against how well it does.")
TAGS = ("Think inside <think> </think>, write a message to the user inside <message> </message>, and write "
        "each tool call inside <tool_call> </tool_call>.")


def agent_prompt(policy: str, orchestrator: bool = True) -> str:
    """The system prompt: instructions and the domain policy. The orchestrator's (`orchestrator`) has the
    human-transfer paragraph replaced by when to call an expert, and the reply tags; an expert gets the
    domain's own prompt, policy unchanged.

    >>> "call_expert" in agent_prompt("You should transfer the user to a human agent if asked.")
    True
    >>> "call_expert" in agent_prompt("You should transfer the user to a human agent if asked.", orchestrator=False)
    False
    """
    text = policy.strip()
    if orchestrator:
        text = "\n".join(EXPERT_RULE if line.startswith(TRANSFER_RULE) else line for line in text.splitlines())
    prompt = f"<instructions>\n{INSTRUCTIONS}\n</instructions>\n<policy>\n{text}\n</policy>"
    return f"{prompt}\n{TAGS}" if orchestrator else prompt


def opening_messages(policy: str, opening: str) -> list[dict[str, Any]]:
    """The conversation before the orchestrator's first turn: its prompt, the greeting, the user's opening."""
    return [{"role": "system", "content": agent_prompt(policy)}, {"role": "assistant", "content": GREETING},
            {"role": "user", "content": opening}]


def offered(specs: list[ToolSpec]) -> list[ToolSpec]:
    """The tools the orchestrator is shown: the domain's and call_expert, without the transfer to a human."""
    return [spec for spec in specs if spec.name != TRANSFER_TOOL]


def message_of(text: str) -> str:
    """The message to the user in a reply: the text after the last `</think>`; if it holds both tags, the
    part after the last `<message>` up to the next `</message>` (or the end); stripped.

    >>> message_of("<think>ask for the email</think><message>What is your email?</message>")
    'What is your email?'
    >>> message_of("Sure, one moment.")
    'Sure, one moment.'
    """
    visible = text.rsplit(THINK_CLOSE, 1)[-1]
    if MESSAGE_OPEN in visible and MESSAGE_CLOSE in visible:
        visible = visible.rsplit(MESSAGE_OPEN, 1)[1].split(MESSAGE_CLOSE, 1)[0]
    return visible.strip()


@dataclass
class AgentTurn:
    """One agent reply: tool calls, or else a message to the user ("" for an empty reply)."""

    reasoning: str
    calls: list[ToolCall]
    message: str
    #: What the conversation keeps of the reply (no reasoning; a message without its tags).
    said: str
    #: The server's own tool calls (`tool_calls`), kept on the conversation's reply so results answer them by id.
    native: list[dict[str, Any]] = field(default_factory=list)


def read_turn(text: str, native_calls: list[dict[str, Any]] | None = None) -> AgentTurn:
    """Split a reply into calls (at most `MAX_CALLS`) or a message to the user."""
    parsed = parse_turn(text, native_calls)
    if parsed.calls:
        return AgentTurn(parsed.reasoning, parsed.calls[:MAX_CALLS], "", text.rsplit(THINK_CLOSE, 1)[-1].strip(),
                         list(native_calls or [])[:MAX_CALLS])
    message = message_of(text)
    return AgentTurn(parsed.reasoning, [], message, message)


@dataclass
class _Clock:
    """tau2's counters: steps taken and tool errors seen."""

    steps: int = 0
    errors: int = 0

    def over(self) -> str | None:
        if self.steps >= MAX_STEPS:
            return f"step limit {MAX_STEPS} reached before the user ended the conversation"
        if self.errors >= MAX_ERRORS:
            return f"{MAX_ERRORS} tool errors: tau2 ends the conversation"
        return None


async def play_released(session: Any, tools: dict[str, Tool], request: Any, config: RolloutConfig, context: ToolContext,
                        messages: list[dict[str, Any]], user: Any, state: RolloutState, started: float) -> None:
    """The released agent's conversation, until the user ends it or a limit stops it (module docstring).

    `tools` are the domain's and `call_expert`; `messages` start as `opening_messages`."""
    if user is None:
        raise LabInputError("the released tau2 agent talks to a simulated user, and this task has none")
    catalog = [spec.openai_schema() for spec in offered([tool.spec for tool in tools.values()])]
    domain = {name: tool for name, tool in tools.items() if name != CALL_EXPERT}
    clock = _Clock()
    observations: list[str] = []
    while True:
        key = dict(run_id=request.run_id, task_id=request.task.task_id, sample_idx=request.sample_idx,
                   train_step=request.train_step, turn=state.turns)
        state.turns += 1
        output = await session.generate(messages, tools=catalog, observations=observations)
        state.input_tokens += output.input_tokens
        state.output_tokens += output.output_tokens
        state.cost_usd += output.cost_usd
        state.latency_s += output.latency_s
        agent, failed, index = await _delegate(read_turn(output.text, output.native_calls), tools,
                                               context, config, state, key)
        clock.steps += 1
        state.stop_reason = clock.over()
        if state.stop_reason:
            return
        if agent.calls:
            observations = await _environment(agent, failed, index, domain, context, config, state,
                                              key, messages, clock)
        else:
            if await _tell_user(agent, user, context, state, key, messages, index, clock):
                return
            observations = []
        state.stop_reason = clock.over()
        if not state.stop_reason:
            state.stop_reason, state.cut = cap_reached(config, state, time.monotonic() - started)
        if state.stop_reason:
            return


async def _delegate(agent: AgentTurn, tools: dict[str, Tool], context: ToolContext, config: RolloutConfig,
                    state: RolloutState, key: dict[str, Any]) -> tuple[AgentTurn,
                                                                       tuple[ToolCall, Observation] | None, int]:
    """Hand the turn to the expert its well-formed call_expert names. -> (the turn to play: the expert's, or
    the orchestrator's own; the failed call_expert with its error, which is then the turn's only result;
    the next call index of the turn)."""
    call = next((c for c in agent.calls if c.name == CALL_EXPERT and c.error is None), None)
    if call is None:
        return agent, None, 0
    ((_, observation),) = await _execute([call], tools, context, config, state, key, 0, agent.reasoning)
    if observation.error is not None:  # the conversation keeps the failed call alone, answered by its error
        native = [n for n in agent.native if call.id and n.get("id") == call.id]
        return AgentTurn(agent.reasoning, [call], "", agent.said, native), (call, observation), 1
    return read_turn(observation.text), None, 1


async def _execute(calls: list[ToolCall], tools: dict[str, Tool], context: ToolContext, config: RolloutConfig,
                   state: RolloutState, key: dict[str, Any],
                   first: int, reasoning: str) -> list[tuple[ToolCall, Observation]]:
    """Run calls concurrently, record each as a step (from call index `first`), add the slowest one's latency."""
    results = await asyncio.gather(*(execute_call(call, i, tools, context, config) for i, call in enumerate(calls)))
    for i, (call, (observation, malformed)) in enumerate(zip(calls, results)):
        record_call(state, context, key, call, observation, malformed, first + i, reasoning if i == 0 else "")
    state.latency_s += max((observation.latency_s for observation, _ in results), default=0.0)
    return [(call, observation) for call, (observation, _) in zip(calls, results)]


async def _environment(agent: AgentTurn, failed: tuple[ToolCall, Observation] | None, index: int,
                       domain: dict[str, Tool],
                       context: ToolContext, config: RolloutConfig, state: RolloutState, key: dict[str, Any],
                       messages: list[dict[str, Any]], clock: _Clock) -> list[str]:
    """One environment step: the turn's calls run on the domain's tools (a failed call_expert has its result
    already), and the reply and the results join the conversation. -> the results' texts."""
    done = [failed] if failed else await _execute(agent.calls, domain, context, config, state, key,
                                                  index, agent.reasoning)
    assistant: dict[str, Any] = {"role": "assistant", "content": agent.said}
    if agent.native:
        assistant["tool_calls"] = agent.native
    messages.append(assistant)
    for call, observation in done:
        message = {"role": "tool", "name": call.name or "", "content": observation.text}
        if call.id:
            message["tool_call_id"] = call.id
        messages.append(message)
    clock.steps += 1
    clock.errors += sum(observation.error is not None for _, observation in done)
    return [observation.text for _, observation in done]


async def _tell_user(agent: AgentTurn, user: Any, context: ToolContext, state: RolloutState, key: dict[str, Any],
                     messages: list[dict[str, Any]], index: int, clock: _Clock) -> bool:
    """Send the turn's message to the user (a holding line for an empty reply, logged as a format error);
    True when the user ended the conversation, which makes the message the rollout's answer."""
    message = agent.message or HOLDING
    if not agent.message:
        state.format_ok = False
        state.steps.append(StepRecord(**key, call_idx=index, kind="format_error", reasoning=agent.reasoning,
                                      error="empty reply: neither a message nor a tool call"))
        index += 1
    messages.append({"role": "assistant", "content": message})
    context.state.setdefault(AGENT_MESSAGES, []).append(message)
    state.steps.append(StepRecord(**key, call_idx=index, kind="answer", reasoning=agent.reasoning, observation=message))
    reply = await user.reply(message)
    clock.steps += 1
    state.steps.append(StepRecord(**key, call_idx=index + 1, kind="user", observation=reply.text,
                                  simulated=reply.simulated))
    if reply.ended:
        state.answer = message
        return True
    messages.append({"role": "user", "content": reply.text})
    return False
