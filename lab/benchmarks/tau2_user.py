"""The simulated customer of a tau2 task: it opens the conversation, answers the agent, and ends it.

Why a user at all: in tau2-bench the agent never sees the task's instructions; it must ask the user
for what it needs (who they are, which order) and the user may not know everything (`unknown_info`).
A policy that is handed the whole scenario as its question is tested on less than tau2 tests. The
engine (`lab.rollout.engine`) gives every answer the orchestrator writes to the user and goes on
with the user's reply, until the user's text carries one of tau2's end markers.

Two simulators share one protocol (`session(task)` -> an object with `opening()` and `reply(text)`):

- `ScriptedUser`, offline and deterministic: opens with the reason for the call, answers a question
  with what `known_info` says, refuses one about what `unknown_info` says it does not know, and ends
  (`###STOP###`) when the agent asks nothing more. A stand-in for tests and offline runs, not a model
  of customers: it does not negotiate or follow `task_instructions`.
- `LLMUser`, any of the lab's LLM tools (an OpenAI-compatible endpoint): tau2's protocol, the scenario
  in the prompt and the end markers in its reply.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lab.task import Task

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
END_MARKERS = (STOP, TRANSFER, OUT_OF_SCOPE)
#: After this many replies the scripted user ends the call (a policy that only asks cannot loop forever).
MAX_REPLIES = 10
REFUSAL = "I'm sorry, I don't know that."
NOTHING_MORE = "I have told you everything I know."

_WORD = re.compile(r"[a-z0-9#]+")
_COMMON = frozenset("""a an the and or but you your i me my to of for in on at by with is are was were be been it
this that what which who whom how when where do does did can could would should will please have has had
know remember there their them they we our us as if not no yes any some all""".split())


@dataclass(frozen=True)
class UserReply:
    text: str
    ended: bool  # the text carries an end marker: the conversation is over
    simulated: bool = False  # written by a script or a simulated model, not by a real one


def ended(text: str) -> bool:
    return any(marker in text for marker in END_MARKERS)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON and len(w) > 2}


def _instructions(task: Task) -> dict[str, Any]:
    scenario = (getattr(task, "meta", None) or {}).get("user_scenario") or {}
    instructions = scenario.get("instructions") or {}
    return instructions if isinstance(instructions, dict) else {"reason_for_call": str(instructions)}


class ScriptedUser:
    """The offline simulator (see the module docstring)."""

    def session(self, task: Task) -> _ScriptedSession:
        return _ScriptedSession(_instructions(task))


class _ScriptedSession:
    def __init__(self, instructions: dict[str, Any]) -> None:
        self.reason = str(instructions.get("reason_for_call") or "").strip()
        self.known = str(instructions.get("known_info") or "").strip()
        self.unknown = str(instructions.get("unknown_info") or "").strip()
        self.replies = 0
        self.told = False

    def opening(self) -> str:
        return f"Hi. {self.reason}" if self.reason else "Hi, I need some help."

    async def reply(self, agent_message: str) -> UserReply:
        self.replies += 1
        if "?" not in agent_message or self.replies > MAX_REPLIES:
            return UserReply(f"Thank you, that's all. {STOP}", ended=True, simulated=True)
        asked = _words(agent_message)
        if self.unknown and len(asked & _words(self.unknown)) > len(asked & _words(self.known)):
            return UserReply(REFUSAL, ended=False, simulated=True)
        if self.known and not self.told:
            self.told = True
            return UserReply(self.known, ended=False, simulated=True)
        return UserReply(NOTHING_MORE, ended=False, simulated=True)


class LLMUser:
    """tau2's user protocol on one of the lab's LLM tools (`tool.execute({"prompt": ...})`)."""

    def __init__(self, tool: Any) -> None:
        self.tool = tool

    def session(self, task: Task) -> _LLMSession:
        return _LLMSession(self.tool, _instructions(task))


def with_llm_user(users: Callable[[Task], Any], tool: Any) -> Callable[[Task], LLMUser | None]:
    """`--user TOOL`: the LLM `tool` plays the user of every task `users` gives a (scripted) user."""
    simulator = LLMUser(tool)
    return lambda task: simulator if users(task) is not None else None


_USER_GUIDE = f"""You are playing a customer talking to a customer-service agent. Stay in character and
follow the scenario below. Reveal information only when the agent asks for it, one step at a time;
never invent information the scenario does not give you, and say so when you do not know something.
When your goal is reached, or cannot be reached, write {STOP} at the end of your message. If the agent
hands you over to a human, write {TRANSFER}. If the scenario does not cover what happens, write
{OUT_OF_SCOPE}. Reply with your next message only."""


class _LLMSession:
    def __init__(self, tool: Any, instructions: dict[str, Any]) -> None:
        self.tool = tool
        self.scenario = "\n".join(f"{key}: {value}" for key, value in instructions.items() if value)
        self.transcript: list[str] = []

    def opening(self) -> str:
        reason = next((line for line in self.scenario.splitlines() if line.startswith("reason_for_call")), "")
        text = f"Hi. {reason.partition(': ')[2]}" if reason else "Hi, I need some help."
        self.transcript.append(f"you: {text}")
        return text

    async def reply(self, agent_message: str) -> UserReply:
        self.transcript.append(f"agent: {agent_message}")
        prompt = f"{_USER_GUIDE}\n\nScenario:\n{self.scenario}\n\nConversation so far:\n" + "\n".join(self.transcript)
        observation = await self.tool.execute({"prompt": prompt})
        text = observation.text if observation.error is None else f"{observation.text} {STOP}"
        self.transcript.append(f"you: {text}")
        return UserReply(text, ended=ended(text), simulated=observation.simulated)
