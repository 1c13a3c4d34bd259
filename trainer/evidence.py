"""`orchestra train evidence`: did GRPO teach the model to follow instructions, and improve on its start?

    orchestra train evidence --config configs/train/cpu-tiny.yaml                   # the defaults: sized for power
    orchestra train evidence --config configs/train/cpu-tiny.yaml --tasks 40 --samples 2   # a quick look

The start (`output_dir/warm-start` when the config has a `warm_start`, else the base model GRPO started
from) and the trained model (`output_dir`) answer the same eval-split tasks with the same sample seeds,
sampled as GRPO samples them (the config's `temperature` and `top_p`; sample k of a task draws the same
random numbers under both models, `lab.rollout.policy.sampling_seed`), under each training instruction
(`trainer.curve.curve_instructions`: the training pairs the toolkit can follow, in their training
wording) and under the held-out pairs. Per instruction, `lab.report.metrics.paired.paired_deltas` gives
trained - start of accuracy, cost (as a ratio), latency and the absolute utility U, each with a paired
bootstrap 95% CI over tasks; U is on one scale (c_ref, l_ref) fixed from the start model's runs over
every instruction.

The headline is instruction following (`lab.report.metrics.contrast`): per model, the contrast between
two instructions that weigh different things, the paired log ratio of what it spends under accuracy-only
over what it spends under cost-saving (and of latency under accuracy-only over speed), on the same tasks
and sample seeds, in the training wording and in held-out wordings (both models run under those too),
and, as in the paper's unseen-configuration tables, under prices and a tool subset training never drew
(`trainer.unseen`: the held-out provider's table; a subset no training example was offered).
A model that ignores the instruction has contrast 0, and one that got cheaper under every instruction has
its start's; the claim of preference-aware RL is trained - start > 0 (`contrast_checks`). U charges cost
against a fixed reference, so it rises for any cheaper policy: it stays beside the contrast, not above it.

Then the behaviour checks: U pooled over the training instructions is higher than the start's (its CI
above 0); under an accuracy-only instruction the trained model's accuracy is not lower than the start's
(its CI's low end above -0.05); under a cost-saving instruction it is at least 20% cheaper than its start
for at most 3 points of accuracy, and spends at least 20% less than under accuracy-only (training and
held-out wordings; the start's saving beside it, so a saving GRPO lost shows as the start's); under a
speed instruction it is faster than under accuracy-only.

Why sampled, not greedy: GRPO moves probabilities, and where the start is near indifferent between two
slots a shift of a few points flips every greedy choice, so a greedy score swings far more than the
policy moved (a config with `temperature: 0` and `--samples 1` measures greedy decoding if wanted).

Power: `DEFAULT_SAMPLES` rollouts per task on every task of the split, sized from a pilot so the 95%
CI half-widths reach `TARGETS` (docs/training.md, "Evidence with power"); the output prints the
half-widths reached and, where a target was missed, the tasks x samples this run's own variance says it
would need. A subset of the instructions (`instructions=`) keeps every instruction's tasks and samples,
so it reaches the same half-widths in less time.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.preference import HELD_OUT
from lab.report.metrics.contrast import CONTRAST_COLUMNS, InstructionRuns, instruction_contrast, tool_share_contrast
from lab.report.metrics.curve import CurveScale, fixed_scale
from lab.report.metrics.paired import (
    instruction_kind,
    paired_deltas,
    paired_differences,
    paired_saving,
    pooled_delta,
    power_table,
    verdict,
)
from lab.report.metrics.pull import PULL_COLUMNS, update_pull
from lab.store import Store, queries
from trainer.config import OrchestraGRPOConfig
from trainer.curve import CurveInstruction, curve_instructions
from trainer.environment import TrainingEnvironment
from trainer.models import resolve_model
from trainer.sft import warm_start_dir
from trainer.unseen import UNSEEN_NAMES, UnseenSetting, unseen_settings

#: The 95% CI half-widths the defaults are sized for: accuracy difference (a share) and cost ratio (0.10 = 10%).
TARGETS = {"accuracy": 0.05, "cost": 0.10}
#: Rollouts per task and run by default, on every task of the split: measured (docs/training.md).
DEFAULT_SAMPLES = 4
#: The held-out wordings of the cost-saving and accuracy-only preferences (P strings the harness words).
COST_SAVING = "outcome=1,compute=0.8"
ACCURACY_ONLY = "outcome=1"
#: The saving a cost-saving instruction must buy over accuracy-only, and the trained model over its start.
SAVING_TARGET = 0.20
#: The most accuracy (a share) the trained model may give up for that saving against its start.
ACCURACY_GIVEN_UP = 0.03
#: The two runs of the trained model in the held-out wordings, as `instructions=` names them.
HELD_OUT_WORDINGS = "held-out-wordings"
#: The run labels of those two runs (per model), and the P string each is worded from.
HELD_OUT_ACCURACY_ONLY, HELD_OUT_COST_SAVING = "held-out wording, accuracy-only", "held-out wording, cost-saving"
HELD_OUT_RUNS = {HELD_OUT_COST_SAVING: COST_SAVING, HELD_OUT_ACCURACY_ONLY: ACCURACY_ONLY}
#: Columns of `Evidence.checks`.
CHECK_COLUMNS = ["check", "model", "value", "ci_low", "ci_high", "verdict", "detail"]
#: The start decoded at these temperatures is a fair baseline (no compute beyond the start's): sampled at
#: the training temperature the start may be dominated by itself decoded more greedily (0: greedy, one sample).
START_TEMPERATURES = (0.0, 0.5, 0.7)
#: Fixed routes, also fair baselines: they ignore the instruction, so their contrast is 0 up to noise.
FIXED_ROUTES = {"cascade": "scripted:cheapest-first", "strongest": "scripted:always-strongest"}
#: Columns of `Evidence.baselines`: a fair baseline's contrast beside the trained model's, per pair and wording.
BASELINE_COLUMNS = ["name", "pair", "wording", "measure", "contrast", "contrast_low", "contrast_high", "trained",
                    "trained_low", "trained_high", "delta", "ci_low", "ci_high", "n_tasks", "samples"]
#: The world's task families, named by the kind of task the paper's benchmark of that family holds.
FAMILY_NAMES = {"frames": "multi-hop", "hle": "computational", "tau2": "tau2-like"}
#: Columns of `Evidence.families`: per family, model and instruction, what its rollouts did.
FAMILY_COLUMNS = ["family", "model", "instruction", "tasks", "rollouts", "accuracy", "rounds", "cost_usd",
                  "tool_shares"]
#: Columns of `Evidence.contrasts`: the pair of instructions, the wording they were given in, then
#: `lab.report.metrics.contrast.CONTRAST_COLUMNS`.
EVIDENCE_CONTRAST_COLUMNS = ["pair", "wording", *CONTRAST_COLUMNS]


@dataclass(frozen=True)
class Baseline:
    """A fair baseline the trained model's instruction following is compared with: an orchestrator (the
    start at another temperature, a fixed route, or a model trained with the same rollouts, such as
    rejection-sampling fine-tuning), decoded at `temperature`, `samples` rollouts per task."""

    name: str
    orchestrator: str
    temperature: float
    samples: int


def fair_baselines(start: Path, temperature: float, samples: int,
                   models: dict[str, Path] | None = None) -> tuple[Baseline, ...]:
    """The start at `START_TEMPERATURES` (greedy runs one sample), the `FIXED_ROUTES`, and `models` (name ->
    a model directory, e.g. rejection-sampling fine-tuning from the same number of rollouts) decoded as the
    trained model is."""
    found = [Baseline("start, greedy" if t == 0 else f"start, T={t:g}", f"hf:{start}", t, 1 if t == 0 else samples)
             for t in START_TEMPERATURES]
    found += [Baseline(name, orchestrator, temperature, samples) for name, orchestrator in FIXED_ROUTES.items()]
    found += [Baseline(name, f"hf:{path}", temperature, samples) for name, path in (models or {}).items()]
    return tuple(found)


@dataclass(frozen=True)
class EvidencePlan:
    """What one evidence run compares, checked before any model runs."""

    start: Path                                   # the model GRPO started from
    trained: Path                                 # output_dir
    task_ids: tuple[str, ...]                     # the first `tasks` of the eval split
    samples: int                                  # rollouts per task and run
    instructions: tuple[CurveInstruction, ...]    # training instructions, then held-out
    held_out_wordings: bool                       # also both models under COST_SAVING / ACCURACY_ONLY
    split_tasks: int                              # tasks in the split: the most a projection may ask for
    split: str = "test"                           # validation for recipe choices, test for reported figures
    families: tuple[str, ...] = ()                # each task's family (world tasks), in task_ids order
    baselines: tuple[Baseline, ...] = ()          # fair baselines, run under the cost pairs of `contrast_pairs`
    unseen: tuple[UnseenSetting, ...] = ()        # prices and tool subsets training never drew (`trainer.unseen`)

    @property
    def runs(self) -> int:
        return 2 * len(self.instructions) + (4 if self.held_out_wordings else 0) + 4 * len(self.unseen)

    def first_of_kind(self, kind: str) -> str | None:
        """The label of the plan's first instruction of `kind` (`instruction_kind`: accuracy-only,
        cost-saving, speed), None without one."""
        return next((c.label for c in self.instructions if instruction_kind(_weights(c.preference)) == kind), None)

    def cost_labels(self) -> tuple[str, str] | None:
        """The accuracy-only and cost-saving instructions' labels, None when the plan lacks either: the
        pair every cost contrast is made between."""
        accuracy_only, cost_saving = self.first_of_kind("accuracy-only"), self.first_of_kind("cost-saving")
        return (accuracy_only, cost_saving) if accuracy_only and cost_saving else None


@dataclass
class Evidence:
    """The paired comparison, as frames (notebooks and the dashboard read them as they are)."""

    deltas: pd.DataFrame      # instruction + lab.report.metrics.paired.DELTA_COLUMNS + target, reached
    contrasts: pd.DataFrame   # EVIDENCE_CONTRAST_COLUMNS: instruction following, trained - start (the headline)
    tool_shares: pd.DataFrame  # pair, wording, tool_name + the contrast's columns: each tool's share, asking - baseline
    checks: pd.DataFrame      # CHECK_COLUMNS: the behaviour checks
    power: pd.DataFrame       # instruction + POWER_COLUMNS: half-widths by the formula, and the size a target needs
    scale: CurveScale         # U's c_ref and l_ref
    run_ids: dict[str, str]   # "<model> | <instruction>" -> run id
    start: str
    trained: str
    tasks: int
    samples: int
    temperature: float
    targets: dict[str, float] = field(default_factory=lambda: dict(TARGETS))
    seconds: float = 0.0
    split: str = "test"
    families: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FAMILY_COLUMNS))  # per task family
    baselines: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=BASELINE_COLUMNS))  # fair baselines
    pulls: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PULL_COLUMNS))  # the train run's updates

    def best_baseline(self, wording: str) -> Any:
        """`best_baseline` of this evidence's baselines under `wording`."""
        return best_baseline(self.baselines, wording)

    def target_lines(self) -> list[str]:
        """Per target: reached or not, said plainly, with the widest half-width and the size it needs."""
        lines = []
        for measure, target in self.targets.items():
            rows = self.deltas[self.deltas.measure == measure].dropna(subset=["half_width"])
            if rows.empty:
                lines.append(f"{measure}: no half-width (nothing to compare)")
                continue
            widest = rows.loc[rows.half_width.idxmax()]
            missed = rows[rows.half_width > target]
            shown = _half_width(measure, target)
            if missed.empty:
                lines.append(f"{measure}: target +-{shown} reached under all {len(rows)} instructions (widest "
                             f"+-{_half_width(measure, widest.half_width)}, {widest.instruction!r})")
                continue
            need = (self.power[(self.power.measure == measure) & self.power.instruction.isin(missed.instruction)]
                    if not self.power.empty else self.power)
            sized = need.dropna(subset=["needed_tasks"]) if not need.empty else need
            if need.empty:
                advice = "too few tasks to estimate the size it needs"
            elif len(sized) < len(need):
                advice = "no size within the split's tasks and 64 samples per task reaches it"
            else:
                worst = sized.sort_values(["needed_samples", "needed_tasks"]).iloc[-1]
                advice = (f"from this run's variance it needs about {int(worst.needed_tasks)} tasks x "
                          f"{int(worst.needed_samples)} samples")
            lines.append(f"{measure}: target +-{shown} NOT reached under {len(missed)} of {len(rows)} instructions "
                         f"(widest +-{_half_width(measure, widest.half_width)}, {widest.instruction!r}); {advice}")
        return lines

    def headline(self) -> list[str]:
        """The claim in a line per wording: trained - start of the cost contrast between cost-saving and
        accuracy-only, with its CI and whether it excludes 0."""
        rows = self.contrasts[self.contrasts.measure == "log cost_usd ratio"]
        lines = []
        for c in rows.itertuples():
            line = (f"Instruction following ({c.wording}): told to save money rather than only to be right, the "
                    f"trained model cuts its spend by a log ratio of {c.trained:+.3f} against its start's "
                    f"{c.start:+.3f}; trained - start {c.delta:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}] "
                    f"({verdict(c.ci_low, c.ci_high, holds_at=1e-12, fails_below=0.0)}; {int(c.n_tasks)} tasks).")
            best = self.best_baseline(c.wording)
            if best is not None:
                line += (f" Best fair baseline: {best['name']} ({best.contrast:+.3f}); trained - it {best.delta:+.3f} "
                         f"[{best.ci_low:+.3f}, {best.ci_high:+.3f}] "
                         f"({verdict(best.ci_low, best.ci_high, holds_at=1e-12, fails_below=0.0)}).")
            lines.append(line)
        return lines

    def lines(self) -> list[str]:
        """What it found, as the demo's findings and `orchestra train evidence --html` say it: one line per
        instruction (the paired deltas, trained - start, with 95% CIs), one per behaviour check, and whether
        the target half-widths were reached."""
        lines = [f"Instruction following ({self.tasks} {self.split} tasks x {self.samples} samples, paired by task and "
                 "sample; "
                 "contrast = mean ln(spend under the baseline / spend under the asking instruction), 0 for a model "
                 "that ignores the instruction; 95% CI):"]
        for c in self.contrasts.itertuples():
            lines.append(f"{c.pair} ({c.wording}), {c.measure}: start {c.start:+.3f} [{c.start_low:+.3f}, "
                         f"{c.start_high:+.3f}], trained {c.trained:+.3f} [{c.trained_low:+.3f}, "
                         f"{c.trained_high:+.3f}], trained - start {c.delta:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}].")
        for b in self.baselines[self.baselines.measure == "log cost_usd ratio"].itertuples():
            lines.append(f"Fair baseline {b.name} ({b.wording}): contrast {b.contrast:+.3f} [{b.contrast_low:+.3f}, "
                         f"{b.contrast_high:+.3f}], trained - it {b.delta:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}].")
        lines.append(f"GRPO against its start ({self.tasks} {self.split} tasks x {self.samples} samples, paired by "
                     "task and sample; trained - start, 95% CI):")
        for instruction, rows in self.deltas.groupby("instruction", sort=False):
            by = rows.set_index("measure")
            a, c, t, u = (by.loc[m] for m in ("accuracy", "cost", "latency", "U"))
            lines.append(f"Under {instruction!r}: accuracy {a.delta:+.3f} [{a.ci_low:+.3f}, {a.ci_high:+.3f}] "
                         f"({a.start:.2f} -> {a.trained:.2f}), cost {c.delta:+.0%} "
                         f"[{c.ci_low:+.0%}, {c.ci_high:+.0%}], "
                         f"latency {t.delta:+.1f} s [{t.ci_low:+.1f}, {t.ci_high:+.1f}], U {u.delta:+.3f} "
                         f"[{u.ci_low:+.3f}, {u.ci_high:+.3f}].")
        for check in self.checks.itertuples():
            shown = "{:+.0%}" if _is_share(check.check) else "{:+.3f}"
            lines.append(f"Check, {check.check} ({check.model}): {shown.format(check.value)} "
                         f"[{shown.format(check.ci_low)}, {shown.format(check.ci_high)}]: {check.verdict}.")
        lines.extend(f"Half-width, {line}." for line in self.target_lines())
        return lines

    def figure(self) -> Any:
        """The forest plot of the deltas (`lab.report.figures.paired_deltas_figure`, a plotly Figure)."""
        from lab.report.figures import paired_deltas_figure

        return paired_deltas_figure(self.deltas, title=f"Trained - start ({self.tasks} tasks x {self.samples} "
                                                         "samples, paired; 95% bootstrap CIs over tasks)")


