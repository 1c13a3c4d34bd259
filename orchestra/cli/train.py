"""`orchestra train`: GRPO on the lab's rollouts (`trainer/`), and `orchestra train sft`, its warm start."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from lab.store import open_store
from orchestra.cli.options import DbOption, console
from orchestra.cli.root import app

train_app = typer.Typer(help="Train an orchestrator: GRPO over multi-turn tool rollouts (paper "
                             "§3.2), or its SFT warm start.",
                        invoke_without_command=True, no_args_is_help=True)
app.add_typer(train_app, name="train")

ConfigOption = typer.Option(..., "--config",
                            help="Train config YAML (configs/train/*.yaml; fields: trainer/config.py).")
MaxStepsOption = typer.Option(None, "--max-steps", min=1, help="Stop after N optimizer steps (overrides the config).")


OutputDirOption = typer.Option(None, "--output-dir",
                               help="Checkpoints and the model go here (overrides the config's output_dir).")


def _load(config: Path, max_steps: int | None, db: str | None, output_dir: str | None = None, warm_start: bool = False,
          curve: bool = False, learning_check: bool = False):
    """The checked config, then its store (a refused config opens none); `warm_start`: it must have one;
    `curve`: its learning curve's tasks and instructions must be readable (`trainer.curve.eval_set`);
    `learning_check`: its `learning_check` section must hold (`trainer.check.check_spec`)."""
    from trainer.check import check_spec
    from trainer.config import OrchestraGRPOConfig
    from trainer.curve import eval_set
    from trainer.sft import warm_start_options

    loaded = OrchestraGRPOConfig.from_yaml(config, max_steps=max_steps, output_dir=output_dir)
    if warm_start:
        warm_start_options(loaded)
    if curve:
        eval_set(loaded)
    if learning_check:
        check_spec(loaded)
    return loaded, open_store(db or loaded.db)


@train_app.callback()
def train(
    ctx: typer.Context,
    config: Path = typer.Option(None, "--config",
                                help="Train config YAML (configs/train/*.yaml; fields: trainer/config.py)."),
    max_steps: int | None = MaxStepsOption,
    db: str | None = DbOption,
    resume: bool = typer.Option(False, "--resume",
                                help="Continue from the last checkpoint in the config's output_dir."),
    output_dir: str | None = OutputDirOption,
    nproc: int = typer.Option(1, "--nproc", min=1, help="Ranks to start on this machine (torchrun's launcher; one "
                                                        "line names a rank that fails). Across machines: torchrun "
                                                        "--nnodes ... -m orchestra train ..."),
) -> None:
    ("GRPO: `orchestra train --config configs/train/cpu-tiny.yaml [--max-steps N] [--db PATH] "
     "[--output-dir DIR] [--resume] [--nproc N]`.")
    if ctx.invoked_subcommand is not None:
        return
    if config is None:
        raise typer.BadParameter("--config FILE is required", param_hint="--config")
    from trainer.train import run_training

    loaded, store = _load(config, max_steps, db, output_dir, curve=True)  # refused here, before any rank starts
    if nproc > 1:
        from trainer.launch import launch

        options = {"--config": config, "--max-steps": max_steps, "--db": store.path, "--output-dir": output_dir}
        launch(nproc, [*(str(x) for flag, value in options.items() if value is not None for x in (flag, value)),
                       *(["--resume"] if resume else [])])
        return
    if int(os.environ.get("RANK", "0")) > 0:  # one rank speaks for a launch; errors still reach stderr
        console.quiet = True
    summary = run_training(loaded, store, console, resume=resume)
    console.print(f"trained {summary.steps} steps: run {summary.run_id}, model in {summary.model_dir}")
    console.print(f"next: orchestra runs --db {store.path}")
    console.print(f"next: orchestra eval --orchestrator hf:{summary.model_dir} --toolkit {loaded.toolkit} "
                  f"--preference held-out {loaded.eval_flags()} --limit 24 --db {store.path}")


@train_app.command("sft")
def sft(
    config: Path = ConfigOption,
    db: str | None = DbOption,
) -> None:
    """Warm start: SFT on the solved rollouts of the config's `warm_start.orchestrators` (run on the train split)."""
    from trainer.environment import TrainingEnvironment
    from trainer.sft import train_sft

    loaded, store = _load(config, None, db, warm_start=True)
    folder = train_sft(loaded, store, TrainingEnvironment(loaded), console)
    console.print(f"warm-start model in {folder}")


