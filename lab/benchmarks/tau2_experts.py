"""`call_expert`, the released tau2 agent's one extra tool: hand the turn to an expert model.

In the released evaluation (evaluation/tau2-bench, `--use_model_tool`) the orchestrator may call
`call_expert` with one argument, `expert`, naming a slot: expert-1 is GPT-5, expert-2 GPT-5-mini,
expert-3 Qwen3-32B. The catalog does not name the models; it says what each is good at and gives a
table of prices and latencies. The slot's model is given the conversation so far with the domain's own
prompt and tools (the human transfer included, call_expert not), and its reply becomes the agent's turn.

Here each slot is the toolkit's LLM tool for that model (`expert_tools`: the default toolkit's
`sim:gpt-5`, `sim:gpt-5-mini` and `sim:qwen3-32b` offline, or `openai` entries for the real models), so
an expert call is priced like any model call and counted under that tool. Unlike the released code,
which sends the expert a native chat with `tools=`, the expert reads one prompt (the lab's LLM tools
take a prompt): the domain prompt, the tool catalog, the conversation as `role: text` lines, and how
to reply; its reply is read like the orchestrator's (`lab.rollout.tau2_released.read_turn`).
"""

from __future__ import annotations

import json
from typing import Any

from lab.errors import LabInputError
from lab.rollout.tau2_released import CALL_EXPERT, agent_prompt
from lab.task import Task
from lab.tools.base import CONVERSATION, Observation, Tool, ToolContext
from lab.toolspec import ToolSpec

#: The released slots and the models behind them (canonical ids of the lab's price table).
EXPERT_MODELS = {"expert-1": "gpt-5", "expert-2": "gpt-5-mini", "expert-3": "qwen3-32b"}
#: What the catalog says of each slot: the released description's points, in the lab's words.
EXPERT_NOTES = {
    "expert-1": "calls functions very well and is strong in most domains, but may lack knowledge of a narrow domain",
    "expert-2": "gives reasonable solutions to most tasks, but can get stuck on complex reasoning or specialist "
                "knowledge",
    "expert-3": "is moderate: it follows complex prompts, does some maths and calls functions, but sometimes misreads "
                "details or mixes up concepts",
}
DESCRIPTION = ("Hand this turn to an expert model: it reads the conversation and the policy and writes the agent's "
               "next turn (a message to the user or tool calls) in your place.")
EXPERT_TASK = ("Write the agent's next turn: either one message to the user inside <message>...</message>, or tool "
               'calls, each as <tool_call>{"name": <tool name>, "arguments": <JSON object>}</tool_call>.')


def expert_tools(tools: dict[str, Tool], toolkit: str) -> dict[str, Tool]:
    """Each slot's model: the toolkit's first LLM tool whose model is the slot's."""
    by_model: dict[str, Tool] = {}
    for tool in tools.values():
        if tool.spec.model:
            by_model.setdefault(tool.spec.model, tool)
    missing = [f"{slot} ({model})" for slot, model in EXPERT_MODELS.items() if model not in by_model]
    if missing:
        raise LabInputError(f"--tau2-agent released: toolkit '{toolkit}' has no LLM tool for {', '.join(missing)}, "
                            "call_expert's slots (the default toolkit has all three)")
    return {slot: by_model[model] for slot, model in EXPERT_MODELS.items()}


def expert_spec(experts: dict[str, Tool]) -> ToolSpec:
    """call_expert as the orchestrator sees it: one string argument, and a price table from the slots' tools."""
    rows = [f"{slot} | ${tool.spec.input_per_mtok:g} | ${tool.spec.output_per_mtok:g} | "
            f"{tool.spec.latency.expected(300):.0f}s"
            for slot, tool in experts.items()]
    notes = " ".join(f"{slot} {EXPERT_NOTES.get(slot, 'is another expert')}." for slot in experts)
    about = (f"Which expert takes the turn: {', '.join(experts)}. {notes} What each costs and how long it takes:\n"
             "expert | input $ per 1M tokens | output $ per 1M tokens | typical latency\n" + "\n".join(rows))
    parameters = {"type": "object", "properties": {"expert": {"type": "string", "description": about}},
                  "required": ["expert"]}
    return ToolSpec(name=CALL_EXPERT, description=DESCRIPTION, parameters=parameters, category="basic")


def expert_prompt(policy: str, specs: list[ToolSpec], conversation: list[dict[str, Any]]) -> str:
    """What an expert reads: the domain's prompt, its tools, the conversation without the system message."""
    catalog = "\n".join(json.dumps(spec.openai_schema(), ensure_ascii=False) for spec in specs)
    lines = []
    for message in conversation:
        if message["role"] == "system":
            continue
        calls = "".join(f'\n<tool_call>{json.dumps(c.get("function", c), ensure_ascii=False)}</tool_call>'
                        for c in message.get("tool_calls") or [])
        speaker = f"tool {message.get('name', '')}".strip() if message["role"] == "tool" else message["role"]
        lines.append(f"{speaker}: {message['content']}{calls}")
    return (f"{agent_prompt(policy, orchestrator=False)}\n\nTools (JSON schema):\n<tools>\n{catalog}\n</tools>\n\n"
            "Conversation so far:\n" + "\n".join(lines) + f"\n\n{EXPERT_TASK}")


class CallExpert:
    """call_expert for one rollout: the slots' models, and the domain (policy, tools) they reply for."""

    def __init__(self, experts: dict[str, Tool], domain: dict[str, Tool], policy: str) -> None:
        self.experts = experts
        self.specs = [tool.spec for tool in domain.values()]
        self.policy = policy
        self.spec = expert_spec(experts)

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        """The expert's reply (the turn it writes), with its model's tokens and cost, counted under its tool."""
        slot = arguments.get("expert")
        expert = self.experts.get(slot) if isinstance(slot, str) else None
        if expert is None:
            return Observation.failure(f"unknown expert {slot!r} (choose from {', '.join(self.experts)})")
        context = context or ToolContext()
        prompt = expert_prompt(self.policy, self.specs, context.state.get(CONVERSATION, []))
        reply = await expert.execute({"prompt": prompt}, context)
        return reply.model_copy(update={"meta": {**reply.meta, "counted_as": expert.spec.name, "expert": slot,
                                                 "finding": ""}})


def released_tools(task: Task, domain: dict[str, Tool], experts: dict[str, Tool]) -> dict[str, Tool]:
    """The tools of one released-agent rollout: the domain's, and call_expert over `experts`."""
    policy = (getattr(task, "meta", None) or {}).get("policy") or ""
    return {**domain, CALL_EXPERT: CallExpert(experts, domain, policy)}
