"""`scripted:<name>` orchestrators: the paper's comparisons, runnable offline with no model.

Each policy is a *script*: a generator that yields the text of one orchestrator turn (tool calls or an
answer, in the same Hermes format an LLM writes) and receives the tool responses back. So scripted
runs exercise the real engine, parser, tools, store and reward exactly as a model would.

What a script may know: the task's family and what it needs (retrieval, code, actions), as a prompted
orchestrator reading the question would; never its answer, except `oracle`, which is an upper bound and
says so. Model strength is ranked by price (a documented proxy: within a provider table the stronger
model costs more).

Evidence flow, shared by all scripts: retrieval tasks search the local index with the question;
computational tasks ask the cheapest coder model for a program and run it in the code interpreter;
action tasks ask a model for an action plan and carry it out with the domain tools. The facts found go
into the prompt of the answering model, which sees nothing else (that is how delegation works).
"""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Generator

import yaml

from lab.errors import LabInputError
from lab.rollout.parse import format_tool_call
from lab.rollout.policy import PolicyOutput, TokenTrajectory
from lab.toolspec import ToolSpec

Script = Generator[str, list[str], None]
ANSWER_RE = re.compile(r"ANSWER:\s*(.+)")
CODE_RE = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)
CONFIDENCE_LOW = "CONFIDENCE: low"


class ScriptedPolicy:
    """A policy whose turns come from a script function `(task, specs, rng) -> Script`."""

    def __init__(self, name: str, script: Callable[..., Script]) -> None:
        self.name = f"scripted:{name}"
        self.script = script

    def session(self, task: Any, specs: list[ToolSpec], seed: int) -> "_ScriptSession":
        return _ScriptSession(self.script(task, specs, random.Random(f"{self.name}:{task.task_id}:{seed}")))


class _ScriptSession:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.started = False

    async def generate(self, messages: list[dict[str, Any]]) -> PolicyOutput:
        observations = _observations_since_last_turn(messages)
        try:
            text = next(self.script) if not self.started else self.script.send(observations)
        except StopIteration:
            text = "<answer>no answer</answer>"
        self.started = True
        return PolicyOutput(text=text)

    def token_trajectory(self) -> TokenTrajectory | None:
        return None