def _is_share(check: str) -> bool:
    """Whether a check's value is a share (a saving, shown in %) rather than a difference or a log ratio."""
    return check.startswith(("saving", "latency saving"))


def _half_width(measure: str, value: float) -> str:
    return f"{value:.0%}" if measure == "cost" else f"{value:.3f}"


def start_model(config: OrchestraGRPOConfig) -> Path:
    """The model GRPO started from: the warm start when the config has one, else the resolved base model."""
    if config.warm_start:
        return warm_start_dir(config)
    return resolve_model(config.model, config.tiny_model, config.seed)


def evidence_plan(config: OrchestraGRPOConfig, tasks: int | None = None, samples: int = DEFAULT_SAMPLES,
                  instructions: list[str] | None = None, split: str = "test", baselines: bool = True,
                  baseline_models: dict[str, str] | None = None) -> EvidencePlan:
    """Check everything before any model runs, each refusal one line: samples < 1, several samples of a
    greedy policy (identical), the split GRPO trained on, no trained or no start model, a baseline model
    that is no model directory, an unknown instruction or none both models answer under, an unseen
    setting named without the cost pair it compares, no tool subset left unseen, fewer than one task or
    more than the split has. `baselines`: run the fair baselines (`fair_baselines`, with `baseline_models`
    as name -> model directory); the unseen settings (`trainer.unseen`) run unless `instructions` leaves
    them out, and are skipped for a config without an accuracy-only and a cost-saving instruction."""
    if split == config.train_split:
        raise LabInputError(f"--split {split}: GRPO trained on these tasks; compare on 'validation' (recipe "
                            "choices) or 'test' (reported figures)")
    if samples < 1:
        raise LabInputError(f"--samples {samples}: at least one rollout per task")
    if config.temperature <= 0 and samples > 1:
        raise LabInputError(f"--samples {samples} with temperature {config.temperature:g}: greedy samples of a task "
                            "are identical; use --samples 1 or a config with temperature > 0")
    if tasks is not None and tasks < 1:
        raise LabInputError(f"--tasks {tasks}: at least one task")
    trained = Path(config.output_dir)
    if not (trained / "config.json").is_file():
        raise LabInputError(f"{trained}: no trained model; run `orchestra train --config ...` first")
    start = start_model(config)
    if not (start / "config.json").is_file():
        raise LabInputError(f"{start}: no start model (the model GRPO began from); run `orchestra train "
                            "--config ...` (or `orchestra train sft`) first")
    chosen = [*curve_instructions(config), CurveInstruction(label=HELD_OUT, preference=HELD_OUT, wording=None)]
    chosen = list({c.label: c for c in chosen}.values())   # a curve that lists `held-out` itself: once
    held_out_wordings = True
    unseen: tuple[str, ...] = UNSEEN_NAMES
    if instructions is not None:
        known = [c.label for c in chosen] + [HELD_OUT_WORDINGS, *UNSEEN_NAMES]
        unknown = [name for name in instructions if name not in known]
        if unknown:
            raise LabInputError(f"instruction {unknown[0]!r}: not one of " + "; ".join(repr(k) for k in known))
        held_out_wordings = HELD_OUT_WORDINGS in instructions
        unseen = tuple(name for name in UNSEEN_NAMES if name in instructions)
        chosen = [c for c in chosen if c.label in instructions]
        if not chosen:
            raise LabInputError("--instruction: name at least one instruction both models answer under (a training "
                                f"wording or `{HELD_OUT}`); `{HELD_OUT_WORDINGS}` alone compares the trained model "
                                "with itself")
    environment = TrainingEnvironment(config, split=split)
    split_ids = list(environment.tasks)
    if not split_ids:
        raise LabInputError(f"--split {split}: {config.benchmark} has no tasks in it")
    if tasks is not None and tasks > len(split_ids):
        families = ", ".join(config.families) if config.families else "every family"
        raise LabInputError(f"--tasks {tasks}: the {split!r} split of {config.benchmark} ({families}) has "
                            f"{len(split_ids)} tasks; use at most {len(split_ids)}")
    models = {}
    for name, folder in (baseline_models or {}).items():
        if not (Path(folder) / "config.json").is_file():
            raise LabInputError(f"--baseline {name}={folder}: no model there (a directory with a config.json)")
        models[name] = Path(folder)
    chosen_ids = tuple(split_ids[:tasks])
    task_families = tuple(str(getattr(environment.tasks[task_id], "family", "") or "") for task_id in chosen_ids)
    plan = EvidencePlan(start=start, trained=trained, task_ids=chosen_ids, samples=samples,
                        instructions=tuple(chosen), held_out_wordings=held_out_wordings, split_tasks=len(split_ids),
                        split=split, families=task_families,
                        baselines=fair_baselines(start, config.temperature, samples, models) if baselines else ())
    if unseen and plan.cost_labels() is None:
        if instructions is not None:
            raise LabInputError(f"--instruction {unseen[0]}: the unseen settings compare the cost-saving and the "
                                "accuracy-only training instructions; name both as well")
        unseen = ()   # a config without that pair of training instructions has no contrast to carry over
    return dataclasses.replace(plan, unseen=unseen_settings(config, unseen, required=instructions is not None))


