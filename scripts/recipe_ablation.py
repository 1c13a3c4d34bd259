"""The CPU recipe's ablation (docs/training.md, "Which variants matter"): `configs/train/cpu-tiny.yaml`
with one field changed at a time, each variant trained whole (warm start included) at each seed, then
compared with its start by `orchestra train evidence` on the validation split (recipe choices are made
there; the test split is for the figures a report gives).

    python scripts/recipe_ablation.py --out /tmp/ablation --seeds 0,1,2                 # every variant, 3 seeds
    python scripts/recipe_ablation.py --out /tmp/ablation --variant recipe --variant utility
    python scripts/recipe_ablation.py --out /tmp/ablation --table                       # what is there
    python scripts/recipe_ablation.py --out /tmp/ablation --table --split test          # reported figures

Each variant and seed trains into `<out>/<name>-s<seed>` with its own store `<out>/<name>-s<seed>.duckdb`
(so two processes can run different ones at once); a finished one is not retrained. The table has a row
per variant and seed, and a pooled row per variant over its seeds (`trainer.evidence.pooled_contrasts`),
and runs a finished run's evidence where it is not logged yet (the harness skips logged rollouts).
Columns, each trained - start with its 95% CI over tasks: the instruction-following contrast (cost-saving
vs accuracy-only, training and held-out wordings), the best fair baseline's contrast and trained - it (the
start greedy and at T 0.5 / 0.7, fixed routes, and the seed's `rft` and `sft-all` models where trained:
rejection-sampling fine-tuning on the same rollouts, the warm start on every training task), accuracy
under accuracy-only, cost under cost-saving,
latency under accuracy-only and U pooled over the training instructions; then, from `train_metrics`, the
share of informative groups and of malformed rounds over the run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from rich.console import Console

from lab.errors import LabInputError
from lab.store import Store, queries
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.evidence import HELD_OUT_WORDINGS, Evidence, evidence_plan, gather_evidence, pooled_contrasts
from trainer.fingerprint import reuse_decision, warm_start_fingerprint
from trainer.sft import train_sft, warm_start_dir, warm_start_options
from trainer.train import run_training, train_run_id

RECIPE = Path(__file__).resolve().parents[1] / "configs" / "train" / "cpu-tiny.yaml"
#: The recipe's warm start, read once: the `sft-all` baseline changes only its task limit.
RECIPE_WARM_START: dict[str, Any] = yaml.safe_load(RECIPE.read_text())["warm_start"]
#: Variant name -> the fields it changes in the recipe (the paper's Eq. 2 with its three filters).
VARIANTS: dict[str, dict[str, Any]] = {
    "recipe": {},
    # fair baselines at equal compute, compared with each GRPO variant through its evidence
    "rft": {"advantage_estimator": "rft"},   # rejection-sampling fine-tuning on the same rollouts
    "sft-all": {"warm_start": {**RECIPE_WARM_START, "limit": None}},   # the warm start on every training task
    # the U-scaled reward: the learning curve's U, every cent charged (docs/training.md says why it is a variant)
    "utility": {"reward_scale": "utility", "reward_cost_ref_usd": 0.05},
    "eq2-fixed": {"reward_scale": "fixed"},                                   # Eq. 2, cost on one scale (c_ref 2c)
    "no-format-penalty": {"format_penalty": 0.0},                             # malformed rounds dropped
    "paper-filters": {"filter_invalid": True},                                # out of rounds: dropped (paper)
    "six-instructions": {"training_instructions": []},                        # every training pair
    "warm-start-tasks": {"task_limit": 96},                                   # GRPO on the warm start's tasks
}
ACCURACY_ONLY = "Get the answer right; money is no object."
COST_SAVING = "Be accurate but keep the bill as low as you can."
INSTRUCTIONS = [ACCURACY_ONLY, COST_SAVING, HELD_OUT_WORDINGS]
#: Variants that are baselines, not GRPO recipes: `sft-all` is a warm start only (no GRPO run).
BASELINE_VARIANTS = ("rft", "sft-all")


def parse_seeds(text: str) -> list[int]:
    """`0,1,2` as [0, 1, 2]; an empty or malformed list is one line naming what is wrong."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise LabInputError(f"--seeds {text!r}: name at least one seed (e.g. 0,1,2)")
    try:
        seeds = [int(part) for part in parts]
    except ValueError:
        raise LabInputError(f"--seeds {text!r}: seeds are integers separated by commas") from None
    if len(set(seeds)) < len(seeds):
        raise LabInputError(f"--seeds {text!r}: a seed is listed twice")
    return seeds


