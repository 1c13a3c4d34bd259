"""`SimModel`: a simulated LLM tool that answers offline-world tasks as often as its profile says.

How a call is decided (all of it reported, nothing slept unless `realtime_scale` > 0):

1. The RNG is seeded by sha256(context.seed, task_id, tool name, prompt), so the same call gives the same
   observation in any process and in any order; `context.rng` is not used because its state depends on
   what ran before, which would make one call's outcome depend on unrelated calls.
2. Evidence counts only if it is in the *prompt the orchestrator sent*: a delegated model sees that
   prompt and nothing else of the rollout (not the transcript), so an orchestrator that found the facts
   must pass them on for the expert to profit (paper §3: tools supply what models lack).
   A task that lists no evidence counts as "without": nothing a tool could add would help.
3. P(correct) = profile.p_correct(domain, family, difficulty, evidence); one uniform draw decides.
4. The reply is `ANSWER: <value>`: the reference answer, or a plausible wrong one (a perturbed number,
   another choice, a distractor or a made-up name, a corrupted action plan for tau2 tasks).
5. Input tokens = ceil(len(prompt) / 4) (the usual ~4 characters per English token: deterministic and
   close enough for pricing); output tokens ~ lognormal(profile); cost = the spec's real prices of
   `stands_for` x tokens; latency = (base + per-token x tokens) x lognormal jitter of mean 1.

`Observation.meta` carries `sim_correct`, `p_correct` and `evidence_present` for analysis and tests; the
orchestrator reads only the text, so it learns nothing it could not learn from a real model.

Without a task in the context the model cannot know what is right, so it returns a generic simulated
reply with no answer line (still billed and timed, like any model call).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import math
import random
import re
from pathlib import Path
from typing import Any

from lab.graders import grade
from lab.pricing import PriceTable
from lab.sim.profiles import Profile, get_profile
from lab.tools.base import Observation, ToolContext, validate_arguments
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec
from lab.world.task import WorldTask

SIM_PREFIX = "sim:"
_SYLLABLES = ("ka", "ren", "vo", "li", "mar", "del", "to", "sen", "bra", "qui", "no", "vel", "dor", "an", "is")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: A prompt asking for a program (what an orchestrator writes before running code).
CODE_REQUEST_RE = re.compile(r"\bwrite (?:a |the )?python (?:program|script|code)\b", re.IGNORECASE)
#: How often a model states high confidence when right / when wrong (assumption, see `_confidence`).
CONFIDENT_WHEN_RIGHT = 0.85
CONFIDENT_WHEN_WRONG = 0.40
#: Reply without an offline-world task: says what it is and carries no answer line, so no grader can score it.
_NO_TASK_REPLY = ("No offline-world task is attached to this call; a simulated model can only reply in general "
                  "terms here (use real model tools for real benchmarks).")


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: one token per 4 characters, at least 1 for non-empty text.

    >>> estimate_tokens("What is the capital of France?")
    8
    """
    return math.ceil(len(text) / 4)


def sim_spec(profile: Profile, pricing: str = "default", name: str | None = None) -> ToolSpec:
    """The `ToolSpec` of a simulated model, priced from the real prices of the model it stands for."""
    price = PriceTable.load(pricing).price(profile.stands_for)
    return ToolSpec(
        name=name or f"{SIM_PREFIX}{profile.name}",
        description=profile.description or f"Simulated {profile.stands_for}.",
        parameters=LLM_TOOL_PARAMETERS,
        category=profile.category,
        model=profile.stands_for,
        input_per_mtok=price.input_per_mtok,
        output_per_mtok=price.output_per_mtok,
        latency=profile.latency,
        backend={"kind": "sim", "profile": profile.name},
        simulated=True,
    )