def gather_evidence(config: OrchestraGRPOConfig, store: Store, console: Console, tasks: int | None = None,
                    samples: int = DEFAULT_SAMPLES, instructions: list[str] | None = None,
                    targets: dict[str, float] | None = None, split: str = "test", baselines: bool = True,
                    baseline_models: dict[str, str] | None = None) -> Evidence:
    """Run (or resume: the harness skips logged rollouts) both models under every instruction of the plan,
    then compare them pair by pair. `tasks`: the first N of the eval split (default all); `instructions`:
    a subset of the labels (training wordings, `held-out`, `HELD_OUT_WORDINGS`, `trainer.unseen.UNSEEN_NAMES`)
    at the same tasks and samples, so at the same half-widths (U's scale is then the start's over that
    subset's instructions, at the evaluation's own prices and tools)."""
    plan = evidence_plan(config, tasks, samples, instructions, split, baselines, baseline_models)
    began = time.monotonic()
    runs: dict[str, str] = {}
    for instruction in plan.instructions:
        for role, model in (("start", plan.start), ("trained", plan.trained)):
            runs[f"{role} | {instruction.label}"] = _evaluate(config, plan, model, role, store, console,
                                                              instruction.preference, instruction.wording)
    if plan.held_out_wordings:
        for label, preference in HELD_OUT_RUNS.items():
            for role, model in (("start", plan.start), ("trained", plan.trained)):
                runs[f"{role} | {label}"] = _evaluate(config, plan, model, role, store, console, preference, None)
    for setting in plan.unseen:
        for label in plan.cost_labels() or ():
            preference, wording = _instruction_of(plan, label)
            for role, model in (("start", plan.start), ("trained", plan.trained)):
                runs[f"{role} | {setting.label(label)}"] = _evaluate(config, plan, model, role, store, console,
                                                                     preference, wording, setting=setting)
    for baseline in plan.baselines:
        for label in dict.fromkeys(label for _, _, base, ask, column in contrast_pairs(plan, unseen=False)
                                   if column == "cost_usd" for label in (base, ask)):
            preference, wording = _instruction_of(plan, label)
            runs[f"baseline {baseline.name} | {label}"] = _evaluate(
                config, plan, baseline.orchestrator, "baseline", store, console, preference, wording,
                temperature=baseline.temperature, samples=baseline.samples)
    trajs = queries.trajectories_df(store, list(runs.values()))
    unseen_labels = [setting.label(label) for setting in plan.unseen for label in plan.cost_labels() or ()]
    starts = [run_id for name, run_id in runs.items()
              if name.startswith("start | ") and name.removeprefix("start | ") not in unseen_labels]
    scale = fixed_scale(trajs[trajs.run_id.isin(starts)], basis="start model's")   # every instruction, own prices
    targets = dict(TARGETS if targets is None else targets)
    deltas, power, training = [], [], []
    for label in [*(c.label for c in plan.instructions), *unseen_labels]:
        start, trained = runs[f"start | {label}"], runs[f"trained | {label}"]
        deltas.append(paired_deltas(trajs, start, trained, scale, seed=config.seed).assign(instruction=label))
        differences = paired_differences(trajs, start, trained, scale)
        if label != HELD_OUT and label not in unseen_labels:
            training.append(differences)
        if differences.task_id.nunique() >= 2:
            power.append(power_table(differences, targets, max_tasks=plan.split_tasks).assign(instruction=label))
    frame = pd.concat(deltas, ignore_index=True)
    frame = frame[["instruction", *frame.columns.drop("instruction")]]
    frame["target"] = frame.measure.map(targets)
    frame["reached"] = frame.half_width <= frame.target
    power_frame = pd.concat(power, ignore_index=True) if power else pd.DataFrame()
    contrasts = instruction_contrasts(trajs, runs, plan, config.seed)
    calls = queries.tool_calls_df(store, list(runs.values()))
    shares = tool_shares(calls, trajs, runs, plan, config.seed)
    checks = behaviour_checks(trajs, runs, plan, frame, targets, config.seed)
    if training:
        checks = pd.concat([_pooled_utility_check(training, config.seed), checks], ignore_index=True)
    against = baseline_contrasts(trajs, runs, plan, config.seed)
    checks = pd.concat([contrast_checks(contrasts), baseline_checks(against), checks], ignore_index=True)
    return Evidence(deltas=frame, contrasts=contrasts, tool_shares=shares, checks=checks,
                    power=power_frame, scale=scale, run_ids=runs, start=str(plan.start), trained=str(plan.trained),
                    tasks=len(plan.task_ids), samples=plan.samples, temperature=config.temperature, targets=targets,
                    seconds=time.monotonic() - began, split=plan.split,
                    families=family_table(trajs, calls, runs, dict(zip(plan.task_ids, plan.families, strict=True))),
                    baselines=against, pulls=training_pulls(plan.trained, store, config.seed))


