"""The round protocol: how the released ToolOrchestra checkpoint was trained and evaluated.

In the authors' code (evaluation/eval_frames.py, eval_hle.py, training/.../generation_quick3.py) the
orchestrator never reads its own earlier turns. Every round it gets a fresh prompt of two messages,

    system: You are good at using tools.
    user:   Problem: {problem}\\n\\n{context}\\n\\nChoose an appropriate tool.

where the *environment* builds the context from what the tools returned so far: the documents found
(`Doc i: {first 1200 characters} ...` in HLE, `Doc i: {first 4000 characters}` in FRAMES; each
search's documents join least relevant first, so the best survive the cut) and the programs run with
their non-empty outputs, cut from the front with the orchestrator's own tokenizer to a token budget. The
tool catalog travels natively (`tools=` through the chat template, or to the server); the first valid call of a round
runs, a round without one is skipped (it still uses up a round and counts as a format error), and only `answer` ends the
task: the orchestrator never answers in its own text. The slot's model receives the problem and a context built from
the same documents and programs (per model under the released expert protocol, `lab.tools.experts`; the orchestrator's
own under the lab's), never text the orchestrator wrote.

Under the released expert protocol the context is the released one byte for byte (`released_round_context`: the
programs cut to 12,000 tokens first, a long program section crowding out the documents, `Documents:` put
back after the cut, outputs as printed) and a call is checked as the released loop checks it (its tool is
one of the toolkit's, withdrawn or not, and its `model` one of that tool's slots; nothing else is read).
The lab's protocol keeps its own layout (`render_context`), with which the demo's figures were measured.

What differs from the conversation protocol (`lab.rollout.engine`) is only the loop; both return the
same records, so the store, the reward and the reports treat them alike. A preference instruction,
when the run has one, is the paragraph before `Choose an appropriate tool.`: every round's prompt
is fresh, so it must be in each, and there it sits next to the decision it conditions.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from lab.errors import LabInputError
from lab.records import StepRecord
from lab.rollout.config import RolloutConfig
from lab.rollout.parse import ToolCall, parse_turn
from lab.rollout.policy import TokenTrajectory
from lab.rollout.running import RolloutState, cap_reached, execute_call, record_call
from lab.tools.base import Tool, ToolContext, estimate_tokens, validate_arguments
from lab.tools.experts import ExpertSettings, Gathered, RoundView, TokenCounter, cut_front
from lab.toolspec import ToolSpec

ROUND_SYSTEM = "You are good at using tools."
ROUND_USER = "Problem: {problem}\n\n{context}\n\nChoose an appropriate tool."
#: How the released code names the two parts of the context.
DOCUMENTS_HEADER = "Documents:"
PROGRAMS_HEADER = "python code and execution outputs:"
#: What a tool that retrieves documents is called in the released catalog; withdrawn where the benchmark says.
SEARCH = "search"
ANSWER = "answer"

#: Tokens of programs (and their outputs) the orchestrator reads under the released protocol: both released
#: scripts cut `code_str + attempt_str` to 12,000 before anything else.
RELEASED_CODE_TOKENS = 12000

#: Tokens of context a slot's model receives under the lab's expert protocol (the released orchestrator's
#: HLE budget): a small orchestrator may read a shorter cut (`RolloutConfig.context_tokens`), but the model
#: it delegates to reads what it can hold. The released protocol budgets per model (`lab.tools.experts`).
MODEL_CONTEXT_TOKENS = 27000


def render_context(gathered: Gathered, document_chars: int, document_suffix: str = " ...") -> str:
    """The orchestrator's context under the lab's protocol, in the released layout tidied: `Documents:` then
    `Doc i: {first document_chars characters}{document_suffix}` each, then `python code and execution outputs:`
    with each program and its output (trailing whitespace stripped) in fenced blocks; "" when nothing was
    gathered. Cut as a whole afterwards. The released protocol's is `released_round_context`."""
    parts = []
    if gathered.documents:
        parts.append(DOCUMENTS_HEADER + "\n" + "".join(
            f"Doc {i}: {d[:document_chars]}{document_suffix}\n\n" for i, d in enumerate(gathered.documents, start=1)))
    if gathered.programs:
        blocks = "".join(f"```python\n{code.rstrip()}\n```\n\n```output\n{out.rstrip()}\n```\n\n"
                         for code, out in gathered.programs)
        parts.append(f"{PROGRAMS_HEADER}\n{blocks}")
    return "\n".join(parts).strip()