@train_app.command("check")
def check(
    config: Path = ConfigOption,
    db: str | None = DbOption,
    control: bool = typer.Option(True, "--control/--no-control",
                                 help="Also run the controls (`learning_check.controls`; default: the advantage's "
                                      "sign flipped), each of which must fail."),
) -> None:
    ("Learning check: GRPO from a format-only start must raise the probability of the known best call under each "
     "of the config's instructions (`learning_check`) to its threshold; exit 1 when it does not, or when a control "
     "passes too.")
    import time

    from trainer.check import print_check, run_check

    loaded, store = _load(config, None, db, learning_check=True)
    began = time.monotonic()
    result = run_check(loaded, store, console, control=control)
    print_check(result, console)
    minutes = (time.monotonic() - began) / 60
    if not result.passed:
        console.print(f"learning check FAILED ({minutes:.1f} min): the lowest P(best call) reached "
                      f"{result.learning.final:.3f}, not {result.spec.threshold:g}: GRPO did not move this model "
                      "toward the higher reward under every instruction")
        raise typer.Exit(1)
    passed = [run.label for run in result.controls if run.final >= result.spec.threshold]
    if passed:
        console.print(f"learning check FAILED ({minutes:.1f} min): the control {passed[0]} reached the threshold "
                      "too, so the reward does not reach the update the way the check needs")
        raise typer.Exit(1)
    console.print(f"learning check passed in {minutes:.1f} min: GRPO moves this model toward the higher reward"
                  + (" under each instruction" if result.spec.conditional else "")
                  + (f", and every control ({', '.join(run.label for run in result.controls)}) fails"
                     if result.controls else ""))


@train_app.command("evidence")
def evidence(
    config: Path = ConfigOption,
    db: str | None = DbOption,
    output_dir: str | None = OutputDirOption,
    tasks: int | None = typer.Option(None, "--tasks",
                                     help="The first N eval tasks (default: all of the config's families)."),
    limit: int | None = typer.Option(None, "--limit", hidden=True, help="Old name of --tasks."),
    samples: int | None = typer.Option(None, "--samples",
                                       help="Rollouts per task, model and instruction, sampled at the config's "
                                            "temperature (default 4: sized for the target half-widths)."),
    instruction: list[str] | None = typer.Option(None, "--instruction",
                                                 help="Only these instructions (repeat): a training wording, "
                                                      "`held-out`, `held-out-wordings` (the cost comparison "
                                                      "in the held-out wordings), `held-out-prices` or "
                                                      "`held-out-tools` (the training cost pair under prices or a "
                                                      "tool subset training never drew)."),
    target_accuracy: float = typer.Option(0.05, "--accuracy-ci",
                                          help="95% CI half-width to reach for the accuracy difference."),
    target_cost: float = typer.Option(0.10, "--cost-ci",
                                      help="95% CI half-width to reach for the cost ratio (0.10 = 10%)."),
    html: Path | None = typer.Option(None, "--html", help="Also write the forest plot of the deltas to this file."),
    split: str = typer.Option("test", "--split", help="Tasks to compare on: validation (for recipe choices) or test "
                                                      "(for reported figures)."),
    baseline: list[str] | None = typer.Option(None, "--baseline",
                                              help="Also compare with this model, NAME=DIR (repeat): e.g. one trained "
                                                   "by rejection sampling from the same rollouts."),
    baselines: bool = typer.Option(True, "--baselines/--no-baselines",
                                   help="Run the fair baselines: the start greedy and at T 0.5/0.7, fixed routes."),
) -> None:
    ("Did GRPO improve on its start? The start and the trained model on the same tasks and samples, per training "
     "instruction and under held-out pairs: paired deltas of accuracy, cost, latency and U with 95% CIs, and the "
     "behaviour checks.")
    from lab.errors import LabInputError
    from trainer.config import OrchestraGRPOConfig
    from trainer.evidence import DEFAULT_SAMPLES, evidence_plan, gather_evidence, print_evidence

    if tasks is not None and limit is not None and tasks != limit:
        raise LabInputError(f"--tasks {tasks} and --limit {limit}: give one (--limit is the old name of --tasks)")
    tasks = tasks if tasks is not None else limit
    if min(target_accuracy, target_cost) <= 0:
        raise LabInputError(f"target half-widths {target_accuracy:g} (accuracy), {target_cost:g} (cost): both must be "
                            "positive")
    samples = DEFAULT_SAMPLES if samples is None else samples
    loaded = OrchestraGRPOConfig.from_yaml(config, output_dir=output_dir)
    models = {}
    for item in baseline or []:
        name, sep, folder = item.partition("=")
        if not (sep and name and folder):
            raise LabInputError(f"--baseline {item!r}: expected NAME=DIR (a model directory)")
        models[name] = folder
    # bad input: one line, before the store or any model
    evidence_plan(loaded, tasks, samples, instruction, split, baselines, models)
    store = open_store(db or loaded.db)
    result = gather_evidence(loaded, store, console, tasks, samples, instruction,
                             targets={"accuracy": target_accuracy, "cost": target_cost}, split=split,
                             baselines=baselines, baseline_models=models)
    print_evidence(result, console)
    if html is not None:
        from lab.report.html import report_html, write_report

        tables = {"Instruction following: contrast between instructions, start and trained": result.contrasts,
                  "Trained - start, paired (95% CIs over tasks)": result.deltas,
                  "Fair baselines: contrast beside the trained model's": result.baselines,
                  "Per task family": result.families, "Which way the training updates pushed": result.pulls,
                  "Behaviour checks": result.checks,
                  "Half-widths and sample sizes": result.power}
        write_report(html, report_html("Instruction following and GRPO against its start", result.lines(), tables,
                                       {"paired_deltas": result.figure()}))
        console.print(f"report: {html}")