def _observations_since_last_turn(messages: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for message in reversed(messages):
        if message["role"] == "assistant":
            break
        if message["role"] == "tool":
            out.append(message["content"])
    return list(reversed(out))


# ---- building blocks ------------------------------------------------------------------------------


def llm_tools(specs: list[ToolSpec]) -> list[ToolSpec]:
    """Model tools, cheapest first (price = output + input per 1M tokens)."""
    return sorted((s for s in specs if s.model), key=lambda s: (s.output_per_mtok + s.input_per_mtok, s.name))


def generalists(specs: list[ToolSpec]) -> list[ToolSpec]:
    return [s for s in llm_tools(specs) if s.category == "generalist"] or llm_tools(specs)


def coders(specs: list[ToolSpec]) -> list[ToolSpec]:
    return [s for s in llm_tools(specs) if "coder" in (s.model or "")] or generalists(specs)


def has_tool(specs: list[ToolSpec], name: str) -> bool:
    return any(s.name == name for s in specs)


def call(name: str, **arguments: Any) -> str:
    return format_tool_call(name, arguments)


def answer(text: str) -> str:
    return f"<answer>{text}</answer>"


def extract_answer(observation: str) -> str | None:
    found = ANSWER_RE.findall(observation)
    return found[-1].strip() if found else None


def confident(observation: str) -> bool:
    return extract_answer(observation) is not None and CONFIDENCE_LOW not in observation and "Error:" not in observation[:40]


def needs(task: Any) -> set[str]:
    return set(getattr(task, "needs", []) or [])


def ask_prompt(task: Any, evidence: list[str]) -> str:
    facts = "\n\n".join(evidence)
    body = f"{task.question}\n\nRelevant facts:\n{facts}" if facts else task.question
    return f"{body}\n\nEnd your reply with a line 'ANSWER: <answer>'."


def gather_evidence(task: Any, specs: list[ToolSpec], coder: ToolSpec | None = None) -> Generator[str, list[str], list[str]]:
    """Turns that collect facts the answering model needs; returns those facts."""
    evidence: list[str] = []
    if "retrieval" in needs(task) and has_tool(specs, "local_search"):
        # one search per hop when the question's decomposition is known (as an orchestrator that plans
        # hop by hop would search), else one search with the whole question
        for query in task.meta.get("hop_queries") or [task.question]:
            (found,) = yield call("local_search", query=query)
            evidence.append(found)
    if "code" in needs(task) and has_tool(specs, "code_interpreter"):
        writer = coder or coders(specs)[0]
        (reply,) = yield call(writer.name, prompt=f"Write a Python program that prints the answer.\n\n{task.question}")
        program = CODE_RE.search(reply)
        if program:
            (output,) = yield call("code_interpreter", code=program.group(1))
            evidence.append(output)
    return evidence


def act_on_plan(plan_reply: str, specs: list[ToolSpec]) -> Generator[str, list[str], None]:
    """Carry out a model's JSON action plan (its answer) with the domain tools, one call per turn;
    steps naming a tool the orchestrator does not have are skipped, as an orchestrator would."""
    plan = _json_list(extract_answer(plan_reply) or plan_reply)
    for step in plan:
        if isinstance(step, dict) and isinstance(step.get("name"), str) and has_tool(specs, step["name"]):
            yield format_tool_call(step["name"], step.get("arguments") or {})


def _json_list(text: str) -> list[Any]:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return []
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return []
    return value if isinstance(value, list) else []


def solve_with(task: Any, specs: list[ToolSpec], models: list[ToolSpec], escalate: bool) -> Script:
    """Gather evidence, then ask `models` in order (all of them only if `escalate` and unsure)."""
    if "actions" in needs(task):
        reply = ""
        for model in models:
            (reply,) = yield call(model.name, prompt=f"{task.question}\n\nReply with the JSON list of actions to take.")
            if not escalate or confident(reply):
                break
        yield from act_on_plan(reply, specs)
        yield answer("done")
        return
    evidence = yield from gather_evidence(task, specs)
    final = None
    for model in models:
        (reply,) = yield call(model.name, prompt=ask_prompt(task, evidence))
        final = extract_answer(reply) or final
        if not escalate or confident(reply):
            break
    yield answer(final or "unknown")


# ---- the baselines --------------------------------------------------------------------------------


def always_strongest(task: Any, specs: list[ToolSpec], rng: random.Random) -> Script:
    """Every question goes to the most expensive generalist."""
    return solve_with(task, specs, generalists(specs)[-1:], escalate=False)


def cheapest_first(task: Any, specs: list[ToolSpec], rng: random.Random) -> Script:
    """A cascade: cheapest model first, escalating to the next price tier while the reply is unsure."""
    return solve_with(task, specs, generalists(specs), escalate=True)


def random_choice(task: Any, specs: list[ToolSpec], rng: random.Random) -> Script:
    """A uniformly random model, after the usual evidence steps."""
    return solve_with(task, specs, [rng.choice(llm_tools(specs))], escalate=False)


def round_robin(task: Any, specs: list[ToolSpec], rng: random.Random) -> Script:
    """Models in turn, by a stable hash of the task id (each model gets an equal share of tasks)."""
    models = llm_tools(specs)
    index = sum(task.task_id.encode()) % len(models)
    return solve_with(task, specs, [models[index]], escalate=False)


def biased(name: str) -> Callable[..., Script]:
    """An emulation of a prompted orchestrator whose delegation shares follow the paper (Fig. 3)."""
    shares = delegation_biases()[name]["shares"]

    def script(task: Any, specs: list[ToolSpec], rng: random.Random) -> Script:
        models = [s for s in llm_tools(specs) if s.model in shares]
        if not models:
            raise LabInputError(f"scripted:{name}: the toolkit has none of the models it delegates to ({', '.join(shares)})")
        chosen = rng.choices(models, weights=[shares[s.model] for s in models])[0]
        return solve_with(task, specs, [chosen], escalate=False)

    return script


@lru_cache(maxsize=1)
def delegation_biases() -> dict[str, Any]:
    return yaml.safe_load(resources.files("lab").joinpath("data/delegation_biases.yaml").read_text())


SCRIPTS: dict[str, Callable[..., Script]] = {
    "always-strongest": always_strongest,
    "cheapest-first": cheapest_first,
    "random": random_choice,
    "round-robin": round_robin,
    "gpt-5-prompted": biased("gpt-5-prompted"),
    "qwen3-8b-prompted": biased("qwen3-8b-prompted"),
}
