"""`scripted:<name>` orchestrators: the paper's comparisons, runnable offline with no model.

Each policy is a *script*: a generator that yields the text of one orchestrator turn (tool calls or an
answer, in the same Hermes format an LLM writes) and receives the tool responses back. So scripted
runs exercise the real engine, parser, tools, store and reward exactly as a model would.

What a script knows is what any orchestrator knows: the question (a `TaskView`), the tool catalog and
the observations. Never the task's answer, its key facts or how it was made (hop queries, needs):
deciding what to search for next is delegated to a model, as a prompted orchestrator would. Model
strength is ranked by price (a documented proxy: within a provider table the stronger model costs
more). The oracle (`lab.policies.oracle`) is the one exception, labelled a privileged upper bound.

Both toolkit shapes are supported:
- free-form (`configs/toolkits/default.yaml`): the script writes every prompt. It asks a model for a
  search query until the model says `none` (at most `MAX_HOPS`), searches, asks a coder for a program
  and runs it, then asks the answering model(s) with the facts found in the prompt.
- paper (`configs/toolkits/paper.yaml`): the script only picks tools and slots: `search` until the
  slot's model has nothing left to look up, `enhance_reasoning` once, then `answer`, which ends the
  episode (so a cascade cannot escalate after it: on this shape `cheapest-first` answers with the
  cheapest slot).
Action tasks (a domain's tools in the catalog, e.g. the bookshop): ask a model for a plan, carry out
its lookups, ask again with what they returned, and carry out the writes once the plan has them.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

import yaml

from lab.errors import LabInputError
from lab.rollout.parse import format_tool_call
from lab.rollout.policy import PolicyOutput, TaskView, TokenTrajectory
from lab.toolkit import KINDS as TOOLKIT_KINDS
from lab.tools.paper import NOTHING_TO_SEARCH
from lab.toolspec import ToolSpec, is_read_action

Script = Generator[str, list[str], None]
ANSWER_RE = re.compile(r"ANSWER:\s*(.+)")
QUERY_RE = re.compile(r"QUERY:\s*(.+)")
CODE_RE = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)
CONFIDENCE_LOW = "CONFIDENCE: low"
#: Searches per question at most (the world's questions have 2-4 hops).
MAX_HOPS = 4
#: Plan requests per action task at most (lookups come back between them).
MAX_PLAN_ROUNDS = 4


class ScriptedPolicy:
    """A policy whose turns come from a script function `(view, kit, rng) -> Script`."""

    def __init__(self, name: str, script: Callable[..., Script]) -> None:
        self.name = f"scripted:{name}"
        self.script = script

    def session(self, task: TaskView, specs: list[ToolSpec], seed: int) -> _ScriptSession:
        rng = random.Random(f"{self.name}:{task.task_id}:{seed}")
        return _ScriptSession(self.script(TaskView(task.task_id, task.question), Kit(specs), rng))


class _ScriptSession:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.started = False

    async def generate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       observations: list[str] | None = None) -> PolicyOutput:
        observations = observations or []
        try:
            text = next(self.script) if not self.started else self.script.send(observations)
        except StopIteration:
            text = "<answer>no answer</answer>"
        self.started = True
        return PolicyOutput(text=text)

    def token_trajectory(self) -> TokenTrajectory | None:
        return None


# ---- the catalog as a script reads it ----------------------------------------------------------


@dataclass
class Kit:
    """The tool catalog, read the way a prompted orchestrator reads it: models by price, slots, domain tools."""

    specs: list[ToolSpec]

    def has(self, name: str) -> bool:
        return any(s.name == name for s in self.specs)

    @cached_property
    def paper(self) -> bool:
        """The paper's shape: slot tools (`search`, `enhance_reasoning`, `answer`) instead of model tools."""
        return any(s.slots for s in self.specs)

    @cached_property
    def domain(self) -> list[ToolSpec]:
        """The task's own tools (a shop's API): everything that is no toolkit tool."""
        return [s for s in self.specs if not s.model and not s.slots and s.backend.get("kind") not in TOOLKIT_KINDS]

    @cached_property
    def _model_specs(self) -> list[ToolSpec]:
        if self.paper:
            specs = [slot for s in self.specs for slot in s.slots.values()]
        else:
            specs = [s for s in self.specs if s.model]
        return sorted(specs, key=lambda s: (_price(s), s.model or ""))

    def models(self, category: str | None = None) -> list[str]:
        """Model ids in the catalog, cheapest first (optionally one category)."""
        chosen = [s.model for s in self._model_specs if s.model and (category is None or s.category == category)]
        return list(dict.fromkeys(chosen))

    def generalists(self) -> list[str]:
        return self.models("generalist") or self.models()

    def coder(self) -> str:
        """The model asked for programs: the cheapest coder (the cheapest generalist when none)."""
        return ([m for m in self.models() if "coder" in m] or self.generalists())[0]

    def _free_tool(self, model: str) -> ToolSpec | None:
        return next((s for s in self._model_specs if s.model == model and not self.paper), None)

    def tool_for(self, model: str) -> str:
        """Free-form shape: the name of the tool that asks `model` (the cheapest generalist if none does)."""
        spec = self._free_tool(model) or self._free_tool(self.generalists()[0])
        assert spec is not None
        return spec.name

    def slot(self, tool: str, model: str) -> str:
        """Paper shape: the slot of `tool` that stands for `model`, else that tool's cheapest slot."""
        spec = next(s for s in self.specs if s.name == tool)
        ranked = sorted(spec.slots.items(), key=lambda kv: (_price(kv[1]), kv[0]))
        return next((name for name, s in ranked if s.model == model), ranked[0][0])


