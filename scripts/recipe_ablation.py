"""The CPU recipe's ablation (docs/training.md, "Which variants matter"): `configs/train/cpu-tiny.yaml`
with one field changed at a time, each trained from the same warm start where the change leaves it
alone, then compared with its start by `orchestra train evidence` under the training instructions.

    python scripts/recipe_ablation.py --out /tmp/ablation                          # every variant (~2 h on 2 cores)
    python scripts/recipe_ablation.py --out /tmp/ablation --variant recipe --variant eq2-group
    python scripts/recipe_ablation.py --out /tmp/ablation --table                  # the table of what is there

Each variant trains into `<out>/<name>` with its own store `<out>/<name>.duckdb` (so two processes can
run different variants at once); a finished variant is not retrained. The table is of the variants
named (all when none is), and runs a finished variant's evidence where it is not logged yet (the
harness skips logged rollouts). Columns: trained - start of U pooled over the training instructions
(95% CI over tasks), accuracy under accuracy-only, cost under cost-saving, and from `train_metrics`
the share of informative groups and of malformed rounds over the run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console

from lab.store import Store, queries
from trainer.config import OrchestraGRPOConfig
from trainer.evidence import gather_evidence
from trainer.fingerprint import reuse_decision, warm_start_fingerprint
from trainer.sft import warm_start_dir, warm_start_options
from trainer.train import run_training, train_run_id

RECIPE = Path(__file__).resolve().parents[1] / "configs" / "train" / "cpu-tiny.yaml"
#: Variant name -> the fields it changes in the recipe (the paper's choices, and the levers the recipe uses).
VARIANTS: dict[str, dict[str, Any]] = {
    "recipe": {},
    "eq2-group": {"reward_scale": "group"},                                   # the paper's Eq. 2
    "eq2-fixed": {"reward_scale": "fixed", "reward_cost_ref_usd": 0.02},      # Eq. 2 on one scale
    "utility-c2": {"reward_cost_ref_usd": 0.02},                              # U with c_ref 2c
    "no-format-penalty": {"format_penalty": 0.0},                             # malformed rounds dropped
    "budget-filtered": {"filter_invalid": True},                              # out of rounds: dropped
    "six-instructions": {"training_instructions": []},                        # every training pair
    "warm-start-tasks": {"task_limit": 96},                                   # GRPO on the warm start's tasks
}
ACCURACY_ONLY = "Get the answer right; money is no object."
COST_SAVING = "Be accurate but keep the bill as low as you can."


def variant_config(name: str, out: Path) -> OrchestraGRPOConfig:
    """The recipe with the variant's fields, training into `out/name`, logging into `out/name.duckdb`."""
    return OrchestraGRPOConfig.from_yaml(RECIPE, run_name=f"ablation-{name}", output_dir=str(out / name),
                                         db=str(out / f"{name}.duckdb"), **VARIANTS[name])


def share_warm_start(config: OrchestraGRPOConfig, out: Path, console: Console) -> None:
    """Copy another variant's warm start when its fingerprint is what this variant would make: the same
    start for every variant that leaves it alone, and minutes saved."""
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


def train_variant(name: str, out: Path, console: Console) -> None:
    """Train one variant unless its run finished (its evidence is `table`'s, run once there)."""
    config = variant_config(name, out)
    store = Store(Path(config.db))
    if queries.run_status(store, train_run_id(config)) != "finished":
        share_warm_start(config, out, console)
        run_training(config, store, console, resume=any(Path(config.output_dir).glob("checkpoint-*")))


def table(out: Path, names: list[str], console: Console) -> pd.DataFrame:
    """One row per named variant whose training finished: its evidence, run where its runs are not logged
    yet and read from the store where they are."""
    rows = []
    for name in names:
        config = variant_config(name, out)
        if not Path(config.db).is_file():
            continue
        store = Store(Path(config.db))
        if queries.run_status(store, train_run_id(config)) != "finished":
            continue
        evidence = gather_evidence(config, store, console, instructions=[ACCURACY_ONLY, COST_SAVING])
        pooled = evidence.checks[evidence.checks.check.str.startswith("U higher")].iloc[0]
        deltas = evidence.deltas.set_index(["instruction", "measure"])
        accuracy, cost = deltas.loc[(ACCURACY_ONLY, "accuracy")], deltas.loc[(COST_SAVING, "cost")]
        metrics = queries.train_metrics_df(store, train_run_id(config))
        rounds = metrics["rounds/per_trajectory"] * config.per_device_train_batch_size
        rows.append({
            "variant": name, "changes": ", ".join(f"{k}: {v}" for k, v in VARIANTS[name].items()) or "(the recipe)",
            "U, trained - start [95% CI]": f"{pooled.value:+.3f} [{pooled.ci_low:+.3f}, {pooled.ci_high:+.3f}]",
            "accuracy-only: accuracy": f"{accuracy.delta:+.3f} [{accuracy.ci_low:+.3f}, {accuracy.ci_high:+.3f}]",
            "cost-saving: cost": f"{cost.delta:+.0%} [{cost.ci_low:+.0%}, {cost.ci_high:+.0%}]",
            "informative groups": f"{metrics['groups/informative'].mean():.0%}",
            "malformed rounds": f"{(metrics['rounds/skipped_format'] / rounds).mean():.1%}",
        })
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder for the variants' models and stores.")
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), help="Only these (repeat).")
    parser.add_argument("--table", action="store_true", help="Print the table of the finished variants only.")
    args = parser.parse_args()
    console = Console(stderr=True)
    names = args.variant or list(VARIANTS)
    if not args.table:
        args.out.mkdir(parents=True, exist_ok=True)
        for name in names:
            console.rule(name)
            train_variant(name, args.out, console)
    frame = table(args.out, names, console)
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