def _evaluate(config: OrchestraGRPOConfig, plan: EvidencePlan, model: Path | str, role: str, store: Store,
              console: Console, preference: str, wording: str | None, temperature: float | None = None,
              samples: int | None = None, setting: UnseenSetting | None = None) -> str:
    """One eval run of one model (a folder, or an orchestrator spec) under one instruction: the plan's
    tasks, samples and the config's seed, so both models' sample k of a task draw the same random numbers
    (a baseline may decode at its own temperature and samples; `setting`: other prices, fewer tools)."""
    from lab.eval.checks import checked_toolkit
    from lab.eval.harness import run_eval

    samples = plan.samples if samples is None else samples
    orchestrator = model if isinstance(model, str) else f"hf:{model}"
    eval_config = EvalConfig.build(
        benchmark=config.benchmark, split=plan.split, orchestrator=orchestrator, toolkit=config.toolkit,
        tasks=list(plan.task_ids), preferences=[preference], preference_instruction=wording,
        max_turns=[config.max_turns], samples=samples,
        temperature=config.temperature if temperature is None else temperature, top_p=config.top_p,
        **config.eval_settings(), seed=config.seed, run_name=f"evidence-{role}",
        concurrency=len(plan.task_ids) * samples,   # one batch: every rollout's round decoded together
        pricing=setting.pricing if setting else "default",
    )
    toolkit = None
    if setting is not None and setting.features is not None:
        toolkit = checked_toolkit(eval_config, console).subset_features(list(setting.features))
    (summary,) = run_eval(eval_config, store, console, toolkit=toolkit)
    return summary.run_id


