"""Parse one orchestrator turn in the Qwen3/Hermes format.

A turn is optional reasoning (`<think>...</think>`), then either one or more tool calls
(`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`) or a final answer (`<answer>...</answer>`;
plain text with no tool call also counts as an answer, as in Hermes chat). Why a hand parser and not
a regex on the whole text: malformed calls must come back as precise format errors that the
orchestrator reads and the reward's format filter counts, never as crashes or silently dropped calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
OPEN, CLOSE = "<tool_call>", "</tool_call>"
_DECODER = json.JSONDecoder()
ANSWER_RE = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.DOTALL)


class ToolCall(BaseModel):
    """A parsed call: name and arguments, or the reason it could not be parsed."""

    name: str | None = None
    id: str | None = Field(None, description="Server-side call id of a native call (echoed in the tool message).")
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw: str = ""
    error: str | None = Field(None, description="Why the call is malformed (then name/arguments may be empty).")


class ParsedTurn(BaseModel):
    reasoning: str = ""
    calls: list[ToolCall] = Field(default_factory=list)
    answer: str | None = None
    format_error: str | None = Field(None, description="Set when the turn is neither valid calls nor an answer.")


def parse_turn(text: str, native_calls: list[dict[str, Any]] | None = None) -> ParsedTurn:
    """Split a completion into reasoning, tool calls and answer.

    `native_calls` are OpenAI-style `tool_calls` (function name + JSON-string arguments) from endpoints
    that parse calls server-side; they are validated the same way as text calls.

    >>> t = parse_turn('<think>need data</think><tool_call>{"name": "s", "arguments": {"q": 1}}</tool_call>')
    >>> (t.reasoning, t.calls[0].name, t.calls[0].arguments)
    ('need data', 's', {'q': 1})
    >>> parse_turn("<answer>42</answer>").answer
    '42'
    """
    reasoning, body = _split_reasoning(text or "")
    calls = [_parse_native(c) for c in native_calls or []]
    calls += _text_calls(body)
    if calls:
        return ParsedTurn(reasoning=reasoning, calls=calls)
    answer = ANSWER_RE.search(body)
    if answer:
        content = answer.group(1).strip()
        if content:
            return ParsedTurn(reasoning=reasoning, answer=content)
        return ParsedTurn(reasoning=reasoning, format_error="empty <answer></answer>")
    plain = body.strip()
    if plain:
        return ParsedTurn(reasoning=reasoning, answer=plain)
    return ParsedTurn(reasoning=reasoning, format_error="the turn holds neither a <tool_call> nor an <answer>")


def _split_reasoning(text: str) -> tuple[str, str]:
    """The reasoning block and the rest of the turn. Only a `<think>` that opens before the first tool
    call or answer is reasoning: a call's arguments may themselves hold "<think>" (a policy quoting
    a prompt), and cutting it out of the JSON would turn a valid call into a malformed one. An
    unclosed block (generation stopped mid-thought) is reasoning to the end of the text."""
    start = text.find(THINK_OPEN)
    first_tag = min((i for i in (text.find(OPEN), text.find("<answer>")) if i != -1), default=len(text))
    if start == -1 or start > first_tag:
        return "", text
    inner = start + len(THINK_OPEN)
    end = text.find(THINK_CLOSE, inner)
    if end == -1:
        return text[inner:].strip(), text[:start]
    return text[inner:end].strip(), text[:start] + text[end + len(THINK_CLOSE):]


def _text_calls(body: str) -> list[ToolCall]:
    """Every `<tool_call>{json}</tool_call>` in order. The JSON is decoded first and the closing tag
    looked for after it, so a string argument may itself contain "</tool_call>"."""
    calls: list[ToolCall] = []
    pos = body.find(OPEN)
    while pos != -1:
        start = pos + len(OPEN)
        while start < len(body) and body[start].isspace():
            start += 1
        close = body.find(CLOSE, start)
        try:
            value, end = _DECODER.raw_decode(body, start)
        except json.JSONDecodeError as exc:
            raw = body[start: close if close != -1 else len(body)].strip()
            error = f"tool call is not valid JSON ({exc.msg} at column {exc.pos - start + 1})"
            calls.append(ToolCall(raw=raw,
                                  error=error if close != -1 else "unterminated <tool_call> (missing </tool_call>)"))
            pos = body.find(OPEN, close + len(CLOSE)) if close != -1 else -1
            continue
        after = end
        while after < len(body) and body[after].isspace():
            after += 1
        raw = body[start:end]
        if body.startswith(CLOSE, after):
            calls.append(_from_mapping(value, raw))
            pos = body.find(OPEN, after + len(CLOSE))
        elif body.find(CLOSE, after) == -1:
            calls.append(ToolCall(raw=raw, error="unterminated <tool_call> (missing </tool_call>)"))
            pos = -1
        else:
            close = body.find(CLOSE, after)
            calls.append(ToolCall(raw=body[start:close].strip(),
                                  error="unexpected text after the tool call's JSON object"))
            pos = body.find(OPEN, close + len(CLOSE))
    return calls


def _parse_native(call: dict[str, Any]) -> ToolCall:
    function = call.get("function", call) if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return ToolCall(raw=json.dumps(call, default=str), error="native tool call has no 'function' object")
    raw = json.dumps(function, default=str)
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolCall(name=function.get("name"), id=call.get("id"), raw=raw,
                            error=f"arguments are not valid JSON ({exc.msg})")
    parsed = _from_mapping({"name": function.get("name"), "arguments": arguments}, raw)
    parsed.id = call.get("id") if isinstance(call, dict) else None
    return parsed


def _from_mapping(data: Any, raw: str) -> ToolCall:
    if not isinstance(data, dict):
        return ToolCall(raw=raw, error="tool call must be a JSON object with 'name' and 'arguments'")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return ToolCall(raw=raw, error="tool call has no 'name' string")
    arguments = data.get("arguments", data.get("parameters", {}))
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ToolCall(name=name, raw=raw, error=f"'arguments' of '{name}' must be a JSON object")
    return ToolCall(name=name, arguments=arguments, raw=raw)


def format_tool_call(name: str, arguments: dict[str, Any]) -> str:
    """The exact text a policy writes for one call (inverse of parsing)."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "</tool_call>"
