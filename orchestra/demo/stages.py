"""The demo's stages, each resumable: a finished eval run adds nothing when run again (the harness skips
logged rollouts), the world and the trained model are reused, so a second demo costs seconds.

All runs answer the same test tasks (the training families of `configs/train/cpu-tiny.yaml`) with the
same toolkit (its `paper-small` slot toolkit), under the held-out preference pairs: so accuracy, cost
and the preference score compare like with like, and the trained model is scored on instructions it
never saw in training.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.preference import HELD_OUT
from lab.store import Store, queries
from orchestra.demo.plan import BASELINES, SWEEP_PREFERENCES, TRAIN_WORDINGS, DemoPlan, trained_name

if TYPE_CHECKING:
    from trainer.evidence import Evidence
    from trainer.fingerprint import Fingerprint


class DemoStages:
    """Runs the demo's stages against one store; `runs` maps each run name to its run id."""

    def __init__(self, plan: DemoPlan, store: Store, console: Console) -> None:
        self.plan, self.store, self.console = plan, store, console
        self.config = plan.train_config(store.path)
        self.runs: dict[str, str] = {}
        self.found: Evidence | None = None   # what `evidence` found (its runs stay out of `runs`: not compared)
        self._tasks: list[str] | None = None

    def steps(self) -> list[tuple[str, Callable[[], None]]]:
        """The stages in order, each with the title its progress shows."""
        plan = self.plan
        return [("offline world", self.world), ("scripted baselines", self.baselines),
                (f"SmolLM2 (untrained), {plan.smollm2_tasks} tasks", self.smollm2),
                ("warm start + GRPO training", self.train),
                (f"GRPO against its start, {plan.evidence_tasks or 'all'} tasks x {self._evidence_samples} samples",
                 self.evidence),
                ("warm start and trained model", self.compare_trained),
                ("sweep: 3 instructions x turn budgets "
                 f"{'/'.join(map(str, plan.turn_budgets))}, 2 training wordings", self.sweep)]

    @property
    def tasks(self) -> list[str]:
        """The test tasks every run answers: the first `plan.tasks` of the training families' test split."""
        if self._tasks is None:
            from trainer.environment import TrainingEnvironment

            self._tasks = list(TrainingEnvironment(self.config, split="test").tasks)[: self.plan.tasks]
        return self._tasks

    def world(self) -> None:
        from lab.world.build import build_world

        world = build_world(progress=True)
        self.console.print(f"world: {world.root}")

    def baselines(self) -> None:
        for name, orchestrator in BASELINES.items():
            self._evaluate(name, orchestrator, protocol=self.config.protocol, context_tokens=self.config.context_tokens,
                           expert_protocol=self.config.eval_settings()["expert_protocol"])

    def smollm2(self) -> None:
        """SmolLM2-135M-Instruct, untrained, as an orchestrator: what a small model does before any training."""
        self._evaluate("smollm2", "hf:smollm2", tasks=self.tasks[: self.plan.smollm2_tasks], **self._hf_settings())

    def train(self) -> None:
        """Warm start + GRPO from the config, or the finished model when what made it (its fingerprint:
        config, warm start, code, data) is what would make it now. A stale one is retrained from the start,
        saying which input differed: resuming would continue the stale run's checkpoints."""
        from trainer.fingerprint import reuse_decision
        from trainer.train import run_training, train_run_id

        config, model, run_id = self.config, Path(self.config.output_dir), train_run_id(self.config)
        status = queries.run_status(self.store, run_id)
        resume = status is not None and any(model.glob("checkpoint-*"))
        if status == "finished":
            reuse, reason = reuse_decision(model, self._trained_fingerprint(run_id))
            if reuse:
                self.console.print(f"training: reusing {model} (train run {run_id}, {reason})")
                return
            self.console.print(f"training: {model} {reason}; retraining")
            for checkpoint in model.glob("checkpoint-*"):
                shutil.rmtree(checkpoint)
            self.store.finish_run(run_id, "interrupted")  # reopened: `run_training` refuses to redo a finished run
            resume = False
        with contextlib.redirect_stdout(sys.stderr):  # the trainers' own log lines are progress, not the summary
            summary = run_training(config, self.store, self.console, resume=resume)
        self.console.print(f"training: {summary.steps} GRPO steps, model in {summary.model_dir}")

    def evidence(self) -> None:
        """Did GRPO teach the model to follow instructions, and improve on its start? Both models on the same
        test tasks and sample seeds under each training instruction, the held-out pairs, the held-out
        wordings, and the cost pair under prices and tools training never drew, paired (`trainer.evidence`;
        resumed like every eval run)."""
        from trainer.curve import curve_instructions
        from trainer.evidence import HELD_OUT_WORDINGS, gather_evidence
        from trainer.unseen import UNSEEN_NAMES

        labels = [c.label for c in curve_instructions(self.config)] + [HELD_OUT, HELD_OUT_WORDINGS, *UNSEEN_NAMES]
        self.found = gather_evidence(self.config, self.store, self.console, tasks=self.plan.evidence_tasks,
                                     samples=self._evidence_samples, instructions=labels)

    @property
    def _evidence_samples(self) -> int:
        from trainer.evidence import DEFAULT_SAMPLES

        return self.plan.evidence_samples or DEFAULT_SAMPLES

    def compare_trained(self) -> None:
        """The warm start and the trained model, under the same held-out pairs and budget as the baselines."""
        from trainer.sft import warm_start_dir

        self._evaluate("warm-start", f"hf:{warm_start_dir(self.config)}", **self._hf_settings())
        self._evaluate("trained", f"hf:{self.config.output_dir}", **self._hf_settings())

    def sweep(self) -> None:
        """The trained model under three instructions x the plan's turn budgets (10 / 20 / 50)."""
        for label, preference in SWEEP_PREFERENCES.items():
            for turns in self.plan.turn_budgets:
                self._evaluate(trained_name(label, turns), f"hf:{self.config.output_dir}", preference=preference,
                               max_turns=turns, **self._hf_settings())
        for label, (preference, wording) in TRAIN_WORDINGS.items():  # the instructions as training worded them
            self._evaluate(trained_name(label, self.plan.compared_turns, "train"), f"hf:{self.config.output_dir}",
                           preference=preference, preference_instruction=wording, **self._hf_settings())

    # ------------------------------------------------------------------ helpers

    def _trained_fingerprint(self, run_id: str) -> Fingerprint:
        """What would make the trained model now: `run_training` records the same at save time."""
        from trainer.fingerprint import trained_fingerprint, warm_start_fingerprint
        from trainer.sft import warm_start_options

        config = self.config
        warm = warm_start_fingerprint(config, warm_start_options(config)).digest if config.warm_start else None
        return trained_fingerprint(config, run_id, warm)

    def _hf_settings(self) -> dict[str, Any]:
        """Local models run as the trainer evaluates them: its per-turn token limit, its observation cut and
        a modelled decode latency (wall time on a shared CPU would be noise in latency and the reward)."""
        # sampled at the config's temperature, as the released evaluation samples (temperature 1): a greedy
        # policy repeats a round that changed nothing forever, a sampled one moves on
        return {**self.config.eval_settings(), "temperature": self.config.temperature,
                "concurrency": len(self.tasks)}  # one batch: every rollout's turn decoded together

    def _evaluate(self, name: str, orchestrator: str, preference: str = "held-out", max_turns: int | None = None,
                  tasks: list[str] | None = None, **settings: Any) -> None:  # settings: EvalConfig fields
        config = EvalConfig.build(benchmark="world", split="test", orchestrator=orchestrator,
                                  toolkit=self.config.toolkit,
                                  tasks=tasks or self.tasks, preferences=[preference],
                                  max_turns=[max_turns or self.plan.compared_turns],
                                  seed=self.config.seed, run_name=name, **settings)
        (summary,) = run_eval(config, self.store, self.console)
        self.runs[name] = summary.run_id