def released_round_context(gathered: Gathered, problem: str, config: RolloutConfig, count: TokenCounter) -> str:
    """The orchestrator's context as the released evaluation builds it (`run_single` of eval_hle.py and
    eval_frames.py), byte for byte. Programs (output as printed, trailing newlines kept) are cut to the last
    12,000 tokens and reopened with a fence; when they held at least the budget before that cut, they are the
    whole context. Otherwise documents, the `python code and execution outputs:` header and the programs are
    cut to the budget together, and `Documents:` goes back in front. HLE: the budget is `context_tokens`
    less the problem's tokens, and the header comes only with programs; FRAMES: `context_tokens` itself,
    and the header always."""
    frames = config.expert_variant == "frames"
    docs = "".join(f"Doc {i}: {d[:config.document_chars]}{config.document_suffix}\n\n"
                   for i, d in enumerate(gathered.documents, start=1))
    code = "".join(f"```python\n{program}\n```\n\n```output\n{output}\n```\n\n"
                   for program, output in gathered.programs)
    code_tokens = count(code) if code else 0  # measured before the cut, as `effective_length` is
    code = cut_front(code, RELEASED_CODE_TOKENS, count)
    if code and not code.startswith("```"):
        code = "```\n" + code
    budget = config.context_tokens if frames else config.context_tokens - count(problem)
    if code_tokens >= budget:
        return code
    context = cut_front(docs + f"\n{PROGRAMS_HEADER}\n" + code if code or frames else docs, budget, count)
    return f"{DOCUMENTS_HEADER}\n{context}" if docs else context


def round_messages(problem: str, context: str, instruction: str | None = None) -> list[dict[str, str]]:
    """The two messages of one round."""
    user = with_instruction(ROUND_USER.format(problem=problem, context=context), instruction)
    return [{"role": "system", "content": ROUND_SYSTEM}, {"role": "user", "content": user}]


def with_instruction(user: str, instruction: str | None) -> str:
    """A round's user prompt with the preference instruction as the paragraph before its last line (the
    released code has none: it is the lab's, so that a fresh prompt still carries the user's preference)."""
    if not instruction or not instruction.strip():
        return user
    head, _, tail = user.rpartition("\n\n")
    return f"{head}\n\n{instruction.strip()}\n\n{tail}"


def expert_settings(config: RolloutConfig) -> ExpertSettings:
    """How a run's experts are asked, from its rollout config."""
    return ExpertSettings(protocol=config.expert_protocol, variant=config.expert_variant,
                          timeout_s=config.expert_timeout_s, retries=config.expert_retries,
                          run_programs=config.run_programs)


def context_budget(config: RolloutConfig, problem: str, count: TokenCounter) -> int:
    """Tokens left for the lab protocol's context: the config's budget minus the problem's, at least 0."""
    return max(0, config.context_tokens - count(problem))


def lab_contexts(gathered: Gathered, config: RolloutConfig, budget: int, count: TokenCounter) -> tuple[str, str]:
    """Under the lab's protocol: (the orchestrator's context, the lab experts' context). The experts read the
    released HLE budget, whatever the orchestrator's own cut; a budget of 0 shows nothing."""
    rendered = render_context(gathered, config.document_chars, config.document_suffix)
    shown = cut_front(rendered, budget, count) if budget > 0 else ""
    return shown, cut_front(rendered, MODEL_CONTEXT_TOKENS, estimate_tokens)


# ---- the catalog ----------------------------------------------------------------------------------


_ROLE_VERB = {"search": "The model used to search for missing information.",
              "enhance_reasoning": "The model used to reason.", ANSWER: "The model used to answer."}


def round_catalog(specs: list[ToolSpec]) -> list[dict[str, Any]]:
    """The catalog in the released format: per tool its description, and one `model` argument whose
    description lists the slots, what each is good at, and a price / latency table."""
    entries = []
    for spec in specs:
        if not spec.slots:
            entries.append(spec.openai_schema())
            continue
        choices = list(spec.slots)
        lines = [f"{_ROLE_VERB.get(spec.name, 'The model to use.')} Choices: {choices}."]
        lines += [f"{name}: {slot.description.strip()}"
                  for name, slot in spec.slots.items() if slot.description.strip()]
        lines.append("Model | price per million input tokens | price per million output tokens | average latency")
        lines += [f"{name} | ${slot.input_per_mtok:g} | ${slot.output_per_mtok:g} | {slot.latency.expected(300):.0f}s"
                  for name, slot in spec.slots.items()]
        entries.append({"type": "function", "function": {
            "name": spec.name, "description": spec.description.strip(),
            "parameters": {"type": "object",
                           "properties": {"model": {"type": "string", "description": "\n".join(lines)}},
                           "required": ["model"]}}})
    return entries


