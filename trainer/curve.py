"""The learning curve's evaluations: the live policy on one fixed set of tasks x instructions, at step 0
(before the first update), every `lab_eval_steps` and after the last step.

What stays fixed, so that two points differ only by the policy:
- the tasks: the first `lab_eval_limit` of the eval split of the config's families, in the split's order;
- the instructions: `lab_eval_instructions`, one eval run each (default: the training pairs of
  `lab/data/preferences.yaml` whose tools the toolkit has, in their training wording);
- the sampling: the config's `temperature` and `top_p`, `lab_eval_samples` rollouts per task, and sample k
  of a task seeded alike at every step (`lab.rollout.policy.sampling_seed`), so the same policy would
  draw the same rollouts;
- the scale of U (`lab.report.metrics.curve`): c_ref and l_ref from the step-0 evaluation over every
  instruction, written into the train run's `config_json` (`lab.report.curve.SCALE_KEY`) once it is done.

Each (step, instruction) is a `kind='eval'` run linked to the train run (`train_run_id`, `train_step`), its
id a hash of both: a resumed training finishes an evaluation it interrupted and repeats none it finished,
and step 0 runs only when training starts from step 0. `lab.report.curve.learning_curve_df` reads the curve.

Bad input (an instruction that cannot be read, more tasks than the split has) is refused by `eval_set`,
one line, before any model, store or folder is touched: `orchestra train` calls it before opening the store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.preference import HELD_OUT, PreferencePair, preference_pairs, task_preferences
from lab.report.curve import SCALE_KEY, curve_points
from lab.report.metrics.curve import fixed_scale
from lab.store import Store, queries
from lab.toolkit import load_toolkit
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.examples import training_pairs


@dataclass(frozen=True)
class CurveInstruction:
    """One instruction of the curve: `label` as the config lists it (the curve's name for it), and what
    `orchestra eval` takes for it: `preference` (a P string or `held-out`) and `wording` (the text every
    task is shown, for a pair's wording; None: the harness words P as `--preference` does)."""

    label: str
    preference: str
    wording: str | None


@dataclass(frozen=True)
class EvalSet:
    """The fixed tasks and instructions every point of one training run's curve evaluates."""

    task_ids: tuple[str, ...]
    instructions: tuple[CurveInstruction, ...]


def p_string(weights: dict[str, float]) -> str:
    """A pair's weights as the P string `--preference` parses: `{outcome: 1.0, compute: 0.5}` ->
    `outcome=1,compute=0.5`."""
    return ",".join(f"{name}={value:g}" for name, value in weights.items())


def _from_pair(pair: PreferencePair) -> CurveInstruction:
    return CurveInstruction(label=pair.instruction, preference=p_string(pair.weights), wording=pair.instruction)


def curve_instructions(config: OrchestraGRPOConfig) -> list[CurveInstruction]:
    """`lab_eval_instructions` read against the config's toolkit. Each entry is the exact wording of a
    pair in `lab/data/preferences.yaml` (train or eval: shown as written, scored with its P), a P string
    (`outcome=1,compute=1`: worded as `orchestra eval --preference` words it) or `held-out` (each task its
    held-out pair). Anything else, a P naming a tool the toolkit lacks, or an entry listed twice is one
    line of `LabInputError`."""
    toolkit = load_toolkit(config.toolkit)
    features, models = toolkit.feature_names, toolkit.feature_models()
    if not config.lab_eval_instructions:
        return [_from_pair(pair) for pair in training_pairs(features, models, config.training_instructions)]
    pairs = {pair.instruction: pair for pair in [*preference_pairs("train"), *preference_pairs("eval")]}
    chosen: list[CurveInstruction] = []
    for entry in config.lab_eval_instructions:
        text = entry.strip()
        if text in {c.label for c in chosen}:
            raise LabInputError(f"lab_eval_instructions: {text!r} is listed twice")
        if text in pairs:
            instruction = _from_pair(pairs[text])
        elif text == HELD_OUT or "=" in text:
            instruction = CurveInstruction(label=text, preference=text, wording=None)
        else:
            raise LabInputError(f"lab_eval_instructions: {text!r} is neither a P string (e.g. outcome=1,compute=1), "
                                "`held-out`, nor the wording of a pair in lab/data/preferences.yaml")
        try:  # what the harness will do with it, so it fails here and not at the first evaluation
            task_preferences(instruction.preference, features, instruction.wording, models)
        except LabInputError as exc:
            raise LabInputError(f"lab_eval_instructions: {text!r}: {exc}") from None
        chosen.append(instruction)
    return chosen


def eval_set(config: OrchestraGRPOConfig) -> EvalSet:
    """The curve's tasks and instructions, checked: every instruction readable, at least one sample, no
    more tasks than the eval split has (of the config's families), samples that can differ.
    `lab_eval_limit: 0` turns the evaluations off (e.g. under ZeRO-3, see `trainer.callbacks.EvalCallback`)."""
    if config.lab_eval_limit < 0 or config.lab_eval_samples < 1:
        raise LabInputError(f"lab_eval_limit {config.lab_eval_limit}, lab_eval_samples {config.lab_eval_samples}: "
                            "the periodic evaluation takes 0 or more tasks (0: none) and at least one sample")
    if config.lab_eval_limit == 0:
        return EvalSet(task_ids=(), instructions=())
    if config.lab_eval_samples > 1 and config.temperature == 0:
        raise LabInputError(f"lab_eval_samples {config.lab_eval_samples} with temperature 0: greedy samples of a "
                            "task are identical; set temperature > 0 or lab_eval_samples: 1")
    instructions = curve_instructions(config)
    tasks = list(TrainingEnvironment(config, split=config.eval_split).tasks)
    if config.lab_eval_limit > len(tasks):
        families = ", ".join(config.families) if config.families else "every family"
        raise LabInputError(f"lab_eval_limit {config.lab_eval_limit}: the {config.eval_split!r} split of "
                            f"{config.benchmark} ({families}) has {len(tasks)} tasks; use at most {len(tasks)}")
    return EvalSet(task_ids=tuple(tasks[: config.lab_eval_limit]), instructions=tuple(instructions))


class CurveEvaluator:
    """`evaluator(model, step)`: one point of the curve (an eval run per instruction) of the live model,
    returning the run ids; after the step-0 point it stores the run's scale."""

    def __init__(self, config: OrchestraGRPOConfig, store: Store, console: Console, tokenizer: Any, run_id: str,
                 evals: EvalSet, stamp: str = "", ranks: Any = None) -> None:
        self.config, self.store, self.console, self.tokenizer = config, store, console, tokenizer
        self.run_id, self.evals = run_id, evals
        #: accelerate's state of a multi-rank launch: each rank evaluates its shard (`--shard i/N`) of every
        #: point into the same runs, so no task is done twice; None or one process: all of it here
        self.ranks = ranks if ranks is not None and ranks.num_processes > 1 else None
        #: the training's fingerprint, in every point's orchestrator name (and so its run id)
        self.stamp = stamp
        self.run_ids: list[str] = []

    def __call__(self, model: Any, step: int) -> list[str]:
        from lab.eval.harness import run_eval
        from lab.policies.hf_policy import HFPolicy

        if not self.evals.task_ids:  # lab_eval_limit: 0, no curve
            return []
        config, name = self.config, self.orchestrator(step)
        was_training = model.training
        model.eval()
        ids: list[str] = []
        try:
            policy = HFPolicy.live(model, self.tokenizer, name=name, max_new_tokens=config.turn_max_new_tokens,
                                   latency_per_token_s=config.orchestrator_latency_per_token_s,
                                   temperature=config.temperature, top_p=config.top_p)
            labels: dict[str, str] = {}  # run id -> the instruction it evaluated
            for instruction in self.evals.instructions:
                summaries = run_eval(self.eval_config(step, instruction), self.store, self.console, policy=policy)
                labels.update({s.run_id: instruction.label for s in summaries})
        finally:
            model.train(was_training)
        ids = list(labels)
        self.run_ids.extend(ids)
        if self.ranks is not None:
            self.ranks.wait_for_everyone()  # every shard of the point is written
            if not self.ranks.is_main_process:
                return ids
        rows = queries.trajectories_df(self.store, ids)
        for run_id, label in labels.items():  # what every shard wrote, read back
            mine = rows[rows.run_id == run_id]
            self.console.print(f"eval at step {step}, {label!r}: accuracy {mine.outcome.mean() if len(mine) else 0:.3f}"
                               f", ${mine.cost_usd.mean() if len(mine) else 0:.4f} per rollout ({run_id})",
                               highlight=False)
        store_scale(self.store, self.run_id)
        return ids

    def orchestrator(self, step: int) -> str:
        """`hf:<train run>[#<training fingerprint>]@step<N>`: the live policy at one step of one training."""
        return f"hf:{self.run_id}{'#' + self.stamp if self.stamp else ''}@step{step}"

    def eval_config(self, step: int, instruction: CurveInstruction) -> EvalConfig:
        """The evaluation of one point: the same tasks, sampling and seed at every step; only the step
        (and so the weights evaluated) and the instruction change the run id."""
        config, tasks = self.config, list(self.evals.task_ids)
        return EvalConfig.build(
            benchmark=config.benchmark, split=config.eval_split, orchestrator=self.orchestrator(step),
            toolkit=config.toolkit, tasks=tasks, preferences=[instruction.preference],
            preference_instruction=instruction.wording, max_turns=[config.max_turns], samples=config.lab_eval_samples,
            temperature=config.temperature, top_p=config.top_p, **config.eval_settings(), seed=config.seed,
            run_name=f"{self.run_id}-eval", train_run_id=self.run_id, train_step=step,
            concurrency=len(tasks) * config.lab_eval_samples,  # one batch: every rollout's turn decoded together
            shard=f"{self.ranks.process_index + 1}/{self.ranks.num_processes}" if self.ranks is not None else None,
        )


def store_scale(store: Store, run_id: str) -> None:
    """Fix the curve's scale once: c_ref and l_ref from the finished step-0 evaluation (every instruction),
    into the train run's `config_json`. A run that has it keeps it; a resumed run, whose record was
    rewritten, gets the same numbers back from the same step-0 runs; before step 0 is done, nothing."""
    record = queries.run(store, run_id)
    config = json.loads(record.config_json or "{}")
    if config.get(SCALE_KEY):
        return
    points = curve_points(store, run_id)
    step0 = list(points.run_id[points.step == 0])
    if not step0:
        return
    scale = fixed_scale(queries.trajectories_df(store, step0), basis="step 0")
    config[SCALE_KEY] = scale.as_dict()
    store.write_run(record.model_copy(update={"config_json": json.dumps(config, default=str)}))