def contrast_pairs(plan: EvidencePlan, unseen: bool = True) -> list[tuple[str, str, str, str, str]]:
    """The pairs of instructions the plan contrasts: (pair, wording, baseline label, asking label, column):
    cost-saving against accuracy-only (training wording, held-out wording when run, and under each unseen
    setting when `unseen`) and speed against accuracy-only, where the plan has them."""
    accuracy_only, speed, cost = plan.first_of_kind("accuracy-only"), plan.first_of_kind("speed"), plan.cost_labels()
    pairs = []
    if cost:
        pairs.append(("cost-saving vs accuracy-only", "training wording", *cost, "cost_usd"))
    if plan.held_out_wordings:
        pairs.append(("cost-saving vs accuracy-only", "held-out wording", HELD_OUT_ACCURACY_ONLY,
                      HELD_OUT_COST_SAVING, "cost_usd"))
    if cost and unseen:
        pairs += [("cost-saving vs accuracy-only", f"training wording, {setting.description}",
                   setting.label(cost[0]), setting.label(cost[1]), "cost_usd") for setting in plan.unseen]
    if accuracy_only and speed:
        pairs.append(("speed vs accuracy-only", "training wording", accuracy_only, speed, "latency_s"))
    return pairs


def _instruction_of(plan: EvidencePlan, label: str) -> tuple[str, str | None]:
    """The P string and wording a run label of the plan stands for (a training label, or a held-out wording)."""
    if label in HELD_OUT_RUNS:
        return HELD_OUT_RUNS[label], None
    chosen = next(c for c in plan.instructions if c.label == label)
    return chosen.preference, chosen.wording


def baseline_contrasts(trajs: pd.DataFrame, runs: dict[str, str], plan: EvidencePlan, seed: int = 0) -> pd.DataFrame:
    """Each fair baseline's contrast for each cost pair of `contrast_pairs`, beside the trained model's, and
    trained - baseline with its CI (`instruction_contrast`, tasks paired; a greedy baseline's one sample
    against the trained model's several), as `BASELINE_COLUMNS`."""
    frames = []
    for baseline in plan.baselines:
        for pair, wording, base, ask, column in contrast_pairs(plan, unseen=False):
            if column != "cost_usd":
                continue
            mine = InstructionRuns(runs[f"baseline {baseline.name} | {base}"],
                                   runs[f"baseline {baseline.name} | {ask}"])
            trained = InstructionRuns(runs[f"trained | {base}"], runs[f"trained | {ask}"])
            frames.append(instruction_contrast(trajs, mine, trained, column=column, seed=seed).rename(
                columns={"start": "contrast", "start_low": "contrast_low", "start_high": "contrast_high"}).assign(
                name=baseline.name, pair=pair, wording=wording))
    return pd.concat(frames, ignore_index=True)[BASELINE_COLUMNS] if frames else pd.DataFrame(columns=BASELINE_COLUMNS)


def best_baseline(against: pd.DataFrame, wording: str) -> Any:
    """The fair baseline (a `BASELINE_COLUMNS` row) whose cost contrast under `wording` is highest, None
    without one: RL's claim is made against it. Picked on the split compared on, which favours the baselines."""
    rows = against[(against.measure == "log cost_usd ratio") & (against.wording == wording)]
    return None if rows.empty else rows.loc[rows.contrast.idxmax()]


def baseline_checks(against: pd.DataFrame) -> pd.DataFrame:
    """RL's claim against the best fair baseline per wording (`best_baseline`): trained - it, its CI above 0."""
    rows = []
    for wording in dict.fromkeys(against.wording):
        best = best_baseline(against, wording)
        group = against[(against.measure == "log cost_usd ratio") & (against.wording == wording)]
        rows.append([f"instruction following above the best fair baseline, {best.pair} ({wording})",
                     f"trained - {best['name']}", best.delta, best.ci_low, best.ci_high,
                     verdict(best.ci_low, best.ci_high, holds_at=1e-12, fails_below=0.0),
                     f"contrast {best['name']} {best.contrast:+.3f} -> trained {best.trained:+.3f}; best of "
                     f"{len(group)} baselines; {int(best.n_tasks)} tasks"])
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def _model_runs(runs: dict[str, str], baseline: str, asking: str) -> tuple[InstructionRuns, InstructionRuns]:
    return (InstructionRuns(runs[f"start | {baseline}"], runs[f"start | {asking}"]),
            InstructionRuns(runs[f"trained | {baseline}"], runs[f"trained | {asking}"]))


