"""The paper's own toolkit shape: `search`, `enhance_reasoning` and `answer`, each taking a model *slot*.

In the released ToolOrchestra evaluation code the orchestrator does not write prompts for other
models. It picks a tool and a slot (`{"model": "answer-1"}`), and the environment hands the chosen
model the problem plus the context gathered so far:

- `search`: the slot's model writes a short query; retrieval runs; the documents join the context.
- `enhance_reasoning`: the slot's model writes a program; the code interpreter runs it; code and
  output join the context (for action tasks, where there is nothing to compute, its reply is a plan).
- `answer`: the slot's model answers from the problem and the context; the episode ends with that
  answer (`meta["final_answer"]`, which the engine honours).

"The context gathered so far" is every observation of the rollout (`ToolContext.transcript`), cut to
`context_chars` from the end; under the round protocol it is the context the environment built for the
round (`ToolContext.environment_context`), which the calls feed through `meta["documents"]` (search)
and `meta["program"]` / `meta["program_output"]` (enhance_reasoning). Each call is priced as the sum of
what it ran (the slot model's tokens at its real price, plus retrieval and code), and counted as its slot
(`meta["counted_as"]`), because the reward's tool features are the models: a preference for Qwen3-32B means its slots.

Slots map to simulated models offline and to any configured endpoint otherwise (`configs/toolkits/paper.yaml`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from lab.tools.base import Observation, Tool, ToolContext, validate_arguments
from lab.toolspec import ToolSpec

Role = Literal["search", "enhance_reasoning", "answer"]
ROLES: tuple[Role, ...] = ("search", "enhance_reasoning", "answer")

#: What the search tool says when its model finds nothing left to look up (scripts stop searching on it).
NOTHING_TO_SEARCH = "The query writer found nothing more to look up."
_QUERY_RE = re.compile(r"QUERY:\s*(.+)", re.IGNORECASE)
_ANSWER_RE = re.compile(r"ANSWER:\s*(.+)", re.DOTALL)
_CODE_RE = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)

_PROMPTS: dict[Role, str] = {
    "search": ("Problem:\n{problem}\n\nContext gathered so far:\n{context}\n\n"
               "Write a short search query for the next fact needed to solve the problem. Reply with one line "
               "'QUERY: <query>', or 'QUERY: none' when the context already holds what is needed."),
    "enhance_reasoning": ("Problem:\n{problem}\n\nContext gathered so far:\n{context}\n\n"
                          "Write a Python program that computes what the problem asks, using the context; reply "
                          "with one ```python block that prints the result. If nothing needs computing, say so "
                          "and state your conclusion instead."),
    "answer": ("Problem:\n{problem}\n\nContext gathered so far:\n{context}\n\n"
               "Answer the problem. End your reply with a line 'ANSWER: <answer>'."),
}

DESCRIPTIONS: dict[Role, str] = {
    "search": "Search for missing information: the chosen model writes a query from the problem and the "
              "context so far, and the retrieved documents join the context.",
    "enhance_reasoning": "Write and run code: the chosen model writes a Python program from the problem and the "
                         "context so far; the code interpreter runs it and code and output join the context.",
    "answer": "Answer the problem: the chosen model answers from the problem and the context so far, and "
              "its answer is final (the episode ends).",
}


def paper_parameters(slots: list[str]) -> dict[str, Any]:
    """The one-argument schema of every paper tool: `{"model": <slot>}`."""
    return {
        "type": "object",
        "properties": {"model": {"type": "string", "enum": slots, "description": "Which model slot to use."}},
        "required": ["model"],
        "additionalProperties": False,
    }


class PaperTool:
    """One of the three tools; `models` maps each slot to its model tool (simulated or real)."""

    def __init__(self, spec: ToolSpec, role: Role, models: dict[str, Tool], retriever: Tool | None = None,
                 interpreter: Tool | None = None, context_chars: int = 12000) -> None:
        self.spec = spec
        self.role = role
        self.models = models
        self.retriever = retriever
        self.interpreter = interpreter
        self.context_chars = context_chars

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        problem = validate_arguments(self.spec, arguments)
        if problem:
            return Observation.failure(problem)
        context = context or ToolContext()
        slot = arguments["model"]
        model = self.models[slot]
        question = getattr(context.task, "question", "") or ""
        prompt = _PROMPTS[self.role].format(problem=question, context=self._context(context))
        reply = await model.execute({"prompt": prompt}, context)
        base = {"counted_as": slot, "slot": slot, "finding": ""}
        if reply.error:
            return _combined(reply, [], f"Error: {slot} failed: {reply.error}", base, error=reply.error)
        if self.role == "search":
            return await self._search(slot, reply, context, base)
        if self.role == "enhance_reasoning":
            return await self._reason(slot, reply, context, base)
        found = _ANSWER_RE.findall(reply.text)
        final = found[-1].strip() if found else reply.text.strip()
        return _combined(reply, [], f"{slot}: {reply.text}", {**base, "final_answer": final})

    def _context(self, context: ToolContext) -> str:
        if context.environment_context is not None:  # the round protocol: the context the orchestrator saw
            return context.environment_context or "(nothing yet)"
        text = "\n\n".join(context.transcript) or "(nothing yet)"
        return text if len(text) <= self.context_chars else "[... earlier context cut]\n" + text[-self.context_chars:]

    async def _search(self, slot: str, reply: Observation, context: ToolContext, base: dict[str, Any]) -> Observation:
        found = _QUERY_RE.findall(reply.text)
        query = found[-1].strip().strip('"') if found else ""
        if not query or query.lower() == "none" or self.retriever is None:
            return _combined(reply, [], f"{slot}: {NOTHING_TO_SEARCH}", base)
        docs = await self.retriever.execute({"query": query}, context)
        text = f'{slot} searched for "{query}":\n{docs.text}'
        documents = [] if docs.error else docs.meta.get("documents") or [docs.text]
        return _combined(reply, [docs], text, {**base, "finding": "" if docs.error else docs.text, "query": query,
                                               "documents": documents}, error=docs.error)

    async def _reason(self, slot: str, reply: Observation, context: ToolContext, base: dict[str, Any]) -> Observation:
        program = _CODE_RE.search(reply.text)
        if program is None or self.interpreter is None:
            return _combined(reply, [], f"{slot}: {reply.text}", base)
        code = program.group(1)
        ran = await self.interpreter.execute({"code": code}, context)
        text = f"{slot} wrote:\n```python\n{code.rstrip()}\n```\nOutput:\n{ran.text}"
        return _combined(reply, [ran], text, {**base, "finding": "" if ran.error else ran.text, "program": code,
                                              "program_output": "" if ran.error else ran.text})


def _combined(reply: Observation, others: list[Observation], text: str, meta: dict[str, Any],
              error: str | None = None) -> Observation:
    """One observation for the whole call: the model's tokens and model id (for repricing), the sum of
    every part's cost, and their latencies added up (the parts run one after another)."""
    parts = [reply, *others]
    return Observation(
        text=text, error=error, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
        cost_usd=sum(p.cost_usd for p in parts), latency_s=sum(p.latency_s for p in parts),
        model=reply.model, simulated=reply.simulated, meta=meta,
    )
