"""What `orchestra demo` runs: the compared orchestrators, the sweep of the trained one, and two sizes.

Every run gets a fixed name, so the hints the demo prints, the README and the docs can say
`orchestra report cascade trained` before any run id exists (the CLI resolves a name to its newest run).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.errors import LabInputError

#: The train config the demo trains (the CPU recipe), in the checkout the lab is installed from; its
#: `output_dir` (runs/cpu-tiny) is relative to where the demo runs, as for `orchestra train`.
TRAIN_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "train" / "cpu-tiny.yaml"

#: Scripted baselines by run name: the cascade, always-the-strongest, the paper's biased prompted
#: orchestrators (Fig. 3 emulations), the best fixed route per family chosen on the train split (the
#: non-privileged anchor a trained orchestrator must beat) and the oracle, a privileged upper bound
#: that reads the grader.
BASELINES = {
    "cascade": "scripted:cheapest-first",
    "strongest": "scripted:always-strongest",
    "qwen3-8b-prompted": "scripted:qwen3-8b-prompted",
    "gpt-5-prompted": "scripted:gpt-5-prompted",
    "best-route": "scripted:best-route",
    "oracle": "scripted:oracle",
}
#: The runs the demo compares, in the order its tables and the dashboard's default selections show them.
COMPARED = (*BASELINES, "warm-start", "trained")
#: The three instructions the trained orchestrator is swept over (each P has three held-out wordings).
SWEEP_PREFERENCES = {"accuracy": "outcome=1", "cost": "outcome=1,compute=0.8", "speed": "outcome=1,latency=0.9"}
#: The same two preferences in the wordings of the training pairs (lab/data/preferences.yaml), at the compared
#: budget: the instruction the model was trained on, where the sweep's P strings take held-out wordings.
TRAIN_WORDINGS = {"accuracy": ("outcome=1", "Get the answer right; money is no object."),
                  "cost": ("outcome=1,compute=1", "Be accurate but keep the bill as low as you can.")}
#: Runs that read what a deployed orchestrator cannot (the oracle reads the grader): off the frontier.
PRIVILEGED = ("oracle",)
HELD_OUT_PRICING = "deepinfra"


@dataclass(frozen=True)
class DemoPlan:
    """One size of the demo: how many test tasks each run answers (SmolLM2 the first `smollm2_tasks` of
    them: a 135M model prefilling ~800-token prompts costs ~7 CPU-seconds a task, where the tiny trained
    model costs a fraction of one), the turn budget of the compared runs (baselines, SmolLM2, warm
    start, trained), the budgets of the sweep, and what the training changes."""

    tasks: int
    smollm2_tasks: int
    compared_turns: int
    turn_budgets: tuple[int, ...]
    train_overrides: dict[str, Any] = field(default_factory=dict)
    evidence_tasks: int | None = None     # GRPO against its start (trainer.evidence): None = the whole eval split
    evidence_samples: int | None = None   # rollouts per task and run there; None = its default, sized for power

    def train_config(self, store_path: Path) -> Any:
        """`configs/train/cpu-tiny.yaml` with this plan's overrides, logging into the demo's store."""
        from trainer.config import OrchestraGRPOConfig

        if not TRAIN_CONFIG.is_file():
            raise LabInputError(f"{TRAIN_CONFIG}: not found; install the lab from its checkout (pip install -e .)")
        return OrchestraGRPOConfig.from_yaml(TRAIN_CONFIG, db=str(store_path), **self.train_overrides)


#: The full demo: cpu-tiny as written (warm start + 80 GRPO steps, its learning curve under both training
#: instructions at steps 0, 20, 40, 60, 80 on 24 validation tasks), then GRPO against its start on every test task x 4
#: samples: the same model and train run as `orchestra train --config configs/train/cpu-tiny.yaml`.
FULL = DemoPlan(tasks=40, smollm2_tasks=2, compared_turns=20, turn_budgets=(10, 20, 50))

#: `--quick`: every stage at toy size (tests, a first look). Its barely trained model rarely answers, so
#: it runs to the turn budget: short budgets keep the stage in seconds. Its model and runs are kept
#: apart from the full demo's (another output_dir and run name, so another train run id).
QUICK = DemoPlan(tasks=6, smollm2_tasks=3, compared_turns=4, turn_budgets=(2, 4, 8), evidence_tasks=4,
                 evidence_samples=1, train_overrides={
    "run_name": "cpu-tiny-quick", "output_dir": "runs/cpu-tiny-quick", "max_steps": 2, "task_limit": 16,
    "examples_per_task": 1, "per_device_train_batch_size": 8, "lab_eval_steps": 1, "lab_eval_limit": 4,
    "save_steps": 2,
    "warm_start": {"orchestrators": ["scripted:cheapest-first", "scripted:always-strongest"], "limit": 16,
                   "examples_per_task": 1, "epochs": 1, "learning_rate": 0.003, "batch_size": 8},
})


def trained_name(preference: str, max_turns: int, wording: str = "") -> str:
    """Run name of one sweep point, e.g. `trained-cost-t20`, or with the training wording `trained-train-cost-t20`."""
    return f"trained-{wording + '-' if wording else ''}{preference}-t{max_turns}"
