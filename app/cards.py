"""A rollout's steps as cards, the same in Rollouts (logged runs) and the Playground (a rollout as it plays).

One way to number and name things everywhere: rounds count from 1; a call is `tool · slot (model)`; an
answer belongs to the round whose `answer` call gave it; runs of identical calls (a model repeating itself
for 15 rounds) fold into one card; a round prompt whose context was cut from the front says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from lab.rollout.rounds import DOCUMENTS_HEADER, PROGRAMS_HEADER

LONG = 600  # observations longer than this start collapsed
CUT_MARK = "[… older context cut here to fit the round's token budget]\n"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def slot_of(step: Any) -> str:
    """The `model` slot a call named (`answer-3`), or ""."""
    try:
        arguments = json.loads(_text(getattr(step, "arguments_json", "")) or "{}")
    except ValueError:
        return ""
    slot = arguments.get("model") if isinstance(arguments, dict) else None
    return slot if isinstance(slot, str) else ""


def call_label(step: Any, models: dict[str, str] | None = None) -> str:
    """`search · search-2 (gpt-5-mini)`: the tool, the slot it named and the model behind the slot."""
    kind = _text(getattr(step, "kind", ""))
    tool = _text(getattr(step, "tool_name", "")) or kind
    slot = slot_of(step)
    model = _text(getattr(step, "model", "")) or (models or {}).get(slot, "")
    if kind == "format_error":
        return "malformed round (no valid call)"
    if kind == "answer":
        return "final answer"
    inner = f"{slot} ({model})" if slot and model else slot or model
    return f"{tool} · {inner}" if inner else tool


def marked_prompt(prompt: str, question: str | None) -> str:
    """The round prompt with a mark where the environment cut its context from the front (the released
    rule keeps the newest tokens), so text starting mid-word is not read as the model's input garbled."""
    if not prompt or not question:
        return prompt
    head = f"Problem: {question}\n\n"
    if not prompt.startswith(head):
        return prompt
    rest = prompt[len(head):]   # the context, then the instruction and the last line
    if not rest or rest.startswith(("\n", DOCUMENTS_HEADER, PROGRAMS_HEADER)):  # no context, or a whole one
        return prompt
    return head + CUT_MARK + rest


@dataclass
class Card:
    """Consecutive steps that make one card: one step, or a run of identical calls folded together."""

    steps: list[Any]

    @property
    def first(self) -> Any:
        return self.steps[0]


def fold(steps: Iterable[Any], models: dict[str, str] | None = None) -> list[Card]:
    """Cards in order: an answer joins the card of the call that gave it; a malformed round joins a card of
    malformed rounds before it; a call joins the card of an identical call just before it (same tool, slot
    and model, no error on either)."""
    cards: list[Card] = []
    for step in steps:
        if cards and _joins(cards[-1].steps[-1], step, models):
            cards[-1].steps.append(step)
        else:
            cards.append(Card([step]))
    return cards


def _joins(last: Any, step: Any, models: dict[str, str] | None) -> bool:
    kind, before = _text(getattr(step, "kind", "")), _text(getattr(last, "kind", ""))
    if kind == "answer":
        return getattr(last, "turn", None) == getattr(step, "turn", None)
    if kind != before or kind not in ("tool", "format_error"):
        return False
    if kind == "format_error":
        return True
    return (call_label(last, models) == call_label(step, models)
            and not _text(getattr(step, "error", "")) and not _text(getattr(last, "error", "")))


def rounds_text(steps: Sequence[Any]) -> str:
    turns = sorted({int(getattr(s, "turn", 0)) + 1 for s in steps})
    return f"round {turns[0]}" if len(turns) == 1 else f"rounds {turns[0]}-{turns[-1]}"


def render_card(card: Card, models: dict[str, str] | None = None, question: str | None = None) -> None:
    """One card: the header (rounds, call, tokens, cost, latency), then each step's prompt, reasoning,
    arguments and observation; a folded run shows its first call and lists the rest collapsed."""
    calls = [s for s in card.steps if _text(getattr(s, "kind", "")) != "answer"] or card.steps
    answer = next((s for s in card.steps if _text(getattr(s, "kind", "")) == "answer"), None)
    tokens = sum(int(s.input_tokens) + int(s.output_tokens) for s in calls)
    cost = sum(float(s.cost_usd) for s in calls)
    latency = sum(float(s.latency_s) for s in calls)
    times = f" ×{len(calls)}" if len(calls) > 1 else ""
    mark = " · simulated" if any(bool(getattr(s, "simulated", False)) for s in calls) else ""
    with st.container(border=True):
        st.markdown(f"**{rounds_text(card.steps)} · {call_label(calls[0], models)}{times}**{mark} — "
                    f"{tokens} tokens · {100 * cost:.3f}¢ · {latency:.1f} s")
        _step_body(calls[0], question)
        if len(calls) > 1:
            with st.expander(f"{len(calls) - 1} more identical calls"):
                for step in calls[1:]:
                    st.caption(f"round {int(step.turn) + 1}")
                    _step_body(step, question)
        if answer is not None:
            st.markdown(f"**answer:** {_text(answer.observation) or '(empty)'}")


def _step_body(step: Any, question: str | None) -> None:
    prompt = _text(getattr(step, "prompt", ""))
    if prompt:  # the round protocol: what the orchestrator read this round
        with st.expander(f"round prompt ({len(prompt)} characters)"):
            st.text(marked_prompt(prompt, question))
    if _text(step.reasoning).strip():
        st.markdown(f"*reasoning:* {step.reasoning}")
    arguments = _text(step.arguments_json)
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:  # a malformed call's text, as the model wrote it
        parsed = arguments
    if isinstance(parsed, dict):  # the slot is in the header already; a call's other arguments are its content
        parsed = {k: v for k, v in parsed.items() if k != "model" or not slot_of(step)}
    if parsed:
        st.code(parsed if isinstance(parsed, str) else json.dumps(parsed, indent=1, ensure_ascii=False),
                language=None if isinstance(parsed, str) else "json", wrap_lines=True)
    observation = _text(step.observation)
    if observation:
        if len(observation) > LONG:
            with st.expander(f"observation ({len(observation)} characters)"):
                st.text(observation)
        else:
            st.text(observation)
    if _text(getattr(step, "error", "")):  # the orchestrator's or a tool's error, not the page's
        st.warning(step.error)


def as_steps(frame: pd.DataFrame) -> list[Any]:
    """A steps frame's rows as objects with attributes, like the records a live rollout holds."""
    return list(frame.itertuples(index=False))
