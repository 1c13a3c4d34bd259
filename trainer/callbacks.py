"""Trainer callbacks: one `train_metrics` row per optimizer step, a rich progress line, and the learning
curve's evaluations of the live policy (`trainer.curve`: `kind='eval'` runs linked to the train run and
step, at step 0, every `lab_eval_steps` and after the last step).

The Trainer's own progress (its tqdm bar and the raw log dicts it prints) is replaced by the lab's rich
lines (`quiet_trainer`), unless the user asked for libraries' output (`--verbose`)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from transformers import TrainerCallback

from lab.output import verbose
from lab.records import TrainMetricsRecord
from lab.store import Store
from trainer.metrics import TRL_KEYS


class MetricsCallback(TrainerCallback):
    """Merges TRL's step logs with the lab's rollout metrics and writes them, one row per step."""

    def __init__(self, store: Store, run_id: str, console: Console, max_steps: int) -> None:
        self.store = store
        self.run_id = run_id
        self.trainer: Any = None  # set by `train.run_training` once the trainer exists
        self.progress = Progress(TextColumn("[bold]GRPO"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"),
                                 TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False)
        self.bar = self.progress.add_task("train", total=max_steps, stats="")
        self._seen_generation: int | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.progress.start()
        self.progress.update(self.bar, completed=state.global_step)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.progress.stop()

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if not logs or "loss" not in logs or self.trainer is None:
            return  # the end-of-training summary log, not a step
        metrics = {ours: float(logs[theirs]) for theirs, ours in TRL_KEYS.items() if theirs in logs}
        generation = dict(self.trainer.generation_metrics)
        fresh = self.trainer.generations != self._seen_generation
        self._seen_generation = self.trainer.generations
        if not fresh:  # a step reusing the previous generation batch spent no time generating
            generation.update({"time/rollout_s": 0.0, "time/reward_s": 0.0, "tokens/generated": 0.0})
        metrics.update(generation)
        step_time = float(logs.get("step_time", 0.0))
        metrics["time/update_s"] = max(0.0, step_time - generation.get("time/rollout_s", 0.0)
                                       - generation.get("time/reward_s", 0.0))
        metrics["update/skipped"] = float(self.trainer.last_step_skipped)
        if state.is_world_process_zero:
            self.store.write_train_metrics([TrainMetricsRecord(run_id=self.run_id, step=state.global_step,
                                                               metrics_json=json.dumps(metrics, sort_keys=True))])
        stats = (f"reward {metrics.get('reward/mean', 0):.3f}  solved {metrics.get('outcome/mean', 0):.2f}  "
                 f"filtered {metrics.get('filtered/all', 0):.2f}  ${metrics.get('cost/per_trajectory', 0):.4f}/rollout")
        self.progress.update(self.bar, completed=state.global_step, stats=stats)


class EvalCallback(TrainerCallback):
    """Evaluates the live model (`evaluate(model, step)`, a `trainer.curve.CurveEvaluator`) at step 0 before
    the first update, every `lab_eval_steps` steps and after the last, on every rank: each rank evaluates its
    shard of the point's tasks into the same eval runs, so one set of runs per step and no task twice. A run
    resumed from a checkpoint starts past step 0, so its step-0 point (already stored) is not repeated.
    (Under DeepSpeed ZeRO-3 each rank holds only a shard of the weights, so sampling outside the rollout's
    gathered context would be a collective per forward pass: set `lab_eval_limit: 0` there and evaluate the
    saved checkpoints with `orchestra eval --orchestrator hf:<checkpoint>`.)"""

    def __init__(self, evaluate: Any, every: int) -> None:
        self.evaluate = evaluate
        self.every = every
        self.done: set[int] = set()

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if state.global_step == 0:  # the curve's first point: the policy before any update
            self._run(model, 0)

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if self.every and state.global_step % self.every == 0:
            self._run(model, state.global_step)

    def on_train_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self._run(model, state.global_step)

    def _run(self, model: Any, step: int) -> None:
        if step in self.done:
            return
        self.done.add(step)
        self.evaluate(model, step)


class StepProgress(TrainerCallback):
    """A rich progress line for a Trainer that has no lab metrics of its own (the SFT warm start): steps
    done, the latest logged loss, elapsed and remaining time."""

    def __init__(self, label: str, console: Console) -> None:
        self.progress = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"),
                                 TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False)
        self.bar = self.progress.add_task(label, total=None, stats="")

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.progress.update(self.bar, total=state.max_steps, completed=state.global_step)
        self.progress.start()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.progress.update(self.bar, completed=state.global_step)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if logs and "loss" in logs:
            self.progress.update(self.bar, stats=f"loss {float(logs['loss']):.4f}")

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.progress.stop()


def quiet_trainer(trainer: Any) -> None:
    """Remove the Trainer's tqdm bar and its printing of raw log dicts (the lab's callbacks show progress),
    unless libraries may speak (`lab.output.verbose`)."""
    if verbose():
        return
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