def _price(spec: ToolSpec) -> float:
    """The strength proxy: input + output price per 1M tokens."""
    return spec.input_per_mtok + spec.output_per_mtok


# ---- building blocks ------------------------------------------------------------------------------


def call(name: str, **arguments: Any) -> str:
    return format_tool_call(name, arguments)


def answer(text: str) -> str:
    return f"<answer>{text}</answer>"


def extract_answer(observation: str) -> str | None:
    found = ANSWER_RE.findall(observation)
    return found[-1].strip() if found else None


def extract_query(observation: str) -> str | None:
    """The query a model wrote, or None when it wrote `none` or no query line."""
    found = QUERY_RE.findall(observation)
    query = found[-1].strip().strip('"') if found else ""
    return None if not query or query.lower() == "none" else query


def confident(observation: str) -> bool:
    return (extract_answer(observation) is not None and CONFIDENCE_LOW not in observation
            and "Error:" not in observation[:40])


def _facts(evidence: list[str]) -> str:
    return "\n\n".join(evidence)


def ask_prompt(question: str, evidence: list[str]) -> str:
    body = f"{question}\n\nRelevant facts:\n{_facts(evidence)}" if evidence else question
    return f"{body}\n\nEnd your reply with a line 'ANSWER: <answer>'."


def query_prompt(question: str, evidence: list[str]) -> str:
    found = f"\n\nFound so far:\n{_facts(evidence)}" if evidence else ""
    return (f"Question: {question}{found}\n\nWrite a short search query for the next fact needed to answer the "
            "question. Reply with one line 'QUERY: <query>', or 'QUERY: none' if nothing more is needed.")


def program_prompt(question: str, evidence: list[str]) -> str:
    found = f"\n\nFacts:\n{_facts(evidence)}" if evidence else ""
    return (f"Write a Python program that prints the answer to this question, if it takes a computation."
            f"\n\n{question}{found}")


def plan_prompt(question: str, found: list[str]) -> str:
    seen = f"\n\nWhat the tools returned so far:\n{_facts(found)}" if found else ""
    return f"{question}{seen}\n\nReply with the JSON list of actions to take."


def _json_list(text: str) -> list[Any]:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return []
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return []
    return value if isinstance(value, list) else []


def _is_read(step: dict[str, Any]) -> bool:
    return is_read_action(step.get("name", ""))


# ---- the flows ------------------------------------------------------------------------------------


