"""`orchestra train check`: does GRPO, with this model and config, move the policy toward higher reward, and
(with several instructions) toward the call each instruction asks for?

A user about to spend GPU hours needs to know that the trainer, on a problem it can solve, provably
learns; a sign, mask or normaliser bug would otherwise show only as a run that never improves. The
check builds such a problem from the config's `learning_check` section and runs the real trainer on it:

1. **A problem whose best call is known.** Every candidate first call (`answer:answer-1`, ...) is run
   on each training task of the config's families; tasks where every candidate always solves are kept,
   so the calls differ only in what an instruction rewards (cost under "keep the bill low", a GPT-5
   call under "GPT-5 is approved"). Per condition (an instruction and its P: one, or several in
   `conditions`), the Eq. 2 reward of the candidates' rollouts, grouped per task, must rank the
   condition's best call first, else the check stops: it would test nothing. Two conditions whose best
   calls are opposite make it a *conditional* check: the policy must read the instruction.
2. **A start that does not know it.** The config's model (with its LoRA adapters, `lora:`) is fitted to
   write each candidate after every task's first round prompt, under every instruction, equally often
   (a format-only warm start: the format, no preference), so each best call starts near 1/k.
3. **GRPO** (`OrchestraGRPOTrainer`, the config's own settings) on those tasks under every condition
   (a group is one task under one instruction), reading each condition's probability of its best call
   on the fixed first round prompts after every step (`trainer.probe`, teacher-forced: no sampling
   noise). It passes when the lowest last reading reaches the threshold (0.9 by default).
4. **The controls** (`controls`), each the same run from the same start with one link between reward
   and update broken, each of which must fail: `sign-flip` (the advantage negated), `shuffled-advantages`
   (advantages permuted among the rows), `shuffled-instructions` (each group rewarded under another
   condition's P). If a control passes too, the update does not learn through that link.

Every run is logged as a `kind='train'` run (`probe/best_call` in `train_metrics` per step, step 0 the
start: the lowest condition; `probe/best_call/<i>` each), so the dashboard's Training page shows the curves.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from rich.console import Console
from rich.table import Table

from lab.errors import LabInputError
from lab.policies.scripted import ScriptedPolicy
from lab.preference import Preference
from lab.records import RunRecord, RunStatus, git_sha, utcnow
from lab.rollout import RolloutRequest, run_rollout
from lab.rollout.policy import Policy
from lab.scoring import FeatureFrame
from lab.store import Store
from lab.toolkit import load_toolkit
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.examples import Example
from trainer.grpo import OrchestraGRPOTrainer
from trainer.probe import CallProbe, ProbeCallback, call_text, continuation_logps, first_round_prompt, parse_call
from trainer.scoring import GroupScores, RowFeatures

#: Defaults of the `learning_check` keys a config may leave out.
CHECK_DEFAULTS: dict[str, Any] = {"tasks": 16, "threshold": 0.9, "pricing": "default", "fit_learning_rate": 3e-3,
                                  "fit_steps": 400, "controls": ["sign-flip"]}
#: The controls a check may run, each from the same start, each of which must fail (module docstring).
CONTROLS = ("sign-flip", "shuffled-advantages", "shuffled-instructions")


@dataclass(frozen=True)
class Condition:
    """One instruction of the check, its P, and the candidate call whose reward is highest under it."""

    instruction: str
    preference: str
    best: str


@dataclass(frozen=True)
class CheckSpec:
    """The check's problem: candidate first calls, and per instruction (condition) the best of them."""

    conditions: tuple[Condition, ...]
    calls: tuple[str, ...]
    tasks: int
    threshold: float
    pricing: str
    fit_learning_rate: float
    fit_steps: int
    controls: tuple[str, ...]

    @property
    def conditional(self) -> bool:
        """Several instructions: the check asks the model to choose by the instruction it reads."""
        return len(self.conditions) > 1


@dataclass
class CheckRun:
    """One GRPO run of the check: per condition, the probe's reading of its best call per step (step 0: the
    start); `curve` is the lowest of them per step (the check passes when every condition does)."""

    label: str
    run_id: str
    curves: dict[int, list[tuple[int, float]]] = field(default_factory=dict)

    @property
    def curve(self) -> list[tuple[int, float]]:
        steps = zip(*self.curves.values())
        return [(points[0][0], min(p for _, p in points)) for points in steps]

    @property
    def final(self) -> float:
        return self.curve[-1][1]