def instruction_contrasts(trajs: pd.DataFrame, runs: dict[str, str], plan: EvidencePlan, seed: int = 0) -> pd.DataFrame:
    """Instruction following, the headline (`lab.report.metrics.contrast`): each model's contrast for each
    pair of `contrast_pairs`, and trained - start, as `EVIDENCE_CONTRAST_COLUMNS`."""
    frames = [instruction_contrast(trajs, *_model_runs(runs, baseline, asking), column=column,
                                   seed=seed).assign(pair=pair, wording=wording)
              for pair, wording, baseline, asking, column in contrast_pairs(plan)]
    if not frames:
        return pd.DataFrame(columns=EVIDENCE_CONTRAST_COLUMNS)
    return pd.concat(frames, ignore_index=True)[EVIDENCE_CONTRAST_COLUMNS]


def training_pulls(trained: Path, store: Store, seed: int = 0) -> pd.DataFrame:
    """Which way the run that made the `trained` model pushed cost and outcome under each kind of
    instruction (`lab.report.metrics.pull`), from its logged rollouts. The run is the one the model's own
    fingerprint names (`trainer.fingerprint`), not the one today's config would hash to, so a config that
    gained fields since still finds it; empty when the model has no fingerprint or the run is elsewhere."""
    from trainer.fingerprint import read_fingerprint

    recorded = read_fingerprint(trained) or {}
    run_id = recorded.get("inputs", {}).get("train_run")
    trajs = queries.trajectories_df(store, [run_id]) if run_id else pd.DataFrame()
    return update_pull(trajs, seed=seed) if not trajs.empty else pd.DataFrame(columns=PULL_COLUMNS)


def family_table(trajs: pd.DataFrame, calls: pd.DataFrame, runs: dict[str, str],
                 families: dict[str, str]) -> pd.DataFrame:
    """Per task family, model and instruction (`runs`' "<model> | <instruction>" names): tasks, rollouts,
    accuracy, rounds per rollout, cost per rollout and the three tools (or slots) that took most of the
    calls, with their shares: a gain on multi-hop tasks and a loss on computational ones do not cancel
    out unseen. Tasks without a family (not world tasks) are one family, ''."""
    rows = []
    for name, run_id in runs.items():
        model, instruction = name.split(" | ", 1)
        mine = trajs[trajs.run_id == run_id]
        mine = mine.assign(family=mine.task_id.map(families).fillna(""))
        my_calls = calls[calls.run_id == run_id]
        my_calls = my_calls.assign(family=my_calls.task_id.map(families).fillna(""))
        for family, group in mine.groupby("family", sort=True):
            counts = my_calls[my_calls.family == family].groupby("tool_name").n_calls.sum().sort_values(ascending=False)
            top = ", ".join(f"{tool} {n / counts.sum():.0%}" for tool, n in counts.head(3).items()) or "no calls"
            rows.append([FAMILY_NAMES.get(family, family), model, instruction, group.task_id.nunique(), len(group),
                         group.outcome.mean(), group.n_turns.mean(), group.cost_usd.mean(), top])
    return pd.DataFrame(rows, columns=FAMILY_COLUMNS)


def pooled_contrasts(parts: list[tuple[pd.DataFrame, dict[str, str]]], plan: EvidencePlan,
                     seed: int = 0) -> pd.DataFrame:
    """Instruction following pooled over seeds of the whole recipe: `parts` holds each seed's trajectories
    and run ids (`Evidence.run_ids`), all on the plan's tasks and samples. Sample k of the i-th seed counts
    as sample i * samples + k of its task, so the bootstrap resamples tasks with every seed's samples
    inside: it pools what the seeds share (the tasks), and the spread between seeds shows in their own
    rows beside it (with three seeds, a between-seed interval would say little)."""
    frames = []
    for index, (trajs, runs) in enumerate(parts):
        label_of = {run_id: label for label, run_id in runs.items()}
        mine = trajs[trajs.run_id.isin(label_of)]
        frames.append(mine.assign(run_id=mine.run_id.map(label_of), sample_idx=mine.sample_idx + index * plan.samples))
    labels = {label: label for label in parts[0][1]}
    return instruction_contrasts(pd.concat(frames, ignore_index=True), labels, plan, seed)