def solve(view: TaskView, kit: Kit, models: list[str], escalate: bool, writer: str | None = None,
          search: bool = True, compute: bool = True, hops: int = MAX_HOPS) -> Script:
    """Gather evidence (queries written by `writer`, default the first model; `search` and `compute` say
    whether to search and to compute at all), then answer with `models` in order (all of them only if
    `escalate` and unsure)."""
    if not models:
        raise LabInputError("scripted orchestrator: the toolkit has no model to ask")
    if kit.domain:
        yield from act(view, kit, models, escalate)
    elif kit.paper:
        yield from paper_answer(view, kit, models, writer or models[0], search, compute, hops)
    else:
        yield from free_answer(view, kit, models, escalate, writer or models[0], search, compute, hops)


def free_answer(view: TaskView, kit: Kit, models: list[str], escalate: bool, writer: str, search: bool = True,
                compute: bool = True, hops: int = MAX_HOPS) -> Script:
    evidence = yield from free_evidence(view, kit, writer, search, compute, hops)
    final = None
    for model in models:
        (reply,) = yield call(kit.tool_for(model), prompt=ask_prompt(view.question, evidence))
        final = extract_answer(reply) or final
        if not escalate or confident(reply):
            break
    yield answer(final or "unknown")


def free_evidence(view: TaskView, kit: Kit, writer: str, search: bool = True,
                  compute: bool = True, hops: int = MAX_HOPS) -> Generator[str, list[str], list[str]]:
    """Search hop by hop (at most `hops`) with queries `writer` writes, then run the program a coder writes."""
    evidence: list[str] = []
    if search and kit.has("local_search"):
        for _ in range(hops):
            (reply,) = yield call(kit.tool_for(writer), prompt=query_prompt(view.question, evidence))
            query = extract_query(reply)
            if query is None:
                break
            (found,) = yield call("local_search", query=query)
            evidence.append(found)
    if compute and kit.has("code_interpreter"):
        (reply,) = yield call(kit.tool_for(kit.coder()), prompt=program_prompt(view.question, evidence))
        program = CODE_RE.search(reply)
        if program:
            (output,) = yield call("code_interpreter", code=program.group(1))
            evidence.append(output)
    return evidence


def paper_answer(view: TaskView, kit: Kit, models: list[str], writer: str, search: bool = True,
                 compute: bool = True, hops: int = MAX_HOPS) -> Script:
    """Paper shape: search while the slot's model finds something to look up (at most `hops` times),
    reason once, answer."""
    model = models[0]
    if search and kit.has("search"):
        for _ in range(hops):
            (found,) = yield call("search", model=kit.slot("search", writer))
            if NOTHING_TO_SEARCH in found:
                break
    if compute and kit.has("enhance_reasoning"):
        yield call("enhance_reasoning", model=kit.slot("enhance_reasoning", model))
    if kit.has("answer"):
        yield call("answer", model=kit.slot("answer", model))  # ends the episode
    else:
        yield answer("unknown")


def act(view: TaskView, kit: Kit, models: list[str], escalate: bool) -> Script:
    """Ask for a plan, carry out its lookups, ask again with what they returned; carry out the writes
    once a plan has them (escalating to the next model while a plan with writes is stated unsure)."""
    done: set[str] = set()
    found: list[str] = []
    for _ in range(MAX_PLAN_ROUNDS):
        plan: list[Any] = []
        # on the paper shape several models may map to one slot: ask each distinct call once
        for request in dict.fromkeys(_plan_call(view, kit, model, found) for model in models):
            (reply,) = yield request
            plan = _json_list(extract_answer(reply) or reply)
            has_writes = any(isinstance(s, dict) and not _is_read(s) for s in plan)
            if not escalate or not has_writes or confident(reply):
                break
        steps = [s for s in plan if isinstance(s, dict) and isinstance(s.get("name"), str) and kit.has(s["name"])]
        reads = [s for s in steps if _is_read(s) and _key(s) not in done]
        writes = [s for s in steps if not _is_read(s)]
        for step in reads + writes:
            (observation,) = yield format_tool_call(step["name"], step.get("arguments") or {})
            done.add(_key(step))
            found.append(observation)
        if writes or not reads:
            break
    yield answer("done")