@dataclass
class CheckResult:
    spec: CheckSpec
    task_ids: list[str]
    candidate_rewards: list[dict[str, float]]   # per condition: mean Eq. 2 reward of each candidate's rollouts
    start: list[dict[str, float]]               # per condition: each candidate's probability at the start
    learning: CheckRun
    controls: list[CheckRun]

    @property
    def passed(self) -> bool:
        return self.learning.final >= self.spec.threshold

    @property
    def control_failed(self) -> bool:
        """Every control stayed below the threshold under at least one condition."""
        return all(run.final < self.spec.threshold for run in self.controls)


def check_spec(config: OrchestraGRPOConfig) -> CheckSpec:
    """The config's `learning_check`, checked against its toolkit: one line naming what is wrong."""
    options = dict(config.learning_check or {})
    if not options:
        raise LabInputError("learning_check: the config has none; see configs/train/check.yaml for one")
    single = {k: options.pop(k) for k in ("preference", "instruction", "best") if k in options}
    listed = options.pop("conditions", None)
    if single and listed:
        raise LabInputError("learning_check: give either preference/instruction/best or conditions, not both")
    if listed is None:
        missing = [k for k in ("preference", "instruction", "best") if k not in single]
        if missing:
            raise LabInputError(f"learning_check.{missing[0]}: required (see configs/train/check.yaml)")
        listed = [single]
    if "calls" not in options:
        raise LabInputError("learning_check.calls: required (see configs/train/check.yaml)")
    conditions = []
    for i, item in enumerate(listed):
        unknown = sorted(set(item) - {"preference", "instruction", "best"})
        missing = [k for k in ("preference", "instruction", "best") if k not in item]
        if unknown or missing or not all(isinstance(v, str) for v in item.values()):
            raise LabInputError(f"learning_check.conditions[{i}]: expected the strings preference, instruction and "
                                f"best{f' (unknown key {unknown[0]!r})' if unknown else ''}")
        conditions.append(Condition(**item))
    merged = {**CHECK_DEFAULTS, **options}
    spec = CheckSpec(conditions=tuple(conditions), calls=tuple(merged.pop("calls")),
                     controls=tuple(merged.pop("controls")), **merged)
    toolkit = load_toolkit(config.toolkit, pricing=spec.pricing)
    tools = {tool.name: tool for tool in toolkit.tools}
    for call in spec.calls:
        name, arguments = parse_call(call)
        if name not in tools:
            raise LabInputError(f"learning_check.calls: '{call}' names no tool of toolkit '{config.toolkit}' "
                                f"({', '.join(tools)})")
        slots = list(tools[name].slots or {})
        if arguments.get("model") not in slots:
            raise LabInputError(f"learning_check.calls: '{call}' names no slot of tool '{name}' ({', '.join(slots)})")
    if len(set(spec.calls)) < 2:
        raise LabInputError("learning_check.calls: name at least two different calls to choose between")
    for condition in spec.conditions:
        if condition.best not in spec.calls:
            raise LabInputError(f"learning_check.best: '{condition.best}' is not one of learning_check.calls "
                                f"({', '.join(spec.calls)})")
        Preference.parse(condition.preference, toolkit.feature_names, toolkit.feature_models())
    if len({c.instruction for c in spec.conditions}) < len(spec.conditions):
        raise LabInputError("learning_check.conditions: each condition needs its own instruction")
    unknown_controls = [c for c in spec.controls if c not in CONTROLS]
    if unknown_controls:
        raise LabInputError(f"learning_check.controls: '{unknown_controls[0]}' is not one of {', '.join(CONTROLS)}")
    if "shuffled-instructions" in spec.controls and not spec.conditional:
        raise LabInputError("learning_check.controls: shuffled-instructions needs two or more conditions to shuffle")
    if not 0 < spec.threshold <= 1:
        raise LabInputError(f"learning_check.threshold: {spec.threshold} must be in (0, 1]")
    if spec.tasks < 1:
        raise LabInputError(f"learning_check.tasks: {spec.tasks} must be at least 1")
    groups = config.groups_per_generation
    if config.paired_instructions and groups % len(spec.conditions):
        raise LabInputError(f"paired_instructions: a step's {groups} groups must hold each check task under all "
                            f"{len(spec.conditions)} instructions (a multiple of {len(spec.conditions)})")
    if config.protocol != "rounds":
        raise LabInputError("learning_check: reads the first round's call, so the config needs protocol: rounds")
    return spec


