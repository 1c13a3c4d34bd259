"""The orchestrator's system prompt: tool catalog with prices and latencies, and the preference instruction.

Why prices and latencies go in the catalog: the paper's orchestrator trades accuracy against cost and
latency, which it can only do if each tool's description says what a call costs and how long it takes.

One text for every orchestrator kind: `hf:` renders these messages through the model's chat template
and `openai:` sends them as they are, neither passing a `tools=` list, so the catalog appears exactly
once and a checkpoint reads the same prompt in-process and behind a server. The preference instruction
(paper §3.2; chosen per task by `lab.preference.task_preferences`) closes the prompt.
"""

from __future__ import annotations

import json
from typing import Any

from lab.toolspec import ToolSpec

SYSTEM_TEMPLATE = """You are an orchestrator. Solve the user's task by calling tools and other models, \
then give the final answer.

Each turn: think inside <think>...</think>, then either call one or more tools, each as
<tool_call>{{"name": <tool name>, "arguments": <JSON object>}}</tool_call>
or give the final answer as <answer>...</answer>.
Tool results come back as <tool_response>...</tool_response>. {delegation}

Tools (JSON schema; price and typical latency in each description):
<tools>
{catalog}
</tools>
{preference}"""


#: How delegation works, by toolkit shape: free-form model tools see only the prompt the orchestrator
#: writes; the paper toolkit's slot tools hand their model the problem and the context gathered so far.
FREE_FORM_DELEGATION = "A model you call sees only the prompt you write for it, so include the facts it needs."
SLOT_DELEGATION = ("A tool called with a model slot hands that model the problem and everything gathered so far; "
                   "`answer` ends the task with that model's answer.")


def tool_description(spec: ToolSpec) -> str:
    """The description the orchestrator sees, with price and latency appended (per slot for slot tools)."""
    parts = [spec.description.strip()]
    if spec.slots:
        parts.append("Slots: " + "; ".join(f"{name} = {slot.model}, {_price(slot)}"
                                           for name, slot in spec.slots.items()) + ".")
    if spec.input_per_mtok or spec.output_per_mtok:
        parts.append(f"Price: ${spec.input_per_mtok:g} per 1M input tokens, "
                     f"${spec.output_per_mtok:g} per 1M output tokens.")
    if spec.per_call:
        parts.append(f"Price: ${spec.per_call:g} per call.")
    if spec.latency.base_s or spec.latency.per_output_token_s:
        parts.append(f"Typical latency: {spec.latency.expected(300):.1f} s.")
    return " ".join(parts)


def _price(spec: ToolSpec) -> str:
    return (f"${spec.input_per_mtok:g}/${spec.output_per_mtok:g} per 1M input/output tokens, "
            f"typically {spec.latency.expected(300):.0f} s")


def catalog_entries(specs: list[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI function-calling entries with priced descriptions; the catalog of `system_prompt`, one per line."""
    return [
        {"type": "function", "function": {"name": s.name, "description": tool_description(s),
                                          "parameters": s.parameters}}
        for s in specs
    ]


def system_prompt(specs: list[ToolSpec], preference_instruction: str | None = None) -> str:
    """The system message of every rollout: instructions, the priced catalog, then the preference (if any)."""
    catalog = "\n".join(json.dumps(entry, ensure_ascii=False) for entry in catalog_entries(specs))
    preference = f"\nUser preference: {preference_instruction.strip()}\n" if preference_instruction else ""
    delegation = SLOT_DELEGATION if any(s.slots for s in specs) else FREE_FORM_DELEGATION
    return SYSTEM_TEMPLATE.format(catalog=catalog, preference=preference, delegation=delegation)


def tool_response_text(name: str, text: str, limit: int) -> str:
    """One observation as the orchestrator reads it, cut to `limit` characters."""
    if len(text) > limit:
        text = text[:limit] + f"\n[... {len(text) - limit} more characters cut]"
    return f"<tool_response name=\"{name}\">\n{text}\n</tool_response>"
