"""`SimModel`: a simulated LLM tool that answers offline-world tasks as often as its profile says.

How a call is decided (all of it reported, nothing slept unless `realtime_scale` > 0):

1. What the model is asked (its *role*) is read from the prompt, as a real model would: judge an
   answer (`lab.judge.JUDGE_REQUEST_RE`), write a search query (`QUERY_REQUEST_RE`), write a program
   (`CODE_REQUEST_RE`), or answer; for the world's tau2-like tasks every other reply is an action plan.
2. Evidence counts only if it is in the *prompt the orchestrator sent* and a tool found it in this
   rollout (`lab.world.task.evidence_found`; the engine tracks the findings): a delegated model sees
   that prompt and nothing else of the rollout, and facts the orchestrator invents (or a flood of
   guessed numbers) are not evidence. Called directly, outside a rollout, the prompt alone decides,
   except for tau2 plans: their record ids must have been looked up (be in `context.transcript`).
   A task that lists no evidence counts as "without": nothing a tool could add would help.
3. P(correct) = profile.p_correct(domain, family, difficulty, evidence); whether this call is right is
   decided by the model's *latent* for the task and role (`lab.sim.draws`), not by a coin per prompt:
   re-asking the same model, however reworded, mostly gives the same answer.
4. Replies: a verdict tag (as a judge: the ground truth, the model-free grade of the answer in the
   prompt, kept at the profile's `judge_agreement` rate and flipped otherwise; `_judge`),
   `ANSWER: <value>` (the reference or a plausible wrong value, `lab.sim.wrong`), a program
   (the reference program or a verified one-token slip of it), `QUERY: <next hop's query>` (or a vague
   one, or `none` when nothing is left to look up), or a JSON action plan (correct only with the
   record ids the orchestrator looked up; without them, the lookups to make first).
5. Input tokens = ceil(len(prompt) / 4) (the usual ~4 characters per English token: deterministic and
   close enough for pricing); output tokens ~ lognormal(profile); cost = the spec's real prices of
   `stands_for` x tokens; latency = (base + per-token x tokens) x lognormal jitter of mean 1. Tokens and
   latency are drawn per call (seeded by rollout seed, task, tool and prompt), so they vary by sample.

`Observation.meta` carries `sim_correct`, `p_correct`, `evidence_present` and `role` for analysis and
tests; the orchestrator reads only the text, so it learns nothing it could not learn from a real model.

Without a task in the context the model cannot know what is right, so it returns a generic simulated
reply with no answer line (still billed and timed, like any model call).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

from lab.graders import grade
from lab.judge import JUDGE_REQUEST_RE, read_answer
from lab.pricing import PriceTable
from lab.sim.draws import Draw, decide, stable_seed
from lab.sim.profiles import Profile, get_profile
from lab.sim.wrong import format_answer, graded_wrong_answer, lookup_plan, wrong_program
from lab.tools.base import ModelRequest, Observation, ToolContext, estimate_tokens, validate_arguments
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec
from lab.world.task import WorldTask, evidence_found

SIM_PREFIX = "sim:"
#: A prompt asking for a program (what an orchestrator or the paper's `enhance_reasoning` writes; the released
#: expert prompt asks to "write additional python code").
CODE_REQUEST_RE = re.compile(r"\bwrite (?:a |the |one |additional )?python (?:program|script|code)\b", re.IGNORECASE)
#: A prompt asking for a search query (the paper's `search` tool, or an orchestrator planning hops; the released
#: expert prompts ask to "write a query to search" / "write a concise query to search Wikipedia").
QUERY_REQUEST_RE = re.compile(r"\bwrite (?:a |one )?(?:short |concise )?(?:search query|query to search)\b",
                              re.IGNORECASE)
#: The reply formats a prompt can ask for (the released expert protocol's): a query in `<query>` tags, an
#: answer in `\boxed{}` (system message of the Qwen answer models) or in `<answer>` tags (GPT-5, Llama).
QUERY_TAGS_RE = re.compile(r"</query>")
BOXED_RE = re.compile(r"\\boxed\{\}")
ANSWER_TAGS_RE = re.compile(r"</answer>")
#: The query reply when nothing is left to look up.
NO_QUERY = "none"
#: Reply without an offline-world task: says what it is and carries no answer line, so no grader can score it.
_NO_TASK_REPLY = ("No offline-world task is attached to this call; a simulated model can only reply in general "
                  "terms here (use real model tools for real benchmarks).")
_NO_PROGRAM = "No program is needed here: the question is not a computation."


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


def reply_role(task: WorldTask, prompt: str) -> str:
    """What the model is asked to do: `judge`, `plan` (tau2-like tasks), `query`, `program` or `answer`."""
    if JUDGE_REQUEST_RE.search(prompt):
        return "judge"
    if task.answer_type == "actions":
        return "plan"
    if QUERY_REQUEST_RE.search(prompt):
        return "query"
    if CODE_REQUEST_RE.search(prompt):
        return "program"
    return "answer"


class SimModel:
    """A simulated LLM behind the Tool protocol (`spec` + async `execute`)."""

    def __init__(self, spec: ToolSpec, profile: Profile, realtime_scale: float = 0.0) -> None:
        """`realtime_scale` > 0 awaits that fraction of the simulated latency (demos only)."""
        self.spec = spec
        self.profile = profile
        self.realtime_scale = realtime_scale

    @classmethod
    def from_profile(cls, name: str, pricing: str = "default", path: str | Path | None = None,
                     realtime_scale: float = 0.0) -> SimModel:
        """A ready tool for profile `name` (`sim:` prefix allowed)."""
        profile = get_profile(name, path)
        return cls(sim_spec(profile, pricing), profile, realtime_scale)

    @classmethod
    def from_spec(cls, spec: ToolSpec, path: str | Path | None = None, realtime_scale: float = 0.0) -> SimModel:
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
        return await self.ask(ModelRequest(arguments["prompt"]), context)

    async def ask(self, request: ModelRequest, context: ToolContext | None = None) -> Observation:
        """The reply to a whole request: the role is read from the prompt and the reply format from the prompt
        and the system message, as a real model reads them; sampling settings leave a simulated model as is."""
        prompt = request.prompt
        context = context or ToolContext()
        rng = random.Random(call_seed(context.seed, context.task_id, self.spec.name, prompt))
        task = context.task
        if not isinstance(task, WorldTask):  # a simulated model only knows the offline world's answers
            text, meta = f"{self.label} {_NO_TASK_REPLY}", {}
        else:
            role = reply_role(task, prompt)
            text, meta = getattr(self, f"_{role}")(task, prompt, context, rng)
            text = in_requested_format(text, role, f"{request.system or ''}\n{prompt}")
            meta["role"] = role
        length = self.profile.output_tokens
        output_tokens = max(1, round(rng.lognormvariate(length.mu, length.sigma)))
        input_tokens = estimate_tokens(prompt) + (estimate_tokens(request.system) if request.system else 0)
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
            # a model's reply is a claim, not a finding: it never counts as evidence for another model
            meta={"profile": self.profile.name, "finding": "", **meta},
        )

    # ---- roles ----------------------------------------------------------------------------------

    def _decide(self, task: WorldTask, role: str, evidence: bool, rng: random.Random) -> tuple[Draw, float]:
        p = self.profile.p_correct(task.domain, task.family, task.difficulty, evidence)
        return decide(task, self.profile.name, role, p, rng), p

    def _answer(self, task: WorldTask, prompt: str,
                context: ToolContext, rng: random.Random) -> tuple[str, dict[str, Any]]:
        evidence = task.evidence_present(prompt, context.findings)
        return self._stated(task, "answer", evidence, rng)

    def _stated(self, task: WorldTask, role: str, evidence: bool, rng: random.Random) -> tuple[str, dict[str, Any]]:
        """A confidence line and `ANSWER: <value>`: the reference when the draw is right, else a plausible wrong one."""
        draw, p = self._decide(task, role, evidence, rng)
        value = task.answer if draw.correct else graded_wrong_answer(task, draw.rng)
        text = f"{self.label} {_confidence(draw)}\nANSWER: {format_answer(value, task.answer_type)}"
        return text, {"sim_correct": draw.correct, "p_correct": p, "evidence_present": evidence,
                      "from_latent": draw.from_latent}

    def _judge(self, task: WorldTask, prompt: str,
               context: ToolContext, rng: random.Random) -> tuple[str, dict[str, Any]]:
        """One verdict tag on the answer in the prompt: the ground truth (the world's model-free grade of
        that answer; the world's answers are names, numbers and letters that grade reads exactly) with
        probability `judge_agreement_for(task.family)`, else its opposite. Whether this verdict errs is
        drawn per (rollout seed, task, model), never from the answer's text, so no rewording of an answer,
        and no instruction to the judge written into it, buys a better draw."""
        answer = read_answer(prompt)
        if answer is None:
            return f"{self.label} The judge prompt holds no student answer; no verdict.", {"truth": None}
        truth = grade(task, answer).correct
        agreement = self.profile.judge_agreement_for(task.family)
        agrees = random.Random(stable_seed(context.seed, task.task_id, self.profile.name, "judge")).random() < agreement
        verdict = truth if agrees else not truth
        return f"{self.label} <correct>{verdict}</correct>", {"sim_correct": agrees, "truth": truth,
                                                              "agreement": agreement}

    def _program(self, task: WorldTask, prompt: str,
                 context: ToolContext, rng: random.Random) -> tuple[str, dict[str, Any]]:
        """The reference program when the model 'knows how' (its with-evidence accuracy: the program is
        the evidence it can produce itself), else a verified one-token slip of it. The code interpreter
        then really runs either; both compute, and neither can be told apart by its look."""
        if not task.reference_code:
            return f"{self.label} {_NO_PROGRAM}", {"wrote_program": False}
        draw, p = self._decide(task, "program", True, rng)
        code = task.reference_code if draw.correct else wrong_program(task, draw.rng)
        meta = {"sim_correct": draw.correct, "p_correct": p, "wrote_program": True, "from_latent": draw.from_latent}
        return f"{self.label} Here is a program:\n```python\n{code.strip()}\n```", meta

    def _query(self, task: WorldTask, prompt: str,
               context: ToolContext, rng: random.Random) -> tuple[str, dict[str, Any]]:
        """The query for the first hop whose fact is not yet found (a vague one when the model slips);
        `none` when every hop is found or the task needs no retrieval."""
        hops = list(task.meta.get("hop_queries") or [])
        facts = list(task.evidence)
        missing = [k for k, fact in enumerate(facts[: len(hops)])
                   if not evidence_found([fact], prompt, context.findings, task.question)]
        if "retrieval" not in task.needs or not missing:
            return f"{self.label} QUERY: {NO_QUERY}", {"hop": None}
        hop = missing[0]
        draw, p = self._decide(task, f"query:{hop}", True, rng)
        query = hops[hop] if draw.correct else task.question
        return f"{self.label} QUERY: {query}", {"hop": hop, "sim_correct": draw.correct, "p_correct": p}

    def _plan(self, task: WorldTask, prompt: str,
              context: ToolContext, rng: random.Random) -> tuple[str, dict[str, Any]]:
        """A JSON action plan. A right plan needs the record ids the orchestrator looked up (outside a
        rollout: ids among what it observed): without them the model can only propose the lookups."""
        looked_up = context.findings if context.findings is not None else list(context.transcript)
        if task.evidence and not task.evidence_present(prompt, looked_up):
            plan = lookup_plan(task.answer, " ".join([task.question, *looked_up]))
            text = (f"{self.label} I need the record ids first; look these up.\n"
                    f"ANSWER: {json.dumps(plan, sort_keys=True)}")
            return text, {"sim_correct": False, "evidence_present": False, "lookups_only": True}
        return self._stated(task, "plan", True, rng)

    def _latency(self, output_tokens: int, rng: random.Random) -> float:
        lat = self.profile.latency
        # mu = -sigma^2/2 gives the multiplier mean 1, so the profile's expected latency is the mean.
        multiplier = rng.lognormvariate(-lat.jitter**2 / 2, lat.jitter) if lat.jitter > 0 else 1.0
        return lat.expected(output_tokens) * multiplier


def in_requested_format(text: str, role: str, request: str) -> str:
    """A reply in the format the request asks for: the last `QUERY:` / `ANSWER:` line of the lab's format becomes
    `<query>...</query>`, `\\boxed{...}` or `<answer>...</answer>` when the request asks for those (the released
    expert prompts do); otherwise the text is unchanged."""
    marker = {"query": "QUERY:", "answer": "ANSWER:", "plan": "ANSWER:"}.get(role)
    if marker is None or marker not in text:
        return text
    head, _, value = text.rpartition(marker)
    value = value.strip()
    if role == "query" and QUERY_TAGS_RE.search(request):
        return f"{head}<query>{value}</query>"
    if role != "query" and BOXED_RE.search(request):
        return f"{head}The final answer is \\boxed{{{value}}}."
    if role != "query" and ANSWER_TAGS_RE.search(request):
        return f"<think>\n{head.strip()}\n</think>\n<answer>\n{value}\n</answer>"
    return text


def _confidence(draw: Draw) -> str:
    return "CONFIDENCE: high" if draw.confident else "CONFIDENCE: low"


def call_seed(seed: int, task_id: str, tool_name: str, prompt: str) -> int:
    """A stable 64-bit seed from the call's inputs (hashlib, so it is the same in every process)."""
    return stable_seed(seed, task_id, tool_name, prompt)