def check_examples(spec: CheckSpec, environment: TrainingEnvironment, task_ids: list[str],
                   condition: int = 0) -> list[Example]:
    """One example per task under one condition: the candidate calls' features only (so the catalog offers
    just the choice the check is about, and its prompts stay short), the check's prices, the condition's
    instruction and P."""
    toolkit = environment.toolkit
    chosen = spec.conditions[condition]
    bound = Preference.parse(chosen.preference, toolkit.feature_names, toolkit.feature_models()).as_dict()
    names = [*toolkit.feature_names, "outcome", "compute", "latency"]
    offered = {arguments.get("model") or tool for tool, arguments in map(parse_call, spec.calls)}
    return [Example(example_id=f"{task_id}#check{condition}", task_id=task_id,
                    question=environment.task(task_id).question,
                    features=tuple(f for f in toolkit.feature_names if f in offered), pricing=spec.pricing,
                    instruction=chosen.instruction, preference=tuple((n, float(bound.get(n, 0.0))) for n in names))
            for task_id in task_ids]


def one_call_policy(call: str) -> Policy:
    """A script whose first round is `call` (`answer` ends the task there)."""
    def script(view: Any, kit: Any, rng: random.Random) -> Any:
        yield call_text(call)
    # a script's session reads the task's `TaskView`, which is what the engine hands a non-privileged policy
    return cast(Policy, ScriptedPolicy(f"call-{call}", script))


#: Times each candidate runs on a task before the task counts as solved by it: a simulated model's
#: verdict is mostly fixed per task, but a few calls are decided afresh, and a task the best call solves
#: only sometimes would reward another call.
PROBE_SAMPLES = 3


