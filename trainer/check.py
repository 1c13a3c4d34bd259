"""`orchestra train check`: does GRPO, with this model and config, move the policy toward higher reward?

A user about to spend GPU hours needs to know that the trainer, on a problem it can solve, provably
learns; a sign, mask or normaliser bug would otherwise show only as a run that never improves. The
check builds such a problem from the config's `learning_check` section and runs the real trainer on it:

1. **A problem whose best call is known.** Every candidate first call (`answer:answer-1`, ...) is run
   once on each training task of the config's families under the check's instruction; tasks where
   every candidate solves are kept, so the calls differ only in what the instruction rewards (cost,
   under "keep the bill low"). The Eq. 2 reward of the candidates' rollouts, grouped per task, must
   rank the named best call first, else the check stops: it would test nothing.
2. **A start that does not know it.** The config's model is fitted to write each candidate after every
   task's first round prompt equally often (a format-only warm start: the format, no preference), so
   the probability of the best call starts near 1/k.
3. **GRPO** (`OrchestraGRPOTrainer`, the config's own settings) on those tasks under that instruction,
   reading the probability of the best call on the fixed first round prompts after every step
   (`trainer.probe`, teacher-forced: no sampling noise). It passes when the last reading reaches the
   threshold (0.9 by default).
4. **The control**: the same run from the same start with the advantage's sign flipped. A trainer that
   learns must fail it; if the control passes too, the reward does not reach the update.

Both runs are logged as `kind='train'` runs (`probe/best_call` in `train_metrics` per step, step 0 the
start), so the dashboard's Training page shows the two curves.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any, cast

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
from trainer.probe import CallProbe, ProbeCallback, call_text, first_round_prompt, parse_call
from trainer.scoring import RowFeatures

#: Defaults of the `learning_check` keys a config may leave out.
CHECK_DEFAULTS: dict[str, Any] = {"tasks": 16, "threshold": 0.9, "pricing": "default", "fit_learning_rate": 3e-3,
                                  "fit_steps": 400}


@dataclass(frozen=True)
class CheckSpec:
    """The check's problem: candidate first calls under one instruction, and the best of them."""

    preference: str
    instruction: str
    calls: tuple[str, ...]
    best: str
    tasks: int
    threshold: float
    pricing: str
    fit_learning_rate: float
    fit_steps: int


@dataclass
class CheckRun:
    """One GRPO run of the check: the probe's reading per step (step 0: the start)."""

    label: str
    run_id: str
    curve: list[tuple[int, float]] = field(default_factory=list)

    @property
    def final(self) -> float:
        return self.curve[-1][1]


@dataclass
class CheckResult:
    spec: CheckSpec
    task_ids: list[str]
    candidate_rewards: dict[str, float]   # mean Eq. 2 reward of each candidate's probe rollouts
    start: dict[str, float]               # each candidate's probability at the start
    learning: CheckRun
    control: CheckRun | None

    @property
    def passed(self) -> bool:
        return self.learning.final >= self.spec.threshold

    @property
    def control_failed(self) -> bool:
        return self.control is None or self.control.final < self.spec.threshold


def check_spec(config: OrchestraGRPOConfig) -> CheckSpec:
    """The config's `learning_check`, checked against its toolkit: one line naming what is wrong."""
    options = dict(config.learning_check or {})
    if not options:
        raise LabInputError("learning_check: the config has none; see configs/train/check.yaml for one")
    missing = [k for k in ("preference", "instruction", "calls", "best") if k not in options]
    if missing:
        raise LabInputError(f"learning_check.{missing[0]}: required (see configs/train/check.yaml)")
    spec = CheckSpec(**{**CHECK_DEFAULTS, **options, "calls": tuple(options["calls"])})
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
    if spec.best not in spec.calls:
        raise LabInputError(f"learning_check.best: '{spec.best}' is not one of learning_check.calls "
                            f"({', '.join(spec.calls)})")
    if not 0 < spec.threshold <= 1:
        raise LabInputError(f"learning_check.threshold: {spec.threshold} must be in (0, 1]")
    if spec.tasks < 1:
        raise LabInputError(f"learning_check.tasks: {spec.tasks} must be at least 1")
    if config.protocol != "rounds":
        raise LabInputError("learning_check: reads the first round's call, so the config needs protocol: rounds")
    Preference.parse(spec.preference, toolkit.feature_names, toolkit.feature_models())
    return spec