def tool_shares(calls: pd.DataFrame, trajs: pd.DataFrame, runs: dict[str, str], plan: EvidencePlan,
                seed: int = 0) -> pd.DataFrame:
    """Where the spending moved: for each cost pair of `contrast_pairs`, each tool's (or slot's) share of
    the calls, asking - baseline, per model and trained - start (`tool_share_contrast`)."""
    columns = ["pair", "wording", "tool_name", *CONTRAST_COLUMNS[1:]]
    frames = [tool_share_contrast(calls, trajs, *_model_runs(runs, baseline, asking), seed=seed).assign(
              pair=pair, wording=wording)
              for pair, wording, baseline, asking, column in contrast_pairs(plan) if column == "cost_usd"]
    frames = [frame for frame in frames if not frame.empty]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def contrast_checks(contrasts: pd.DataFrame) -> pd.DataFrame:
    """The RL claim per pair and wording: training raised the contrast (trained - start of the log ratio,
    its CI above 0); fails when the whole CI is below 0."""
    rows = []
    for c in contrasts[contrasts.measure.str.startswith("log ")].itertuples():
        rows.append([f"instruction following raised, {c.pair} ({c.wording})", "trained - start", c.delta, c.ci_low,
                     c.ci_high, verdict(c.ci_low, c.ci_high, holds_at=1e-12, fails_below=0.0),
                     f"contrast ({c.measure}) start {c.start:+.3f} -> trained {c.trained:+.3f}; {int(c.n_tasks)} "
                     "tasks; holds when the CI is above 0"])
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def behaviour_checks(trajs: pd.DataFrame, runs: dict[str, str], plan: EvidencePlan, deltas: pd.DataFrame,
                     targets: dict[str, float], seed: int = 0) -> pd.DataFrame:
    """The checks, one row each (`CHECK_COLUMNS`): accuracy not lower under every accuracy-only instruction
    (holds when the CI's low end is at or above -target, fails when the whole CI is below 0); a saving
    of at least `SAVING_TARGET` under the cost-saving instruction against accuracy-only, of the trained
    model (training and held-out wordings) and, for reference, of the start; lower latency under the
    speed instruction against accuracy-only."""
    rows = []
    for label in (c.label for c in plan.instructions if instruction_kind(_weights(c.preference)) == "accuracy-only"):
        d = deltas[(deltas.instruction == label) & (deltas.measure == "accuracy")].iloc[0]
        margin = targets.get("accuracy", TARGETS["accuracy"])
        rows.append([f"accuracy not lower under {label!r} (trained - start)", "trained", d.delta, d.ci_low,
                     d.ci_high, verdict(d.ci_low, d.ci_high, holds_at=-margin, fails_below=0.0),
                     f"{d.start:.3f} -> {d.trained:.3f}; holds when the CI is above -{margin:g}"])
    accuracy_only, cost_saving, speed = (plan.first_of_kind(kind) for kind in ("accuracy-only", "cost-saving", "speed"))
    if cost_saving:
        rows.append(_saving_against_start(deltas, cost_saving, targets))
    pairs = []
    if accuracy_only and cost_saving:
        pairs += [(f"trained | {cost_saving}", f"trained | {accuracy_only}", "trained", "training wording"),
                  (f"start | {cost_saving}", f"start | {accuracy_only}", "start", "training wording")]
    if plan.held_out_wordings:
        pairs += [(f"{model} | {HELD_OUT_COST_SAVING}", f"{model} | {HELD_OUT_ACCURACY_ONLY}", model,
                   "held-out wording") for model in ("trained", "start")]
    for run, baseline, model, wording in pairs:
        s = paired_saving(trajs, runs[run], runs[baseline], seed=seed)
        rows.append([f"saving, cost-saving vs accuracy-only ({wording})", model, s["saving"], s["ci_low"],
                     s["ci_high"], verdict(s["ci_low"], s["ci_high"], holds_at=SAVING_TARGET, fails_below=SAVING_TARGET)
                     if model == "trained" else "(reference)",
                     f"{100 * s['cost_a']:.2f}c vs {100 * s['cost_b']:.2f}c per task; accuracy "
                     f"{_accuracy(trajs, runs[run]):.3f} vs {_accuracy(trajs, runs[baseline]):.3f}; "
                     f"holds when the CI is above {SAVING_TARGET:.0%}"])
    if accuracy_only and speed:
        run, baseline = runs[f"trained | {speed}"], runs[f"trained | {accuracy_only}"]
        s = paired_saving(trajs, run, baseline, seed=seed, column="latency_s")
        rows.append([f"latency saving, {speed!r} vs accuracy-only", "trained", s["saving"], s["ci_low"], s["ci_high"],
                     verdict(s["ci_low"], s["ci_high"], holds_at=1e-12, fails_below=0.0),
                     f"{s['cost_a']:.1f} s vs {s['cost_b']:.1f} s per task; holds when the CI is above 0"])
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def _pooled_utility_check(training: list[pd.DataFrame], seed: int) -> pd.DataFrame:
    """Trained - start of U over every training instruction at once (each task's instructions and samples
    averaged, then a bootstrap over tasks): did GRPO raise what it was trained to raise?"""
    pooled = pooled_delta(training, "U", seed=seed)
    row = [f"U higher under the training instructions, pooled over {len(training)}", "trained", pooled["delta"],
           pooled["ci_low"], pooled["ci_high"], verdict(pooled["ci_low"], pooled["ci_high"], holds_at=1e-12,
                                                        fails_below=0.0),
           f"{pooled['n_tasks']} tasks; holds when the CI is above 0, fails when it is below"]
    return pd.DataFrame([row], columns=CHECK_COLUMNS)


def _saving_against_start(deltas: pd.DataFrame, label: str, targets: dict[str, float]) -> list[Any]:
    """The check that GRPO moved the cost-saving instruction its way: the trained model at least
    `SAVING_TARGET` cheaper than its start under it (the saving's CI above it), giving up at most
    `ACCURACY_GIVEN_UP` of accuracy (the estimate; its CI not below -the accuracy target). Fails when the
    saving's CI is below the target or the accuracy's whole CI is below -`ACCURACY_GIVEN_UP`."""
    rows = deltas[deltas.instruction == label].set_index("measure")
    cost, accuracy = rows.loc["cost"], rows.loc["accuracy"]
    saving, low, high = -cost.delta, -cost.ci_high, -cost.ci_low
    margin = targets.get("accuracy", TARGETS["accuracy"])
    accuracy_holds = accuracy.delta >= -ACCURACY_GIVEN_UP and accuracy.ci_low >= -margin
    if low >= SAVING_TARGET and accuracy_holds:
        outcome = "holds"
    elif high < SAVING_TARGET or accuracy.ci_high < -ACCURACY_GIVEN_UP:
        outcome = "fails"
    else:
        outcome = "not shown"
    return [f"saving against the start under {label!r} (1 - trained / start)", "trained", saving, low, high, outcome,
            f"{cost.start:.3f}c -> {cost.trained:.3f}c per task; accuracy {accuracy.start:.3f} -> "
            f"{accuracy.trained:.3f} ({accuracy.delta:+.3f} [{accuracy.ci_low:+.3f}, {accuracy.ci_high:+.3f}]); holds "
            f"when the saving's CI is above {SAVING_TARGET:.0%} and at most {100 * ACCURACY_GIVEN_UP:.0f} points of "
            f"accuracy are given up (CI not below -{margin:g})"]


def _weights(preference: str) -> dict[str, float]:
    """A P string's weights (`outcome=1,compute=0.5`); `held-out` has none (every task its own pair)."""
    if preference == HELD_OUT:
        return {}
    return {name.strip(): float(value) for name, value in (part.split("=") for part in preference.split(","))}


def _accuracy(trajs: pd.DataFrame, run_id: str) -> float:
    """Mean over tasks of the solved share."""
    return float(trajs[trajs.run_id == run_id].groupby("task_id").outcome.mean().mean())