def choose_tasks(spec: CheckSpec, config: OrchestraGRPOConfig, environment: TrainingEnvironment,
                 ) -> tuple[list[str], list[dict[str, float]]]:
    """The first `spec.tasks` training tasks every candidate solves every time, and per condition each
    candidate's mean Eq. 2 reward there under the condition's P (a task's candidate rollouts form one
    group, as a GRPO group would); each condition's best call must rank first under it."""
    examples = check_examples(spec, environment, list(environment.tasks))
    per_task = len(spec.calls) * PROBE_SAMPLES

    async def run_task(example: Example) -> list[Any]:
        task = environment.task(example.task_id)
        jobs = [run_rollout(one_call_policy(call), environment.tools_for(example), RolloutRequest(
                    run_id="learning-check-probe", task=task, sample_idx=sample, group_id=example.example_id,
                    preference=dict(example.preference), preference_instruction=example.instruction,
                    seed=config.seed + sample, benchmark=environment.source.benchmark),
                    environment.source.grader, config.rollout_config())
                for call in spec.calls for sample in range(PROBE_SAMPLES)]
        return list(await asyncio.gather(*jobs))

    kept: list[tuple[Example, list[Any]]] = []
    for start in range(0, len(examples), 32):  # stop as soon as enough tasks are found
        batch = examples[start:start + 32]
        results = asyncio.run(gather_all([run_task(e) for e in batch]))
        kept += [(e, r) for e, r in zip(batch, results) if all(x.trajectory.outcome >= 1 for x in r)]
        if len(kept) >= spec.tasks:
            break
    if len(kept) < spec.tasks:
        raise LabInputError(f"learning_check: only {len(kept)} training tasks of {config.benchmark} "
                            f"{config.families or ''} are solved by every candidate call, {spec.tasks} asked "
                            "(lower learning_check.tasks, or name calls that solve more)")
    kept = kept[: spec.tasks]
    task_ids = [example.task_id for example, _ in kept]
    rollouts = [r.trajectory for _, results in kept for r in results]
    frame = FeatureFrame.from_counts(
        [json.loads(t.tool_counts_json) for t in rollouts], [t.outcome for t in rollouts],
        [t.cost_usd for t in rollouts], [t.latency_s for t in rollouts], environment.features)
    frame = frame.take(list(range(len(rollouts))), [str(i // per_task) for i in range(len(rollouts))])
    means = []
    for index, condition in enumerate(spec.conditions):
        preference = dict(check_examples(spec, environment, task_ids[:1], index)[0].preference)
        rewards = frame.rewards([preference] * len(rollouts)).reshape(len(kept), len(spec.calls), -1)
        mean = {call: float(rewards[:, j].mean()) for j, call in enumerate(spec.calls)}
        top = max(mean, key=lambda c: mean[c])
        if top != condition.best:
            raise LabInputError(f"learning_check.best: under '{condition.instruction}' the call with the highest mean "
                                f"reward is '{top}' ({mean[top]:.3f}), not '{condition.best}' "
                                f"({mean[condition.best]:.3f})")
        means.append(mean)
    return task_ids, means


async def gather_all(jobs: list[Any]) -> list[Any]:
    """Run coroutines concurrently in one event loop (`asyncio.run` takes one coroutine)."""
    return list(await asyncio.gather(*jobs))


def fit_format_start(model: Any, probes: list[CallProbe], spec: CheckSpec, seed: int,
                     report: Callable[[str], None] | None = None) -> None:
    """Fit `model` in place to write every candidate after every probe prompt (of every condition) equally
    often: the format of the calls, and no preference between them, under any instruction (cross-entropy
    on the call tokens only, each prompt forwarded once for all candidates: `continuation_logps`; its
    optimum gives each candidate 1/k). Stops once, under every condition, the
    candidates hold at least 97% of the mass, split within a factor 1.25 of uniform. `report` is told the
    step and the last reading (a 30-layer model takes minutes here)."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=spec.fit_learning_rate)
    k = len(probes[0].calls)
    prompts = [prompt for probe in probes for prompt in probe.prompts]
    calls = list(probes[0].calls.values())
    tokens = sum(len(c) for c in calls)
    reading = "not read yet"
    for step in range(1, spec.fit_steps + 1):
        if report:
            report(f"step {step} of at most {spec.fit_steps}; candidates' mass per instruction: {reading}")
        model.train()
        # every candidate after the same prompts: each step's gradient favours none of them
        chosen = rng.sample(prompts, min(4, len(prompts)))
        logps = torch.cat([continuation_logps(model, prompt, calls) for prompt in chosen])
        loss = -logps.sum() / (tokens * len(chosen))   # the mean token cross-entropy of the calls
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % 10 == 0:
            shares = [probe.probabilities(model) for probe in probes]
            reading = ", ".join(f"{sum(s.values()):.2f}" for s in shares)
            if all(sum(s.values()) >= 0.97 and all(1 / (1.25 * k) <= p <= 1.25 / k for p in s.values())
                   for s in shares):
                model.eval()
                return
    raise LabInputError(f"learning_check: the format-only start did not fit in {spec.fit_steps} steps "
                        f"(candidate probabilities {[probe.probabilities(model) for probe in probes]}); raise "
                        "learning_check.fit_steps")


def condition_probes(spec: CheckSpec, environment: TrainingEnvironment, tokenizer: Any, task_ids: list[str],
                     temperature: float, whole_catalog: bool = False) -> dict[int, CallProbe]:
    """Per condition, the probability of its best call on the first round prompts of the check's tasks under
    its instruction; the catalog of the check's candidates, or (`whole_catalog`) every tool as training shows it."""
    probes = {}
    for index, condition in enumerate(spec.conditions):
        example = check_examples(spec, environment, task_ids[:1], index)[0]
        if whole_catalog:
            example = dataclasses.replace(example, features=tuple(environment.features))
        specs = [tool.spec for tool in environment.tools_for(example).values()]
        prompts = [first_round_prompt(tokenizer, environment.task(t).question, condition.instruction, specs)
                   for t in task_ids]
        probes[index] = CallProbe.build(tokenizer, prompts, list(spec.calls), condition.best, temperature)
    return probes


def run_check(config: OrchestraGRPOConfig, store: Store, console: Console, control: bool = True) -> CheckResult:
    """The learning check (module docstring); `control`: also run the spec's controls from the same start."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed

    from trainer.models import resolve_model

    spec = check_spec(config)
    environment = TrainingEnvironment(config)
    source = resolve_model(config.model, config.tiny_model, config.seed)
    model = AutoModelForCausalLM.from_pretrained(source)
    set_seed(config.seed)   # the adapters' random initialisation: the same start on every run of the config
    model = with_lora(model, config)   # a LoRA naming no module of the model stops here, before any rollout
    task_ids, rewards = choose_tasks(spec, config, environment)
    for condition, reward in zip(spec.conditions, rewards):
        console.print(f"learning check: {len(task_ids)} tasks every candidate solves; mean Eq. 2 reward under "
                      f"'{condition.instruction}': " + ", ".join(f"{c} {r:.2f}" for c, r in reward.items()))
    tokenizer = AutoTokenizer.from_pretrained(source)
    probes = condition_probes(spec, environment, tokenizer, task_ids, config.temperature)
    with console.status("learning check: fitting the format-only start") as status:
        fit_format_start(model, list(probes.values()), spec, config.seed,
                         report=lambda line: status.update(f"learning check: fitting the format-only start, {line}"))
    start = [probe.probabilities(model) for probe in probes.values()]
    for condition, shares in zip(spec.conditions, start):
        console.print(f"learning check: format-only start under '{condition.instruction}', P(call) "
                      + ", ".join(f"{c} {p:.2f}" for c, p in shares.items()))
    start_state = copy.deepcopy(model.state_dict())
    examples = [e for index in range(len(spec.conditions)) for e in check_examples(spec, environment, task_ids, index)]
    learning = _grpo(config, store, console, environment, examples, model, tokenizer, probes, "learning")
    controls = []
    for name in spec.controls if control else ():
        model.load_state_dict(start_state)
        controls.append(_grpo(config, store, console, environment, examples, model, tokenizer, probes, name))
    return CheckResult(spec=spec, task_ids=task_ids, candidate_rewards=rewards, start=start, learning=learning,
                       controls=controls)


def with_lora(model: Any, config: OrchestraGRPOConfig) -> Any:
    """The model with the config's LoRA adapters (`lora`, peft's LoraConfig fields), trainable alone; the
    model itself without one. A target module the model lacks is one line naming it and what it has."""
    if not config.lora:
        return model
    from peft import get_peft_model

    from trainer.models import lora_config

    return get_peft_model(model, lora_config(model, config.lora))


def training_probe(config: OrchestraGRPOConfig, environment: TrainingEnvironment, tokenizer: Any) -> CallProbe:
    """The probe a training run of a config with a `learning_check` section logs (`probe/best_call`): the
    first condition's best call on the first round prompts of its tasks, as training shows them (the whole
    catalog at the check's prices, under the condition's instruction), so the Training page plots how GRPO
    moves the one choice whose best answer is known."""
    spec = check_spec(config)
    task_ids, _ = choose_tasks(spec, config, environment)
    return condition_probes(spec, environment, tokenizer, task_ids, config.temperature, whole_catalog=True)[0]


def check_run_id(config: OrchestraGRPOConfig, label: str) -> str:
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{config.run_name or 'check'}-{label}-{digest}"


def _grpo(config: OrchestraGRPOConfig, store: Store, console: Console, environment: TrainingEnvironment,
          examples: list[Example], model: Any, tokenizer: Any, probes: dict[int, CallProbe], label: str) -> CheckRun:
    """One GRPO run of the check from the model as it is: `learning`, or one of `CONTROLS`."""
    from datasets import Dataset

    from trainer.callbacks import MetricsCallback, quiet_trainer

    run = CheckRun(label=label, run_id=check_run_id(config, label))
    store.write_run(RunRecord(
        run_id=run.run_id, kind="train", name=f"{config.run_name or 'check'}-{label}",
        benchmark=environment.source.benchmark, orchestrator=f"hf:{config.output_dir}",
        config_json=json.dumps({**config.to_dict(), "learning_check_run": label}, default=str),
        toolkit_json=environment.toolkit.model_dump_json(), pricing=examples[0].pricing, git_sha=git_sha(),
        started_at=utcnow()))
    metrics = MetricsCallback(store, run.run_id, console, config.max_steps)
    reader = ProbeCallback(probes, store, run.run_id)
    run.curves = reader.readings
    trainer = ControlTrainer(model=model, args=config, environment=environment, store=store, run_id=run.run_id,
                             processing_class=tokenizer, train_dataset=Dataset.from_list([e.row() for e in examples]),
                             callbacks=[reader, metrics])
    trainer.check_mode = label
    metrics.trainer = reader.trainer = trainer
    quiet_trainer(trainer)
    status: RunStatus = "failed"
    try:
        trainer.train()
        status = "finished"
    finally:
        store.finish_run(run.run_id, status)
    return run


def control_rows(rows: list[RowFeatures], mode: str) -> list[RowFeatures]:
    """What a control changes before scoring: `shuffled-instructions` gives every row the P of the next
    distinct P of the batch (a derangement when there are two or more), so each group is rewarded under
    another instruction's P; every other mode keeps the rows."""
    if mode != "shuffled-instructions":
        return rows
    kinds = list(dict.fromkeys(row.preference for row in rows))
    shifted = {p: kinds[(i + 1) % len(kinds)] for i, p in enumerate(kinds)}
    return [dataclasses.replace(row, preference=shifted[row.preference]) for row in rows]


def control_scores(scores: GroupScores, mode: str, seed: int) -> GroupScores:
    """What a control changes after scoring: `sign-flip` negates every advantage; `shuffled-advantages`
    permutes the advantages among the rows that carry one (the same values, on other rollouts); every
    other mode keeps them."""
    if mode == "sign-flip":
        return dataclasses.replace(scores, advantages=-scores.advantages)
    if mode == "shuffled-advantages":
        kept = np.flatnonzero(scores.keep)
        advantages = scores.advantages.copy()
        advantages[kept] = scores.advantages[np.random.default_rng(seed).permutation(kept)]
        return dataclasses.replace(scores, advantages=advantages)
    return scores


class ControlTrainer(OrchestraGRPOTrainer):
    """The check's trainer: `check_mode` `learning` trains as GRPO does; each of `CONTROLS` breaks one link
    between the reward and the update (`control_rows`, `control_scores`), so a trainer that learns only
    through that link must fail it."""

    check_mode = "learning"

    def lab_reward(self, prompts: list[Any], completions: list[Any], lab_features: list[RowFeatures],
                   **kwargs: Any) -> list[float]:
        rewards = super().lab_reward(prompts, completions, control_rows(list(lab_features), self.check_mode),
                                     **kwargs)
        assert self._scores is not None, "the lab reward function did not score the batch"
        self._scores = control_scores(self._scores, self.check_mode, self.state.global_step)
        return rewards


def print_check(result: CheckResult, console: Console) -> None:
    spec = result.spec
    runs = [result.learning, *result.controls]
    for index, condition in enumerate(spec.conditions):
        table = Table(title=f"Learning check: P({condition.best}) on {len(result.task_ids)} fixed first-round "
                            f"prompts under '{condition.instruction}'")
        for column in ("run", "step 0", "last step", "steps", f"reaches {spec.threshold:g}?"):
            table.add_column(column)
        for run in runs:
            curve = run.curves[index]
            table.add_row(run.label if run.label == "learning" else f"control: {run.label}", f"{curve[0][1]:.3f}",
                          f"{curve[-1][1]:.3f}", str(curve[-1][0]), "yes" if curve[-1][1] >= spec.threshold else "no")
        console.print(table)
    if spec.conditional and len({c.best for c in spec.conditions}) == len(spec.conditions):
        table = Table(title="Does it read the instruction? (0: the same choice whatever the instruction; 1: each "
                            "instruction's best call)")
        for column in ("run", "step 0", "last step"):
            table.add_column(column)
        for run in runs:
            table.add_row(run.label if run.label == "learning" else f"control: {run.label}",
                          f"{instruction_reading(run, 0):+.3f}", f"{instruction_reading(run, -1):+.3f}")
        console.print(table)


def instruction_reading(run: CheckRun, at: int) -> float:
    """(Each condition's probability of its own best call, summed, - 1) / (conditions - 1), at reading `at`.
    With a different best call per condition, a policy that makes the same choice under every instruction
    puts at most its whole mass (about 1) on those calls together, whatever it prefers, so it scores about
    0 or less; one that makes each instruction's best call scores 1: how far GRPO taught it to read."""
    return (sum(curve[at][1] for curve in run.curves.values()) - 1) / (len(run.curves) - 1)