class SimModel:
    """A simulated LLM behind the Tool protocol (`spec` + async `execute`)."""

    def __init__(self, spec: ToolSpec, profile: Profile, realtime_scale: float = 0.0) -> None:
        """`realtime_scale` > 0 awaits that fraction of the simulated latency (demos only)."""
        self.spec = spec
        self.profile = profile
        self.realtime_scale = realtime_scale

    @classmethod
    def from_profile(cls, name: str, pricing: str = "default", path: str | Path | None = None,
                     realtime_scale: float = 0.0) -> "SimModel":
        """A ready tool for profile `name` (`sim:` prefix allowed)."""
        profile = get_profile(name, path)
        return cls(sim_spec(profile, pricing), profile, realtime_scale)

    @classmethod
    def from_spec(cls, spec: ToolSpec, path: str | Path | None = None, realtime_scale: float = 0.0) -> "SimModel":
        """The tool for a toolkit entry with `backend: {kind: sim, profile: NAME}` (default: the spec's name)."""
        profile = get_profile(str(spec.backend.get("profile") or spec.name), path)
        return cls(spec, profile, realtime_scale)

    @property
    def label(self) -> str:
        return f"[simulated {self.profile.stands_for}]"

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        problem = validate_arguments(self.spec, arguments)
        if problem:
            return Observation.failure(problem, model=self.spec.model, simulated=True)
        prompt: str = arguments["prompt"]
        context = context or ToolContext()
        rng = random.Random(call_seed(context.seed, context.task_id, self.spec.name, prompt))
        task = context.task
        if not isinstance(task, WorldTask):  # a simulated model only knows the offline world's answers
            text, meta = f"{self.label} {_NO_TASK_REPLY}", {}
        else:
            text, meta = self._answer(task, prompt, rng)
        length = self.profile.output_tokens
        output_tokens = max(1, round(rng.lognormvariate(length.mu, length.sigma)))
        input_tokens = estimate_tokens(prompt)
        latency = self._latency(output_tokens, rng)
        if self.realtime_scale > 0:
            await asyncio.sleep(latency * self.realtime_scale)
        return Observation(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=self.spec.cost(input_tokens, output_tokens),
            latency_s=latency,
            model=self.spec.model,
            simulated=True,
            meta={"profile": self.profile.name, **meta},
        )

    # ---- stages ---------------------------------------------------------------------------------

    def _answer(self, task: Any, prompt: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
        if task.reference_code and CODE_REQUEST_RE.search(prompt):
            return self._program(task, rng)
        # A task listing no evidence has nothing a tool could supply: the unaided accuracy applies
        # (that is what the paper's no-tool numbers measure), not the with-evidence one.
        evidence = bool(task.evidence) and task.evidence_present(prompt)
        p = self.profile.p_correct(task.domain, task.family, task.difficulty, evidence)
        correct = rng.random() < p
        value = task.answer if correct else graded_wrong_answer(task, rng)
        meta = {"sim_correct": correct, "p_correct": p, "evidence_present": evidence}
        text = f"{self.label} {_confidence(correct, rng)}\nANSWER: {format_answer(value, task.answer_type)}"
        return text, meta

    def _program(self, task: Any, rng: random.Random) -> tuple[str, dict[str, Any]]:
        """Asked for a program, a model writes the task's reference program when it 'knows how'
        (its with-evidence accuracy: the program is the evidence it can produce itself), else a
        program that prints a wrong value. The code interpreter then really runs either."""
        p = self.profile.p_correct(task.domain, task.family, task.difficulty, True)
        correct = rng.random() < p
        code = task.reference_code if correct else f"print({format_answer(wrong_answer(task, rng), task.answer_type)!r})"
        meta = {"sim_correct": correct, "p_correct": p, "wrote_program": True}
        return f"{self.label} Here is a program:\n```python\n{code.strip()}\n```", meta

    def _latency(self, output_tokens: int, rng: random.Random) -> float:
        lat = self.profile.latency
        # mu = -sigma^2/2 gives the multiplier mean 1, so the profile's expected latency is the mean.
        multiplier = rng.lognormvariate(-lat.jitter**2 / 2, lat.jitter) if lat.jitter > 0 else 1.0
        return lat.expected(output_tokens) * multiplier


def _confidence(correct: bool, rng: random.Random) -> str:
    """The model's stated confidence: right answers are usually stated confidently, wrong ones often
    hedged (assumption: 85% / 40% confident), which is the signal a cascade escalates on."""
    confident = rng.random() < (CONFIDENT_WHEN_RIGHT if correct else CONFIDENT_WHEN_WRONG)
    return "CONFIDENCE: high" if confident else "CONFIDENCE: low"


def call_seed(seed: int, task_id: str, tool_name: str, prompt: str) -> int:
    """A stable 64-bit seed from the call's inputs (hashlib, so it is the same in every process)."""
    digest = hashlib.sha256(f"{seed}\x1f{task_id}\x1f{tool_name}\x1f{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def format_answer(value: Any, answer_type: str) -> str:
    """The text after `ANSWER:`; action plans as compact JSON, numbers without a spurious `.0`."""
    if answer_type == "actions":
        return json.dumps(value, sort_keys=True)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def graded_wrong_answer(task: Any, rng: random.Random, attempts: int = 8) -> Any:
    """A wrong answer the task's own grader rejects (a distractor can contain the reference, a perturbed
    number can round back onto it); action plans are judged by the shop, so they are returned as made."""
    value = wrong_answer(task, rng)
    if task.answer_type == "actions":
        return value
    for _ in range(attempts):
        if not grade(task, f"ANSWER: {format_answer(value, task.answer_type)}").correct:
            return value
        value = wrong_answer(task, rng)
    return _fake_name(str(task.answer), rng)


def wrong_answer(task: Any, rng: random.Random) -> Any:
    """A plausible answer that differs from the reference, by answer type."""
    kind = task.answer_type
    if kind == "actions":
        return _corrupt_actions(task.answer, rng)
    if kind == "multiple_choice":
        return _other_choice(task.answer, task.choices, rng)
    if kind == "numeric" or _as_number(task.answer) is not None:
        return _perturb_number(task.answer, task.tolerance, rng)
    pool = [c for c in [*task.choices, *task.meta.get("distractors", [])] if str(c).lower() != str(task.answer).lower()]
    if pool:
        return rng.choice(pool)
    return _fake_name(str(task.answer), rng)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _perturb_number(answer: Any, tolerance: float, rng: random.Random) -> Any:
    x = _as_number(answer)
    if x is None:
        return _fake_name(str(answer), rng)
    integral = x.is_integer()
    # Off by a typical slip: a factor or an off-by-some; always outside the grading tolerance.
    factor = rng.choice((0.5, 0.8, 0.9, 1.1, 1.25, 2.0))
    wrong = x * factor if x != 0 else rng.choice((-2.0, -1.0, 1.0, 2.0))
    if integral:
        wrong = float(round(wrong))
    margin = max(tolerance * abs(x), 0.0)
    if abs(wrong - x) <= margin or wrong == x:
        wrong = x + (margin + max(1.0, abs(x) * 0.1)) * rng.choice((-1, 1))
        if integral:
            wrong = float(math.floor(wrong) if wrong < x else math.ceil(wrong))
    return int(wrong) if integral else round(wrong, 6)


def _other_choice(answer: Any, choices: list[str], rng: random.Random) -> str:
    text = str(answer)
    if choices and text in choices:  # the reference is an option's text
        others = [c for c in choices if c != text]
    else:  # the reference is a letter
        letters = _LETTERS[: max(len(choices), 4)]
        others = [c for c in letters if c != text.strip().upper()]
    return rng.choice(others) if others else text + "?"


def _fake_name(answer: str, rng: random.Random) -> str:
    """A made-up name with as many words as the reference (deterministic given the RNG)."""
    words = max(1, len(answer.split()))
    for _ in range(10):
        name = " ".join(
            "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize() for _ in range(words)
        )
        if name.lower() != answer.lower():
            return name
    return answer + " (unsure)"


#: Action names that only read: a wrong plan must touch a write, or a state-checking grader cannot tell.
_READ_PREFIXES = ("get_", "find_", "list_", "search_", "lookup_", "check_", "calculate", "think", "transfer_to_human")
#: The tempting mistake when the right plan changes nothing (e.g. a cancel the policy forbids): act anyway.
#: Keyed by an argument the reads carried; these are the offline world's bookshop names (tau2 retail-like).
_TEMPTING_WRITES = {"order_id": ("cancel_order", {"reason": "no longer needed"})}


def _corrupt_actions(golden: Any, rng: random.Random) -> list[Any]:
    """A plan whose *effect* differs from the golden one (graders replay plans and compare databases).

    With write actions in the golden plan: drop one, or change one of its arguments. With none (the right
    outcome is to change nothing): add the tempting write, or a hand-off when none applies.
    """
    plan = copy.deepcopy(list(golden) if isinstance(golden, (list, tuple)) else [])
    actions = [a for a in plan if isinstance(a, dict)]
    writes = [a for a in actions if not str(a.get("name", "")).startswith(_READ_PREFIXES)]
    if writes:
        action = rng.choice(writes)
        args = action.get("arguments")
        if isinstance(args, dict) and args and rng.random() < 0.5:
            key = rng.choice(sorted(args))
            args[key] = _changed_value(args[key], rng)
        else:
            plan.remove(action)
        return plan
    for action in actions:
        for arg, (name, extra) in _TEMPTING_WRITES.items():
            if arg in action.get("arguments", {}):
                return [*plan, {"name": name, "arguments": {arg: action["arguments"][arg], **extra}}]
    return [*plan, {"name": "transfer_to_human_agents", "arguments": {"summary": "unsure how to proceed"}}]


def _changed_value(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + rng.choice((-1, 1)) * max(1, abs(value) // 10)
    if isinstance(value, list):
        return value[:-1] if value else ["unknown"]
    return f"{value}-{rng.randint(1, 9)}" if value else "unknown"
