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
`context_chars` from the end; under the round protocol it is built from what the environment gathered
(`ToolContext.round`), which the calls feed through `meta["documents"]` (search) and `meta["program"]` /
`meta["program_output"]` (enhance_reasoning): per model, with the released prompts, sampling and waiting
under the released expert protocol (`lab.tools.experts`), or the context the orchestrator saw and the
prompts below under the lab's. Each call is priced as the sum of
what it ran (the slot model's tokens at its real price, plus retrieval and code), and counted as its slot
(`meta["counted_as"]`), because the reward's tool features are the models: a preference for Qwen3-32B means its slots.

Slots map to simulated models offline and to any configured endpoint otherwise (`configs/toolkits/paper.yaml`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from lab.tools.base import ModelRequest, ModelTool, Observation, Tool, ToolContext, validate_arguments
from lab.tools.experts import (
    RoundView,
    expert_context,
    expert_request,
    family_of,
    read_answer,
    read_program,
    read_query,
)
from lab.toolspec import ToolSpec

if TYPE_CHECKING:
    from lab.tools.web_search import WebSearch

Role = Literal["search", "enhance_reasoning", "answer"]
ROLES: tuple[Role, ...] = ("search", "enhance_reasoning", "answer")

#: The released HLE server searches the web when its index finds fewer documents than this.
WEB_FALLBACK_BELOW = 3
#: What the search tool says when its model finds nothing left to look up (scripts stop searching on it).
NOTHING_TO_SEARCH = "The query writer found nothing more to look up."
#: What a call says when the run does not run the expert's program (released FRAMES, `ExpertSettings.run_programs`).
PROGRAM_NOT_RUN = ("(program not run: the released FRAMES evaluation reads the coder's reply in a way that fails on a "
                   "chat completion, so its code never runs; --run-programs yes runs it)")
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

    def __init__(self, spec: ToolSpec, role: Role, models: dict[str, ModelTool], retriever: Tool | None = None,
                 interpreter: Tool | None = None, context_chars: int = 12000,
                 context_tokens: dict[str, int] | None = None, web_fallback: WebSearch | None = None) -> None:
        self.spec = spec
        self.role = role
        self.models = models
        self.retriever = retriever
        self.interpreter = interpreter
        self.context_chars = context_chars
        #: per slot, a released-protocol context budget in place of its family's (`backend.context_tokens`)
        self.context_tokens = context_tokens or {}
        #: released HLE retrieval: a web search and page extraction when the index finds fewer than 3 documents
        self.web_fallback = web_fallback

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        problem = validate_arguments(self.spec, arguments)
        if problem:
            return Observation.failure(problem)
        context = context or ToolContext()
        slot = arguments["model"]
        question = getattr(context.task, "question", "") or ""
        if context.round is not None and context.round.experts.protocol == "released":
            return await self._released(slot, question, context, context.round)
        model = self.models[slot]
        prompt = _PROMPTS[self.role].format(problem=question, context=self._context(context))
        reply = await model.ask(ModelRequest(prompt), context)
        base = {"counted_as": slot, "slot": slot, "finding": ""}
        if reply.error:
            return _combined(reply, [], f"Error: {slot} failed: {reply.error}", base, error=reply.error)
        if self.role == "search":
            found = _QUERY_RE.findall(reply.text)
            query = found[-1].strip().strip('"') if found else ""
            return await self._search(slot, reply, None if query.lower() == "none" else query or None, context, base)
        if self.role == "enhance_reasoning":
            program = _CODE_RE.search(reply.text)
            return await self._reason(slot, reply, program.group(1) if program else None, context, base)
        found = _ANSWER_RE.findall(reply.text)
        final = found[-1].strip() if found else reply.text.strip()
        return _combined(reply, [], f"{slot}: {reply.text}", {**base, "final_answer": final})

    async def _released(self, slot: str, question: str, context: ToolContext, view: RoundView) -> Observation:
        """The call as the released evaluation makes it (`lab.tools.experts`): the slot model's own context,
        prompt, sampling and waiting, and its reply read the released way."""
        model = self.models[slot]
        family = family_of(model.spec.model or model.spec.name, view.experts.variant)
        count = getattr(model, "count_tokens", None) or view.count
        expert_context_text = expert_context(view.gathered, family, question, count, self.context_tokens.get(slot))
        request = expert_request(self.role, family, view.experts.variant, question, expert_context_text, view.experts)
        reply = await model.ask(request, context)
        base = {"counted_as": slot, "slot": slot, "finding": "", "expert_family": family.name}
        if self.role == "search":  # a failed query writer searches the problem itself (released)
            query = read_query(None if reply.error else reply.text, question, view.experts.variant, family)
            searched = await self._search(slot, reply, query, context, base, web_fallback=self.web_fallback)
            if reply.error is None:
                return searched
            # the step says why the query is the problem (the run names a slot whose every call failed)
            return searched.model_copy(update={
                "text": f"{slot} failed ({reply.error}); the problem itself was searched\n{searched.text}",
                "meta": {**searched.meta, "expert_error": reply.error}})
        if reply.error:
            return _combined(reply, [], f"Error: {slot} failed: {reply.error}", base, error=reply.error)
        if self.role == "enhance_reasoning":
            if not view.experts.run_programs:  # released FRAMES: the expert is asked (and paid), nothing runs
                return _combined(reply, [], f"{slot}: {reply.text}\n{PROGRAM_NOT_RUN}", base)
            return await self._reason(slot, reply, read_program(reply.text) or None, context, base, stdout_only=True)
        return _combined(reply, [], f"{slot}: {reply.text}", {**base, "final_answer": read_answer(reply.text, family)})

    def _context(self, context: ToolContext) -> str:
        if context.round is not None:  # the round protocol: the context the orchestrator saw
            return context.round.shown or "(nothing yet)"
        text = "\n\n".join(context.transcript) or "(nothing yet)"
        return text if len(text) <= self.context_chars else "[... earlier context cut]\n" + text[-self.context_chars:]

    async def _search(self, slot: str, reply: Observation, query: str | None, context: ToolContext,
                      base: dict[str, Any], web_fallback: WebSearch | None = None) -> Observation:
        if not query or self.retriever is None:
            return _combined(reply, [], f"{slot}: {NOTHING_TO_SEARCH}", base)
        docs = await self.retriever.execute({"query": query}, context)
        text = f'{slot} searched for "{query}":\n{docs.text}'
        # a retriever that lists its documents may list none (the released search then adds nothing); one
        # that does not is its text
        documents = [] if docs.error else docs.meta["documents"] if "documents" in docs.meta else [docs.text]
        parts = [docs]
        if web_fallback is not None and not docs.error and len(documents) < WEB_FALLBACK_BELOW:
            pages = await web_fallback.search_and_extract(query)
            parts.append(pages)
            documents = documents + pages.meta.get("documents", [])
            text += f"\n{pages.text}"
        return _combined(reply, parts, text, {**base, "finding": "" if docs.error else text, "query": query,
                                              "documents": documents}, error=docs.error)

    async def _reason(self, slot: str, reply: Observation, code: str | None, context: ToolContext,
                      base: dict[str, Any], stdout_only: bool = False) -> Observation:
        """Run the slot model's program; its output joins the context (the released protocol: stdout alone)."""
        if code is None or self.interpreter is None:
            return _combined(reply, [], f"{slot}: {reply.text}", base)
        ran = await self.interpreter.execute({"code": code}, context)
        text = f"{slot} wrote:\n```python\n{code.rstrip()}\n```\nOutput:\n{ran.text}"
        output = ran.meta.get("stdout", "") if stdout_only else ("" if ran.error else ran.text)
        return _combined(reply, [ran], text, {**base, "finding": "" if ran.error else ran.text, "program": code,
                                              "program_output": output})


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