def print_evidence(evidence: Evidence, console: Console) -> None:
    """One table per instruction, the behaviour checks, the size and the half-widths reached."""
    rollouts = evidence.tasks * evidence.samples
    console.print(f"Trained {evidence.trained} vs its start {evidence.start}: {evidence.tasks} tasks x "
                  f"{evidence.samples} samples = {rollouts} rollouts per run, {len(evidence.run_ids)} runs, paired "
                  f"by task and sample, sampled at temperature {evidence.temperature:g} "
                  f"({evidence.seconds / 60:.1f} min). U = w_o*solved - w_c*cost/c_ref - w_l*latency/l_ref with "
                  f"c_ref = {100 * evidence.scale.c_ref:.3f}c, l_ref = {evidence.scale.l_ref:.1f} s "
                  f"({evidence.scale.basis}).", highlight=False)
    for line in evidence.headline():
        console.print(line, highlight=False)
    following = Table(title="Instruction following: each model's contrast between two instructions (0: ignores them)",
                      title_justify="left")
    for column in ("pair", "wording", "measure", "start [95% CI]", "trained [95% CI]", "trained - start [95% CI]"):
        following.add_column(column, justify="left" if column in ("pair", "wording", "measure") else "right")
    for c in evidence.contrasts.itertuples():
        following.add_row(c.pair, c.wording, c.measure, f"{c.start:+.3f} [{c.start_low:+.3f}, {c.start_high:+.3f}]",
                          f"{c.trained:+.3f} [{c.trained_low:+.3f}, {c.trained_high:+.3f}]",
                          f"{c.delta:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}]")
    console.print(following)
    if not evidence.tool_shares.empty:
        moved = Table(title="Share of calls per tool, asking - baseline instruction (where the spending moved)",
                      title_justify="left")
        for column in ("pair", "wording", "tool", "start", "trained", "trained - start [95% CI]"):
            moved.add_column(column, justify="left" if column in ("pair", "wording", "tool") else "right")
        for c in evidence.tool_shares.itertuples():
            moved.add_row(c.pair, c.wording, c.tool_name, f"{c.start:+.0%}", f"{c.trained:+.0%}",
                          f"{c.delta:+.0%} [{c.ci_low:+.0%}, {c.ci_high:+.0%}]")
        console.print(moved)
    if not evidence.pulls.empty:
        pulled = Table(title="Which way the training updates pushed, per kind of instruction (mean over informative "
                             "groups of A x deviation; 95% CI over groups)", title_justify="left")
        for column in ("instruction kind", "groups", "informative", "pull on ln cost", "pull on solved"):
            pulled.add_column(column, justify="left" if column == "instruction kind" else "right")
        for p in evidence.pulls.itertuples():
            pulled.add_row(p.kind, str(p.groups), f"{p.informative:.0%}",
                           f"{p.cost_pull:+.3f} [{p.cost_low:+.3f}, {p.cost_high:+.3f}]",
                           f"{p.outcome_pull:+.3f} [{p.outcome_low:+.3f}, {p.outcome_high:+.3f}]")
        console.print(pulled)
    if not evidence.families.empty:
        per_family = Table(title="Per task family: what each model did under each instruction", title_justify="left")
        for column in ("family", "model", "instruction", "rollouts", "accuracy", "rounds", "cost", "most called"):
            per_family.add_column(column, justify="right" if column in ("rollouts", "accuracy", "rounds", "cost")
                                  else "left")
        for f in evidence.families.itertuples():
            per_family.add_row(f.family, f.model, f.instruction, str(f.rollouts), f"{f.accuracy:.3f}",
                               f"{f.rounds:.2f}", f"{100 * f.cost_usd:.3f}c", f.tool_shares)
        console.print(per_family)
    if not evidence.baselines.empty:
        fair = Table(title="Fair baselines: each one's contrast beside the trained model's (RL's claim is made against "
                           "the best)", title_justify="left")
        for column in ("baseline", "wording", "measure", "baseline [95% CI]", "trained", "trained - baseline [95% CI]"):
            fair.add_column(column, justify="left" if column in ("baseline", "wording", "measure") else "right")
        for b in evidence.baselines.itertuples():
            fair.add_row(b.name, b.wording, b.measure,
                         f"{b.contrast:+.3f} [{b.contrast_low:+.3f}, {b.contrast_high:+.3f}]", f"{b.trained:+.3f}",
                         f"{b.delta:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}]")
        console.print(fair)
    units = {"accuracy": ("{:.3f}", "{:+.3f}"), "cost": ("{:.3f}c", "{:+.1%}"), "latency": ("{:.1f} s", "{:+.2f} s"),
             "U": ("{:.3f}", "{:+.3f}")}
    for label, rows in evidence.deltas.groupby("instruction", sort=False):
        table = Table(title=f"{label!r}: trained - start ({int(rows.n_tasks.iloc[0])} tasks)", title_justify="left")
        for column in ("measure", "start", "trained", "trained - start", "95% CI (paired bootstrap)", "+- half-width",
                       "target"):
            table.add_column(column, justify="left" if column in ("measure",) else "right")
        for r in rows.itertuples():
            value, change = units[r.measure]
            measure = "cost (trained / start - 1)" if r.measure == "cost" else r.measure
            target = "" if pd.isna(r.target) else f"+-{_half_width(r.measure, r.target)}" + (
                "" if r.reached else " NOT reached")
            table.add_row(measure, value.format(r.start), value.format(r.trained), change.format(r.delta),
                          f"[{change.format(r.ci_low)}, {change.format(r.ci_high)}]",
                          _half_width(r.measure, r.half_width) if r.measure != "latency" else f"{r.half_width:.2f} s",
                          target)
        console.print(table)
    checks = Table(title="Behaviour checks", title_justify="left")
    for column in ("check", "model", "value [95% CI]", "verdict", "detail"):
        checks.add_column(column)
    for c in evidence.checks.itertuples():
        shown = "{:+.1%}" if _is_share(c.check) else "{:+.3f}"
        interval = f"[{shown.format(c.ci_low)}, {shown.format(c.ci_high)}]"
        checks.add_row(c.check, c.model, f"{shown.format(c.value)} {interval}", c.verdict, c.detail)
    console.print(checks)
    console.print(f"Sample size: {evidence.tasks} tasks x {evidence.samples} samples per instruction and model.",
                  highlight=False)
    for line in evidence.target_lines():
        console.print(line, highlight=False)
    runs = Table(title="Runs (orchestra runs / orchestra report take these ids)", title_justify="left")
    for column in ("instruction", "start", "trained"):
        runs.add_column(column)
    names = dict.fromkeys(name.split(" | ", 1)[1] for name in evidence.run_ids)
    for name in names:
        runs.add_row(name, evidence.run_ids.get(f"start | {name}", ""), evidence.run_ids.get(f"trained | {name}", ""))
    console.print(runs)