@lru_cache(maxsize=8)
def _read_catalog(path: str) -> tuple[str, ...]:
    try:
        raw = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise LabInputError(f"--catalog {path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise LabInputError(f"--catalog {path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(raw, list) or not all(isinstance(e, dict) and isinstance(e.get("function"), dict) for e in raw):
        raise LabInputError(f"--catalog {path}: expected a JSON list of {{\"type\": \"function\", "
                            "\"function\": {...}} entries")
    return tuple(json.dumps(e) for e in raw)


def load_catalog(path: str, specs: list[ToolSpec]) -> list[dict[str, Any]]:
    """A catalog file in the released format (`tools.json`), checked against the toolkit: every function
    must be a tool of it, and every slot a `model` argument could name must be one of that tool's slots.
    Only the tools in `specs` are offered (a withdrawn tool is not in the round's catalog)."""
    entries = [json.loads(e) for e in _read_catalog(path)]
    by_name = {s.name: s for s in specs}
    offered = []
    for entry in entries:
        name = entry["function"].get("name")
        if name not in by_name:
            continue
        slots = set(by_name[name].slots)
        described = (entry["function"].get("parameters", {}).get("properties", {})
                     .get("model", {}).get("description", ""))
        unknown = sorted(s for s in _choices(described) if s not in slots)
        if unknown:
            raise LabInputError(f"--catalog {path}: tool '{name}' offers slot '{unknown[0]}', which the toolkit does "
                                f"not have (its slots: {', '.join(sorted(slots))})")
        offered.append(entry)
    return offered


def check_catalog(path: str, specs: list[ToolSpec]) -> None:
    """Refuse, before any rollout, a catalog naming a function the toolkit does not have."""
    names = {s.name for s in specs}
    for entry in (json.loads(e) for e in _read_catalog(path)):
        name = entry["function"].get("name")
        if name not in names:
            raise LabInputError(f"--catalog {path}: function '{name}' is not a tool of the toolkit "
                                f"({', '.join(sorted(names))})")
    load_catalog(path, specs)


def _choices(description: str) -> list[str]:
    """The slot names of a released `model` description: `Choices: ['a', 'b']`."""
    start = description.find("Choices:")
    if start < 0:
        return []
    body = description[start:].partition("[")[2].partition("]")[0]
    return [c.strip().strip("'\"") for c in body.split(",") if c.strip()]


# ---- the loop -------------------------------------------------------------------------------------


@dataclass
class RoundRecord:
    """One round's tokens, as the trainer needs them (rows are rounds)."""

    tokens: TokenTrajectory
    #: whether the round ran a call; a skipped round is a format error, dropped from training on its own
    valid: bool
    #: the round's index (its steps' `turn`), stored as the token record's `round_idx`; `play_rounds` always
    #: sets it (the default serves hand-built records, and the store refuses two of a rollout at one index)
    turn: int = 0


def offered_tools(tools: dict[str, Tool], context: Gathered, config: RolloutConfig) -> dict[str, Tool]:
    """The tools of this round: all of them, less `search` once a document exists where the benchmark
    withdraws it (the released FRAMES rule)."""
    if config.withdraw_search_after_documents and context.documents:
        return {name: tool for name, tool in tools.items() if name != SEARCH}
    return tools


def released_problem(spec: ToolSpec, arguments: Any) -> str | None:
    """What the released loop refuses in a call to a slot tool, or None: only its `model` argument is read,
    which must be there and be one of the tool's slots; other arguments are ignored (eval_hle.py and
    eval_frames.py check `ALL_TOOLS[name]`, which holds `model` alone). A tool without a `model` argument
    is checked against its own schema."""
    model = spec.parameters.get("properties", {}).get("model")
    if model is None:
        return validate_arguments(spec, arguments)
    if not isinstance(arguments, dict) or "model" not in arguments:
        return f"tool '{spec.name}': missing required argument 'model'"
    slots = model.get("enum")
    if slots is not None and arguments["model"] not in slots:
        return f"tool '{spec.name}': model {arguments['model']!r} is not one of {', '.join(slots)}"
    return None


def runnable(call: ToolCall, spec: ToolSpec) -> ToolCall:
    """The call as the released loop runs it: a slot tool gets its `model` alone (the rest was never read)."""
    if "model" not in spec.parameters.get("properties", {}):
        return call
    return ToolCall(name=call.name, arguments={"model": call.arguments["model"]})


def round_calls(calls: list[ToolCall], tools: dict[str, Tool], calls_per_round: str = "first",
                released: bool = False) -> tuple[list[ToolCall], str | None]:
    """The calls this round runs, or none with the reason the round is skipped: the first valid call
    (`first`), or each distinct valid tool in the order written, up to an `answer` (`distinct`, the
    released training). `released` checks a call as the released loop does (`released_problem`)."""
    chosen: list[ToolCall] = []
    problem = "no tool call (the orchestrator may only act by calling a tool; `answer` ends the task)"
    check = released_problem if released else validate_arguments
    for call in calls:
        if call.error:
            problem = call.error
        elif call.name not in tools:
            problem = f"unknown or withdrawn tool '{call.name}' (offered: {', '.join(tools)})"
        elif (invalid := check(tools[call.name].spec, call.arguments)) is not None:
            problem = invalid
        elif call.name not in {c.name for c in chosen}:
            chosen.append(call)
            if calls_per_round == "first" or call.name == ANSWER:
                break
    return chosen, None if chosen else problem


async def play_rounds(session: Any, tools: dict[str, Tool], problem: str, instruction: str | None,
                      context: ToolContext, config: RolloutConfig, key: dict[str, Any], state: RolloutState,
                      count: TokenCounter, started: float) -> list[RoundRecord]:
    """Play rounds until `answer` ran, the round limit or a cap; fills `state` as the engine's loop does.
    Raises what the policy raises (the engine turns it into the rollout's status)."""
    gathered = Gathered(order=config.document_order)
    experts = expert_settings(config)
    released = experts.protocol == "released"
    rounds: list[RoundRecord] = []
    last_observation: list[str] = []
    budget = context_budget(config, problem, count)
    for turn in range(config.max_turns):
        state.turns = turn + 1
        offered = offered_tools(tools, gathered, config)
        specs = [tool.spec for tool in offered.values()]
        catalog = load_catalog(config.catalog, specs) if config.catalog else round_catalog(specs)
        if released:  # the released experts build their own contexts (`lab.tools.experts.expert_context`)
            environment = shown = released_round_context(gathered, problem, config, count)
        else:
            environment, shown = lab_contexts(gathered, config, budget, count)
        context.round = RoundView(gathered, shown, count, experts)
        messages = round_messages(problem, environment, instruction)
        output = await session.generate(messages, tools=catalog, observations=last_observation)
        state.input_tokens += output.input_tokens
        state.output_tokens += output.output_tokens
        state.cost_usd += output.cost_usd
        parsed = parse_turn(output.text, output.native_calls)
        # the released loop checks a call against every tool it knows, a withdrawn `search` included
        callable_tools = tools if released else offered
        calls, problem_text = round_calls(parsed.calls, callable_tools, config.calls_per_round, released)
        if output.tokens is not None and output.tokens.completion_ids:
            rounds.append(RoundRecord(output.tokens, valid=bool(calls), turn=turn))
        prompt = messages[1]["content"]
        if not calls:
            state.format_ok = False
            state.steps.append(StepRecord(**key, turn=turn, kind="format_error", reasoning=parsed.reasoning,
                                          error=problem_text, prompt=prompt))
            last_observation = []
            state.latency_s += output.latency_s
        else:
            # the calls of a round run together, each on the context gathered before it (released)
            ran = await asyncio.gather(*(
                execute_call(runnable(call, callable_tools[call.name].spec) if released else call, 0, callable_tools,
                             context, config) for call in calls))
            observations = [observation for observation, _ in ran]
            state.latency_s += output.latency_s + max(observation.latency_s for observation in observations)
            for index, (call, observation) in enumerate(zip(calls, observations)):
                record_call(state, context, {**key, "turn": turn}, call, observation, False, call_idx=index,
                            reasoning=parsed.reasoning, prompt=prompt)
                if observation.error is None:
                    gathered.add(observation)
            last_observation = [observation.text for observation in observations]
            finals = [o.meta["final_answer"] for o in observations
                      if o.error is None and o.meta.get("final_answer") is not None]
            if finals:
                state.answer = str(finals[0])
                state.steps.append(StepRecord(**key, turn=turn, call_idx=len(calls), kind="answer",
                                              observation=state.answer))
                break
        state.stop_reason, state.cut = cap_reached(config, state, time.monotonic() - started)
        if state.stop_reason:
            break
    else:
        state.stop_reason = f"round limit {config.max_turns} reached without an answer"
    return rounds