def variant_config(name: str, out: Path, seed: int = 0) -> OrchestraGRPOConfig:
    """The recipe with the variant's fields at `seed`, training into `out/name-s<seed>`, logging beside it."""
    folder = f"{name}-s{seed}"
    return OrchestraGRPOConfig.from_yaml(RECIPE, run_name=f"ablation-{folder}", output_dir=str(out / folder),
                                         db=str(out / f"{folder}.duckdb"), seed=seed, **VARIANTS[name])


def share_warm_start(config: OrchestraGRPOConfig, out: Path, console: Console) -> None:
    """Copy another run's warm start when its fingerprint is what this one would make: the same start for
    every variant of a seed that leaves it alone, and minutes saved."""
    target = warm_start_dir(config)
    if target.exists():
        return
    expected = warm_start_fingerprint(config, warm_start_options(config))
    for other in sorted(out.glob("*/warm-start")):
        reuse, _ = reuse_decision(other, expected)
        if reuse:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(other, target)
            console.print(f"{config.run_name}: warm start copied from {other}")
            return


def train_variant(name: str, seed: int, out: Path, console: Console) -> None:
    """Train one variant at one seed unless its run finished (its evidence is `table`'s, run once there);
    `sft-all` trains its warm start only."""
    config = variant_config(name, out, seed)
    store = Store(Path(config.db))
    if name == "sft-all":
        if not (warm_start_dir(config) / "config.json").is_file():
            train_sft(config, store, TrainingEnvironment(config), console)
    elif queries.run_status(store, train_run_id(config)) != "finished":
        share_warm_start(config, out, console)
        run_training(config, store, console, resume=any(Path(config.output_dir).glob("checkpoint-*")))


def _ci(row: Any, percent: bool = False) -> str:
    shown = "{:+.0%}" if percent else "{:+.3f}"
    return f"{shown.format(row.delta)} [{shown.format(row.ci_low)}, {shown.format(row.ci_high)}]"


def _contrast_cells(contrasts: pd.DataFrame) -> dict[str, str]:
    rows = contrasts[(contrasts.measure == "log cost_usd ratio")].set_index("wording")
    return {f"contrast, {wording}": _ci(rows.loc[wording]) if wording in rows.index else "-"
            for wording in ("training wording", "held-out wording")}


def _best(evidence: Evidence) -> str:
    best = evidence.best_baseline("training wording")
    return "-" if best is None else f"{best['name']} ({best.contrast:+.3f}); trained - it {_ci(best)}"


def seed_row(name: str, seed: int, evidence: Evidence, metrics: pd.DataFrame, batch: int) -> dict[str, str]:
    """One variant at one seed: its evidence's contrasts and deltas, and its run's filter shares."""
    pooled = evidence.checks[evidence.checks.check.str.startswith("U higher")].iloc[0]
    deltas = evidence.deltas.set_index(["instruction", "measure"])
    rounds = metrics["rounds/per_trajectory"] * batch
    return {
        "variant": name, "seed": str(seed), **_contrast_cells(evidence.contrasts),
        "best fair baseline (training wording)": _best(evidence),
        "accuracy-only: accuracy": _ci(deltas.loc[(ACCURACY_ONLY, "accuracy")]),
        "cost-saving: cost": _ci(deltas.loc[(COST_SAVING, "cost")], percent=True),
        "accuracy-only: latency (s)": _ci(deltas.loc[(ACCURACY_ONLY, "latency")]),
        "U, pooled": f"{pooled.value:+.3f} [{pooled.ci_low:+.3f}, {pooled.ci_high:+.3f}]",
        "informative groups": f"{metrics['groups/informative'].mean():.0%}",
        "malformed rounds": f"{(metrics['rounds/skipped_format'] / rounds).mean():.1%}",
    }