def _plan_call(view: TaskView, kit: Kit, model: str, found: list[str]) -> str:
    if kit.paper:  # the environment passes the problem and the context; the slot's model plans
        return call("enhance_reasoning", model=kit.slot("enhance_reasoning", model))
    return call(kit.tool_for(model), prompt=plan_prompt(view.question, found))


def _key(step: dict[str, Any]) -> str:
    return json.dumps([step.get("name"), step.get("arguments")], sort_keys=True, default=str)


# ---- the baselines --------------------------------------------------------------------------------


def always_strongest(view: TaskView, kit: Kit, rng: random.Random) -> Script:
    """Every question goes to the most expensive generalist (who also writes the queries)."""
    return solve(view, kit, kit.generalists()[-1:], escalate=False)


def cheapest_first(view: TaskView, kit: Kit, rng: random.Random) -> Script:
    """A cascade: cheapest generalist first, escalating to the next price tier while the reply is unsure."""
    return solve(view, kit, kit.generalists(), escalate=True)


def random_choice(view: TaskView, kit: Kit, rng: random.Random) -> Script:
    """A uniformly random model, after the usual evidence steps."""
    return solve(view, kit, [rng.choice(kit.models())], escalate=False)


def explore(view: TaskView, kit: Kit, rng: random.Random) -> Script:
    """A random route: a random model answers, another random one writes the queries, searching and
    computing are each done or skipped on a coin flip, and the searches stop after a random number of
    hops (1 to `MAX_HOPS`) if the writer has not stopped them before.

    Why: warm-start data (`trainer.sft`) from the other scripts always searches, computes, then answers,
    so a model trained on it can predict each call without reading it, and when sampling makes an unusual
    choice (answer early) it writes the slot of the usual one (`answer` with `reasoner-1`): a malformed
    call. Routes whose next step is not predictable teach it to read the call it is writing, and give
    GRPO cheaper routes (no search, no computing) to compare. The hop cap gives the warm start's
    best-of-group selection routes that stop searching as soon as the answer is solvable, which the
    writer's own stop (one search past the last hop) never does."""
    return solve(view, kit, [rng.choice(kit.models())], escalate=False, writer=rng.choice(kit.models()),
                 search=rng.random() < 0.5, compute=rng.random() < 0.5, hops=rng.randint(1, MAX_HOPS))


def round_robin(view: TaskView, kit: Kit, rng: random.Random) -> Script:
    """Models in turn, by a stable hash of the task id (each model gets an equal share of tasks)."""
    models = kit.models()
    return solve(view, kit, [models[sum(view.task_id.encode()) % len(models)]], escalate=False)


def biased(name: str) -> Callable[..., Script]:
    """An emulation of a prompted orchestrator whose delegation shares follow the paper (Fig. 3)."""
    shares = delegation_biases()[name]["shares"]

    def script(view: TaskView, kit: Kit, rng: random.Random) -> Script:
        models = [m for m in kit.models() if m in shares]
        if not models:
            raise LabInputError(f"scripted:{name}: the toolkit has none of the models it "
                                f"delegates to ({', '.join(shares)})")
        chosen = rng.choices(models, weights=[shares[m] for m in models])[0]
        return solve(view, kit, [chosen], escalate=False)

    return script


@lru_cache(maxsize=1)
def delegation_biases() -> dict[str, Any]:
    return yaml.safe_load(resources.files("lab").joinpath("data/delegation_biases.yaml").read_text())


SCRIPTS: dict[str, Callable[..., Script]] = {
    "always-strongest": always_strongest,
    "cheapest-first": cheapest_first,
    "random": random_choice,
    "explore": explore,
    "round-robin": round_robin,
    "gpt-5-prompted": biased("gpt-5-prompted"),
    "qwen3-8b-prompted": biased("qwen3-8b-prompted"),
}