def check_examples(spec: CheckSpec, environment: TrainingEnvironment, task_ids: list[str]) -> list[Example]:
    """One example per task: the candidate calls' features only (so the catalog offers just the choice the
    check is about, and its prompts stay short), the check's prices, instruction and P."""
    toolkit = environment.toolkit
    bound = Preference.parse(spec.preference, toolkit.feature_names, toolkit.feature_models()).as_dict()
    names = [*toolkit.feature_names, "outcome", "compute", "latency"]
    offered = {arguments.get("model") or tool for tool, arguments in map(parse_call, spec.calls)}
    return [Example(example_id=f"{task_id}#check", task_id=task_id, question=environment.task(task_id).question,
                    features=tuple(f for f in toolkit.feature_names if f in offered), pricing=spec.pricing,
                    instruction=spec.instruction, preference=tuple((n, float(bound.get(n, 0.0))) for n in names))
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
                 ) -> tuple[list[str], dict[str, float]]:
    """The first `spec.tasks` training tasks every candidate solves every time, and each candidate's mean
    Eq. 2 reward there (a task's candidate rollouts form one group, as a GRPO group would)."""
    examples = check_examples(spec, environment, list(environment.tasks))
    per_task = len(spec.calls) * PROBE_SAMPLES

    async def run_task(example: Example) -> list[Any]:
        task = environment.task(example.task_id)
        jobs = [run_rollout(one_call_policy(call), environment.tools_for(example), RolloutRequest(
                    run_id="learning-check-probe", task=task, sample_idx=sample, group_id=example.example_id,
                    preference=dict(example.preference), preference_instruction=spec.instruction,
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
    rollouts = [r.trajectory for _, results in kept for r in results]
    frame = FeatureFrame.from_counts(
        [json.loads(t.tool_counts_json) for t in rollouts], [t.outcome for t in rollouts],
        [t.cost_usd for t in rollouts], [t.latency_s for t in rollouts], environment.features)
    frame = frame.take(list(range(len(rollouts))), [str(i // per_task) for i in range(len(rollouts))])
    rewards = frame.rewards([dict(kept[0][0].preference)] * len(rollouts)).reshape(len(kept), len(spec.calls), -1)
    means = {call: float(rewards[:, j].mean()) for j, call in enumerate(spec.calls)}
    top = max(means, key=lambda c: means[c])
    if top != spec.best:
        raise LabInputError(f"learning_check.best: under '{spec.instruction}' the call with the highest mean reward "
                            f"is '{top}' ({means[top]:.3f}), not '{spec.best}' ({means[spec.best]:.3f})")
    return [example.task_id for example, _ in kept], means


async def gather_all(jobs: list[Any]) -> list[Any]:
    """Run coroutines concurrently in one event loop (`asyncio.run` takes one coroutine)."""
    return list(await asyncio.gather(*jobs))


def fit_format_start(model: Any, probe: CallProbe, spec: CheckSpec, seed: int) -> None:
    """Fit `model` in place to write every candidate after every probe prompt equally often: the format of
    the calls, and no preference between them (cross-entropy on the call tokens only; its optimum gives
    each candidate 1/k). Stops once the candidates hold at least 95% of the mass, split within a factor
    1.5 of uniform."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=spec.fit_learning_rate)
    k = len(probe.calls)
    device = next(model.parameters()).device
    for step in range(1, spec.fit_steps + 1):
        model.train()
        # every candidate after the same prompts: each step's gradient favours none of them
        batch = [(prompt, ids) for prompt in rng.sample(probe.prompts, min(4, len(probe.prompts)))
                 for ids in probe.calls.values()]
        width = max(len(p) + len(c) for p, c in batch)
        ids = torch.zeros((len(batch), width), dtype=torch.long)
        labels = torch.full((len(batch), width), -100, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, (prompt, completion) in enumerate(batch):
            ids[i, : len(prompt) + len(completion)] = torch.tensor(prompt + completion)
            labels[i, len(prompt): len(prompt) + len(completion)] = torch.tensor(completion)
            mask[i, : len(prompt) + len(completion)] = 1
        loss = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=labels.to(device)).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % 20 == 0:
            shares = probe.probabilities(model)
            if sum(shares.values()) >= 0.97 and all(1 / (1.25 * k) <= p <= 1.25 / k for p in shares.values()):
                model.eval()
                return
    raise LabInputError(f"learning_check: the format-only start did not fit in {spec.fit_steps} steps "
                        f"(candidate probabilities {probe.probabilities(model)}); raise learning_check.fit_steps")


def run_check(config: OrchestraGRPOConfig, store: Store, console: Console, control: bool = True) -> CheckResult:
    """The learning check (module docstring); `control`: also run the sign-flipped twin."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.models import resolve_model

    spec = check_spec(config)
    environment = TrainingEnvironment(config)
    task_ids, rewards = choose_tasks(spec, config, environment)
    console.print(f"learning check: {len(task_ids)} tasks every candidate solves; mean Eq. 2 reward under "
                  f"'{spec.instruction}': " + ", ".join(f"{c} {r:.2f}" for c, r in rewards.items()))
    source = resolve_model(config.model, config.tiny_model, config.seed)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source)
    specs = [tool.spec for tool in environment.tools_for(check_examples(spec, environment, task_ids[:1])[0]).values()]
    prompts = [first_round_prompt(tokenizer, environment.task(t).question, spec.instruction, specs) for t in task_ids]
    probe = CallProbe.build(tokenizer, prompts, list(spec.calls), spec.best, config.temperature)
    fit_format_start(model, probe, spec, config.seed)
    start = probe.probabilities(model)
    console.print("learning check: format-only start, P(call) " + ", ".join(f"{c} {p:.2f}" for c, p in start.items()))
    start_state = copy.deepcopy(model.state_dict())
    examples = check_examples(spec, environment, task_ids)
    learning = _grpo(config, store, console, environment, examples, model, tokenizer, probe, "learning", flip=False)
    control_run = None
    if control:
        model.load_state_dict(start_state)
        control_run = _grpo(config, store, console, environment, examples, model, tokenizer, probe, "control",
                            flip=True)
    return CheckResult(spec=spec, task_ids=task_ids, candidate_rewards=rewards, start=start, learning=learning,
                       control=control_run)


def training_probe(config: OrchestraGRPOConfig, environment: TrainingEnvironment, tokenizer: Any) -> CallProbe:
    """The probe a training run of a config with a `learning_check` section logs (`probe/best_call`): the
    check's best call on the first round prompts of its tasks, as training shows them (the whole catalog
    at the check's prices, under the check's instruction), so the Training page plots how GRPO moves the
    one choice whose best answer is known."""
    spec = check_spec(config)
    task_ids, _ = choose_tasks(spec, config, environment)
    example = dataclasses.replace(check_examples(spec, environment, task_ids[:1])[0],
                                  features=tuple(environment.features))
    specs = [tool.spec for tool in environment.tools_for(example).values()]
    prompts = [first_round_prompt(tokenizer, environment.task(t).question, spec.instruction, specs) for t in task_ids]
    return CallProbe.build(tokenizer, prompts, list(spec.calls), spec.best, config.temperature)


def check_run_id(config: OrchestraGRPOConfig, label: str) -> str:
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{config.run_name or 'check'}-{label}-{digest}"


def _grpo(config: OrchestraGRPOConfig, store: Store, console: Console, environment: TrainingEnvironment,
          examples: list[Example], model: Any, tokenizer: Any, probe: CallProbe, label: str, flip: bool) -> CheckRun:
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
    reader = ProbeCallback(probe, store, run.run_id)
    run.curve = reader.readings
    trainer_class = SignFlippedTrainer if flip else OrchestraGRPOTrainer
    trainer = trainer_class(model=model, args=config, environment=environment, store=store, run_id=run.run_id,
                            processing_class=tokenizer, train_dataset=Dataset.from_list([e.row() for e in examples]),
                            callbacks=[reader, metrics])
    metrics.trainer = reader.trainer = trainer
    quiet_trainer(trainer)
    status: RunStatus = "failed"
    try:
        trainer.train()
        status = "finished"
    finally:
        store.finish_run(run.run_id, status)
    return run


class SignFlippedTrainer(OrchestraGRPOTrainer):
    """The control: every advantage negated after scoring, so the update pushes away from the reward."""

    def lab_reward(self, prompts: list[Any], completions: list[Any], lab_features: list[RowFeatures],
                   **kwargs: Any) -> list[float]:
        rewards = super().lab_reward(prompts, completions, lab_features, **kwargs)
        assert self._scores is not None, "the lab reward function did not score the batch"
        self._scores = dataclasses.replace(self._scores, advantages=-self._scores.advantages)
        return rewards


def print_check(result: CheckResult, console: Console) -> None:
    spec = result.spec
    table = Table(title=f"Learning check: P({spec.best}) on {len(result.task_ids)} fixed first-round prompts "
                        f"under '{spec.instruction}'")
    for column in ("run", "step 0", "last step", "steps", f"reaches {spec.threshold:g}?"):
        table.add_column(column)
    for run in (result.learning, result.control):
        if run is None:
            continue
        table.add_row(run.label + (" (advantage sign flipped)" if run.label == "control" else ""),
                      f"{run.curve[0][1]:.3f}", f"{run.final:.3f}", str(run.curve[-1][0]),
                      "yes" if run.final >= spec.threshold else "no")
    console.print(table)