def fair_models(out: Path, seed: int) -> dict[str, str]:
    """The trained baselines of a seed that exist: RFT's model and the warm start on every training task."""
    rft, sft_all = variant_config("rft", out, seed), variant_config("sft-all", out, seed)
    found = {"rft": Path(rft.output_dir), "sft-all": warm_start_dir(sft_all)}
    return {name: str(folder) for name, folder in found.items() if (folder / "config.json").is_file()}


def table(out: Path, names: list[str], seeds: list[int], split: str, console: Console) -> pd.DataFrame:
    """A row per named GRPO variant and seed whose training finished, then a pooled row per variant over its
    finished seeds: evidence run where its runs are not logged yet (with the fair baselines, the seed's
    RFT and SFT-on-all models among them), read from the store where they are."""
    rows = []
    for name in names:
        if name in BASELINE_VARIANTS:
            continue
        parts, plan = [], None
        for seed in seeds:
            config = variant_config(name, out, seed)
            if not Path(config.db).is_file():
                continue
            store = Store(Path(config.db))
            if queries.run_status(store, train_run_id(config)) != "finished":
                continue
            evidence = gather_evidence(config, store, console, instructions=INSTRUCTIONS, split=split,
                                       baseline_models=fair_models(out, seed))
            metrics = queries.train_metrics_df(store, train_run_id(config))
            rows.append(seed_row(name, seed, evidence, metrics, config.per_device_train_batch_size))
            parts.append((queries.trajectories_df(store, list(evidence.run_ids.values())), evidence.run_ids))
            if plan is None:   # every seed's evidence answers the same tasks, samples and instructions
                plan = evidence_plan(config, samples=evidence.samples, instructions=INSTRUCTIONS, split=split,
                                     baselines=False)
        if plan is not None and len(parts) > 1:
            rows.append({"variant": name, "seed": f"pooled ({len(parts)})",
                         **_contrast_cells(pooled_contrasts(parts, plan))})
    return pd.DataFrame(rows).fillna("")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder for the variants' models and stores.")
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), help="Only these (repeat).")
    parser.add_argument("--seeds", default="0,1,2", help="Seeds of the whole recipe, comma-separated (default 0,1,2).")
    parser.add_argument("--split", default="validation", choices=["validation", "test"],
                        help="Where the evidence compares (validation for choices, test for reported figures).")
    parser.add_argument("--table", action="store_true", help="Print the table of the finished runs only.")
    args = parser.parse_args()
    try:
        seeds = parse_seeds(args.seeds)
    except LabInputError as exc:
        print(f"error: {exc}", file=sys.stderr)   # one line, exit 2, before anything is written
        sys.exit(2)
    console = Console(stderr=True)
    names = args.variant or list(VARIANTS)
    if not args.table:
        args.out.mkdir(parents=True, exist_ok=True)
        for seed in seeds:
            for name in names:
                console.rule(f"{name}, seed {seed}")
                train_variant(name, seed, args.out, console)
    frame = table(args.out, names, seeds, args.split, console)
    if frame.empty:
        sys.exit(f"{args.out}: no finished variant yet")
    print(markdown(frame))


def markdown(frame: pd.DataFrame) -> str:
    """The table as docs/training.md shows it."""
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + " --- |" * len(frame.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
