"""What an evaluation runs: typed, validated, and hashed into a stable run id for resuming."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lab.benchmarks import find_source, sources
from lab.benchmarks.source import benchmark_label, resolve
from lab.errors import LabInputError, first_error
from lab.judge import JudgePrompt
from lab.rollout.config import CallsPerRound, Protocol, Tau2Agent
from lab.tools.experts import ExpertProtocol

#: Fields added after the first runs were stored; see `EvalConfig.run_id`.
_LATER_FIELDS = ("observation_chars", "orchestrator_latency_per_token_s", "train_run_id", "train_step", "user", "judge",
                 "protocol", "catalog", "context_tokens", "retrieval_top_k", "tau2_agent", "tool_timeout_s",
                 "expert_timeout_s", "orchestrator_tokenizer", "orchestrator_provider", "orchestrator_family",
                 "calls_per_round", "run_programs", "retrieval_whitelist")

#: Orchestrator kinds that are models (sampled by temperature/top_p), unlike `scripted:`.
MODEL_KINDS = ("hf", "openai")


class EvalConfig(BaseModel):
    """One `orchestra eval` invocation. Several preferences or turn budgets make several runs."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str = Field(
        "world", description="world[:frames|hle|bookshop], frames, hle, tau2[:domain], toolscale[:DIR] "
                             "(synthesized domains), bfcl[:category], or a .py file that defines a BenchmarkSource "
                             "SOURCE (lab.benchmarks.source).")
    benchmark_path: str | None = Field(None, description="Local benchmark file or folder (else the default location).")
    split: str | None = Field("test", description="Task split; None for all.")
    orchestrator: str = Field(
        "scripted:cheapest-first", description="hf:<path>, openai:<model>@<url> or scripted:<name>.")
    toolkit: str = Field(
        "default", description="Toolkit name (configs/toolkits: default = free-form, paper = slots) or a YAML path.")
    pricing: str = Field("default", description="Provider price table for tool costs.")
    preferences: list[str] = Field(
        default_factory=list,
        description="P strings or 'held-out' (a held-out (PI, P) pair per task, paper Table 3); one run per value "
                    "(none: default P, no instruction).",
    )
    preference_instruction: str | None = Field(
        None, description="Preference instruction shown to every task, replacing the one paired with P "
                          "(lab.preference).",
    )
    max_turns: list[int] = Field(
        default_factory=lambda: [50], description="Turn budgets; one run per value (paper: 50).")
    samples: int = Field(1, ge=1, description="Rollouts per task.")
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="Orchestrator sampling temperature (hf:, openai:); 0 is greedy.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Orchestrator nucleus-sampling mass (hf:, openai:).")
    max_new_tokens: int | None = Field(
        None, ge=1, description="Orchestrator tokens per turn (openai: max_tokens); None keeps the policy's default.",
    )
    observation_chars: int = Field(6000, ge=100, description="Tool output shown to the orchestrator is cut here.")
    orchestrator_latency_per_token_s: float | None = Field(
        None, gt=0, description="hf: report generated tokens x this as the orchestrator's latency, not its wall time.")
    protocol: Protocol = Field(
        "conversation", description="conversation: the orchestrator reads the whole conversation; rounds: a fresh "
                                    "prompt per round, context built by the environment (the released checkpoint's "
                                    "protocol).")
    catalog: str | None = Field(
        None, description="rounds: a tool catalog in the released format (tools.json) instead of the toolkit's.")
    context_tokens: int = Field(27000, ge=0, description="rounds: tokens of environment context, minus the problem's.")
    retrieval_top_k: int | None = Field(
        None, ge=1, description="Documents each `search` tool retrieves from its local index; None: under rounds the "
                                "released depth (FRAMES 150, HLE 50), else the toolkit's `top_k`.")
    retrieval_whitelist: Literal["inside", "global"] | None = Field(
        None, description="Where a task's document whitelist applies to each paper `search` over a local index "
                          "(lab.tools.local_search.WhitelistScope): `global` (the index's top 1,000 hits, then the "
                          "task's documents among them: the released HLE server's) or `inside` (search among the "
                          "task's documents only). None: under rounds the benchmark's released scope (HLE: global), "
                          "else the toolkit's (inside unless it says otherwise).")
    orchestrator_tokenizer: str | None = Field(
        None, description="rounds, openai: orchestrators: a local copy of the served model's tokenizer, so the "
                          "context is cut in its tokens (else characters / 4).")
    orchestrator_provider: str | None = Field(
        None, description="openai: orchestrators: whose request rules the endpoint follows (openai or compatible, "
                          "`lab.providers`); None: placed from the URL.")
    orchestrator_family: str | None = Field(
        None, description="openai: orchestrators: the model's family at its provider (openai: reasoning or chat); "
                          "None: placed from the model id.")
    expert_protocol: ExpertProtocol | None = Field(
        None, description="How slot tools ask their experts: `released` (the released evaluation's prompts, contexts, "
                          "sampling and waiting per model; rounds only) or `lab`. None: released under rounds, lab "
                          "otherwise.")
    calls_per_round: CallsPerRound | None = Field(
        None, description="rounds: `first` (the first valid call of a round runs) or `distinct` (each distinct valid "
                          "tool, together, `answer` last: what eval_frames.py's `processed_tools` intends, which its "
                          "final `break` defeats). None: the benchmark's released rule (first, HLE and FRAMES).")
    run_programs: bool | None = Field(
        None, description="rounds, released experts: whether `enhance_reasoning` programs run and join the context. "
                          "None: the benchmark's released rule (HLE yes; FRAMES no, its code reader fails on a chat "
                          "completion).")
    tool_timeout_s: float | None = Field(
        None, gt=0, description="A ceiling on any one tool call; None: each tool's own limit (a backend's timeout_s, "
                                "the released experts' --expert-timeout-s).")
    expert_timeout_s: float = Field(
        3600.0, gt=0, description="Released experts: ceiling on one expert call, retries included (released: none).")
    user: str = Field(
        "scripted", description="tau2: the simulated user, `scripted` (offline) or an LLM tool of the toolkit.")
    judge: str | None = Field(
        None, description="An LLM tool of the toolkit as judge (lab.eval.judged): FRAMES/HLE-style answers exact "
                          "match rejects (the released evaluation's rule), tau2 NL assertions; the outcome follows "
                          "it. None: no judge.")
    judge_prompt: JudgePrompt | None = Field(
        None, description="The judge's prompt (lab.judge): `released` (the released evaluation's, byte for byte, "
                          "its reply read as released) or `lab` (the lab's stricter one: answers defused, exactly "
                          "one verdict tag or no verdict). None: released under the released expert protocol, "
                          "else lab.")
    tau2_agent: Tau2Agent = Field(
        "lab", description="tau2: `lab` (the lab's agent: the conversation protocol's prompt and catalog) or "
                           "`released` (the released evaluation's: the domain policy in the system prompt, call_expert "
                           "over the toolkit's gpt-5, gpt-5-mini and qwen3-32b tools, <message> replies, 200 tau2 "
                           "steps).")
    limit: int | None = Field(None, ge=1, description="First N tasks after filtering.")
    tasks: list[str] = Field(default_factory=list, description="Only these task ids.")
    concurrency: int = Field(16, ge=1, description="Rollouts in flight at once.")
    rate_limit: float | None = Field(None, gt=0, description="Global cap on rollout starts per second.")
    budget_usd: float | None = Field(None, gt=0, description="Stop scheduling before total cost would pass this.")
    seed: int = Field(0, description="Seeds policies, simulated tools and sampling.")
    shard: str | None = Field(
        None, description="`i/N`: run only the i-th of N slices of the tasks x samples (1-based; N machines run one "
                          "each into one run). Not part of the run id: every shard writes the same run.")
    run_name: str = Field("", description="Human name; part of the run id, so a new name starts a new run.")
    train_run_id: str | None = Field(None, description="Set by the trainer: the training run this evaluation checks.")
    train_step: int | None = Field(
        None, ge=0, description="Set by the trainer: the optimizer step of the evaluated policy.")

    @model_validator(mode="after")
    def _check(self) -> EvalConfig:
        source = find_source(self.benchmark)
        if source is None:
            raise ValueError(f"--benchmark '{self.benchmark}': expected one of {', '.join(s.name for s in sources())}")
        if any(t < 1 for t in self.max_turns):
            raise ValueError(f"--max-turns must be >= 1, got {self.max_turns}")
        if self.expert_protocol is None:
            self.expert_protocol = "released" if self.protocol == "rounds" else "lab"
        elif self.expert_protocol == "released" and self.protocol != "rounds":
            raise ValueError("--expert-protocol released: the released experts read the documents and programs the "
                             "round protocol gathers; add --protocol rounds")
        if self.retrieval_whitelist is None and self.protocol == "rounds":  # the benchmark's released retrieval
            self.retrieval_whitelist = source.released_filters.get("whitelist_scope")
        elif self.retrieval_whitelist is not None and self.protocol != "rounds" and self.retrieval_top_k is None:
            raise ValueError(f"--retrieval-whitelist {self.retrieval_whitelist}: applies with --protocol rounds or "
                             "--retrieval-top-k (else set backend.retriever.whitelist_scope in the toolkit)")
        if self.judge_prompt is None:  # the judge follows the experts: a released run is graded as released
            self.judge_prompt = "released" if self.expert_protocol == "released" else "lab"
        if self.orchestrator_tokenizer is not None and not self.orchestrator.startswith("openai:"):
            raise ValueError("--orchestrator-tokenizer is for openai: orchestrators (hf: models count with their "
                             "own tokenizer; scripts have none)")
        if self.orchestrator_tokenizer is not None and not Path(self.orchestrator_tokenizer).expanduser().is_dir():
            raise ValueError(f"--orchestrator-tokenizer {self.orchestrator_tokenizer}: no such folder (a local copy "
                             "of the served model's tokenizer files)")
        if self.catalog is not None and self.protocol != "rounds":
            raise ValueError("--catalog is read by the round protocol only; add --protocol rounds")
        if self.calls_per_round is not None and self.protocol != "rounds":
            raise ValueError("--calls-per-round is read by the round protocol only; add --protocol rounds")
        if self.run_programs is not None and self.expert_protocol != "released":
            raise ValueError("--run-programs is read by the released experts only (the lab's "
                             "always run programs); add --protocol rounds --expert-protocol released")
        if self.protocol == "rounds" and not source.rounds:
            answering = ", ".join(s.name for s in sources() if s.rounds)
            raise ValueError(f"--protocol rounds: {self.benchmark} tasks are conversations with a user or "
                             f"function calls; the round protocol runs question-answering benchmarks ({answering})")
        if self.tau2_agent == "released":
            self._check_released(source.released_agent)
        self.shard_slice()
        if self.preference_instruction is not None and not self.preference_instruction.strip():
            raise ValueError("--preference-instruction is empty; pass the text or leave the flag out")
        # greedy decoding of a model makes every sample of a task the same rollout; scripts seed their
        # tools per sample, so their samples differ at any temperature
        if self.samples > 1 and self.temperature == 0 and self.orchestrator.split(":")[0] in MODEL_KINDS:
            raise ValueError(
                f"--samples {self.samples} with --temperature 0: {self.orchestrator} decodes greedily, so the "
                f"samples of a task would be identical; pass --temperature > 0 (e.g. 0.7) or --samples 1"
            )
        return self

    def _check_released(self, runs_it: bool) -> None:
        """What the released tau2 agent cannot take: a benchmark it does not run (`runs_it` False), a turn
        budget (it counts tau2 steps) and a preference (its prompt has none, so a run would claim one the
        agent never saw)."""
        if not runs_it:
            raise ValueError(f"--tau2-agent released runs tau2 conversations; --benchmark {self.benchmark} is not tau2")
        if self.max_turns != [50]:
            raise ValueError("--tau2-agent released stops at 200 tau2 steps (agent replies, tool executions, user "
                             "replies), not at a turn budget; leave --max-turns out")
        if self.preferences or self.preference_instruction is not None:
            raise ValueError("--tau2-agent released: the released agent's prompt has no preference instruction; "
                             "leave --preference and --preference-instruction out")

    def shard_slice(self) -> tuple[int, int] | None:
        """`shard` as (i, N), checked: 1 <= i <= N."""
        if self.shard is None:
            return None
        index, _, count = self.shard.partition("/")
        if not (index.strip().isdigit() and count.strip().isdigit()):
            raise ValueError(f"--shard {self.shard!r}: expected i/N, e.g. 1/4 (shards count from 1)")
        i, n = int(index), int(count)
        if not 1 <= i <= n:
            raise ValueError(f"--shard {self.shard}: i must be 1..{n} (shards count from 1; a SLURM array from 0 "
                             "passes $((SLURM_ARRAY_TASK_ID + 1)))")
        return i, n

    @classmethod
    def build(cls, **values: object) -> EvalConfig:
        """Validate, turning pydantic's report into one line naming the field."""
        try:
            return cls(**values)
        except ValidationError as exc:
            raise LabInputError(first_error(exc).removeprefix("(root): ")) from None

    def variants(self) -> list[tuple[str | None, int]]:
        """(preference, max_turns) of each run this config makes."""
        prefs: list[str | None] = list(self.preferences) or [None]
        return [(p, t) for p in prefs for t in self.max_turns]

    def run_id(self, preference: str | None, max_turns: int, toolkit_json: str = "") -> str:
        """Stable id: the same command (same tasks, tools, policy, sampling, instruction, seed) resumes the
        same run; an edited toolkit file (`toolkit_json`, the loaded toolkit) or a model directory whose
        weights were rewritten (`model_fingerprint`) starts a new one."""
        identity = self.model_dump(exclude={"concurrency", "rate_limit", "budget_usd", "preferences", "max_turns",
                                            "shard"})
        for name in _LATER_FIELDS:  # fields added after runs were logged: at their default they keep old ids
            if identity[name] == type(self).model_fields[name].default:
                del identity[name]
        if identity["expert_protocol"] == "lab":  # what every run did before the released experts came
            del identity["expert_protocol"]
        elif self.protocol == "rounds":  # its context and loop became the released ones byte for byte (issue 49)
            identity["released_rounds"] = 2
        if identity["judge_prompt"] == "lab" or not self.judge:  # the lab's prompt is what judged runs used before
            del identity["judge_prompt"]
        identity.update(preference=preference, max_turns=max_turns, toolkit=toolkit_json)
        if self.judge:  # before v6 a judge graded tau2 NL assertions only: such runs are not resumed as judged ones
            identity["judge_rule"] = "exact-then-judge"
        weights = model_fingerprint(self.orchestrator)
        if weights:  # a model retrained in place starts new runs instead of resuming the old model's
            identity["weights"] = weights
        source, qualifier = resolve(self.benchmark)
        identity.update(source.run_identity(qualifier))  # e.g. the version of a dataset built on first use
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
        label = benchmark_label(self.benchmark).replace(":", "-")
        prefix = self.run_name or f"{label}-{self.orchestrator.split(':')[0]}"
        return f"{prefix}-{digest}"


def model_fingerprint(orchestrator: str) -> str:
    """For an `hf:<directory>` orchestrator: the names, sizes and modification times of its weight files
    (hashing gigabytes of weights would cost more than the runs it protects); "" for anything else."""
    if not orchestrator.startswith("hf:"):
        return ""
    folder = Path(orchestrator.removeprefix("hf:")).expanduser()
    if not folder.is_dir():
        return ""
    files = sorted(f for pattern in ("*.safetensors", "*.bin", "*.pt") for f in folder.glob(pattern))
    stamp = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    return hashlib.sha256(json.dumps(stamp).encode()).hexdigest()[:10] if stamp else ""
