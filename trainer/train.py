"""`run_training`: everything `orchestra train --config FILE` does, in order.

1. Build the environment (tasks, grader, toolkits per provider) and the randomised examples.
2. Resolve the model (building `tiny-qwen3` if needed); with `warm_start`, SFT it first (reused later).
3. Record a `kind='train'` run, whose id is a hash of the config (so `--resume` finds it again).
4. GRPO through `OrchestraGRPOTrainer`, checkpointing into `output_dir`; `--resume` continues from the
   last checkpoint, rewriting the rollouts and metrics of the steps it repeats.
5. The learning curve (`trainer.curve`): evaluate the live policy on fixed eval tasks x instructions at
   step 0, every `lab_eval_steps` and after the last step; save the final model to `output_dir` (evaluate
   it later with `orchestra eval --orchestrator hf:<output_dir>`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from lab.errors import LabInputError
from lab.records import RunRecord, RunStatus, git_sha, utcnow
from lab.store import Store, queries
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment

#: Config fields that do not change what is trained: changing them continues the same run.
_NOT_IDENTITY = {"max_steps", "output_dir", "logging_dir", "report_to", "db", "lab_eval_steps", "lab_eval_limit",
                 "lab_eval_instructions", "lab_eval_samples", "save_steps", "save_total_limit",
                 "resume_from_checkpoint", "disable_tqdm"}


@dataclass
class TrainSummary:
    run_id: str
    model_dir: Path
    start_model: Path
    steps: int
    eval_run_ids: list[str]
    trainer: Any  # the OrchestraGRPOTrainer, for callers that inspect it (tests, notebooks)


def train_run_id(config: OrchestraGRPOConfig) -> str:
    identity = {k: v for k, v in config.to_dict().items() if k not in _NOT_IDENTITY}
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{config.run_name or 'train'}-{digest}"


def run_training(config: OrchestraGRPOConfig, store: Store, console: Console, resume: bool = False) -> TrainSummary:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.callbacks import EvalCallback, MetricsCallback, quiet_trainer
    from trainer.curve import CurveEvaluator, eval_set
    from trainer.fingerprint import record_trained_model, training_fingerprint
    from trainer.grpo import OrchestraGRPOTrainer
    from trainer.models import lora_for, resolve_model
    from trainer.ranks import fold_spool, rank_store, stopped_by_launcher, warm_start_once

    run_id = train_run_id(config)
    if not resume and queries.run_status(store, run_id) == "finished":
        raise LabInputError(f"train run {run_id} of this config already finished in {store.path} (model in "
                            f"{config.output_dir}); --resume continues it, and a copy of the config with another "
                            "run_name and output_dir trains anew")
    evals = eval_set(config)  # the learning curve's tasks and instructions: refused now, not at step 0
    # LoRA through TRL's peft_config, its target modules checked on the base model before any warm start
    peft_config = (lora_for(resolve_model(config.model, config.tiny_model, config.seed), config.lora)
                   if config.lora else None)
    environment = TrainingEnvironment(config)
    examples = environment.examples()
    console.print(f"train: {len(environment.tasks)} tasks x {config.examples_per_task} randomised examples, "
                  f"G = {config.num_generations}, toolkit {config.toolkit}")
    from accelerate import PartialState

    state = PartialState()
    store = rank_store(store, state)  # on several ranks: spooled, no rank waits on another's lock
    if config.warm_start:
        source = warm_start_once(config, store, environment, console, state)
    else:
        with state.main_process_first():  # one rank builds the tiny model, the others then reuse it
            source = resolve_model(config.model, config.tiny_model, config.seed)
    checkpoint = _last_checkpoint(Path(config.output_dir)) if resume else None
    if resume and checkpoint is None:
        raise LabInputError(f"--resume: no checkpoint in {config.output_dir}; run without --resume first")
    record = RunRecord(
        run_id=run_id, kind="train", name=config.run_name or "", benchmark=environment.source.benchmark,
        orchestrator=f"hf:{config.output_dir}",
        config_json=json.dumps({**config.to_dict(), "start_model": str(source)}, default=str),
        toolkit_json=environment.toolkit.model_dump_json(), pricing="randomised", git_sha=git_sha(),
        started_at=utcnow(),
    )
    if state.is_main_process:  # one row per run, whatever the number of ranks
        store.write_run(record)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source)
    metrics = MetricsCallback(store, run_id, console, config.max_steps if config.max_steps > 0 else 0)
    # the curve's runs carry what made this training (code, data, warm start): a run retrained under the same id
    # after a change gets fresh points instead of the stale ones the harness would resume
    stamp = training_fingerprint(config, run_id, source).digest[:8]
    evaluator = CurveEvaluator(config, store, console, tokenizer, run_id, evals, stamp, ranks=state)
    evaluate = EvalCallback(evaluator, config.lab_eval_steps)
    callbacks: list[Any] = [metrics, evaluate]
    reader = None
    if config.learning_check:  # a known best call: its probability on fixed prompts, every step (`trainer.probe`)
        from trainer.check import training_probe
        from trainer.probe import ProbeCallback

        reader = ProbeCallback(training_probe(config, environment, tokenizer), store, run_id)
        callbacks.insert(0, reader)  # before the metrics callback, which writes what it read
    trainer = OrchestraGRPOTrainer(model=model, args=config, environment=environment, store=store, run_id=run_id,
                                   processing_class=tokenizer,
                                   train_dataset=Dataset.from_list([e.row() for e in examples]),
                                   callbacks=callbacks, peft_config=peft_config)
    metrics.trainer = trainer
    if reader is not None:
        reader.trainer = trainer
    quiet_trainer(trainer)
    status: RunStatus = "failed"
    try:
        with stopped_by_launcher(state):
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
            save_trained(trainer, config.output_dir)
            if state.is_main_process:
                record_trained_model(config, run_id, source)  # what made it, so a reuse (the demo's) can check
                tokenizer.save_pretrained(config.output_dir)
            state.wait_for_everyone()  # every rank's rollouts are written
        status = "finished"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        if state.is_main_process:
            store.finish_run(run_id, status)
            if status == "finished":
                fold_spool(store)
    return TrainSummary(run_id=run_id, model_dir=Path(config.output_dir), start_model=Path(source),
                        steps=trainer.state.global_step, eval_run_ids=evaluator.run_ids, trainer=trainer)


def save_trained(trainer: Any, folder: str) -> None:
    """The trained model as a whole model directory: LoRA adapters merged into their base first, so every
    `hf:<folder>` reader (evaluation, evidence, the app) loads it as it loads any model."""
    from accelerate.utils import is_peft_model

    if is_peft_model(trainer.model):
        if trainer.accelerator.is_main_process:
            trainer.model.merge_and_unload().save_pretrained(folder)
        return
    trainer.save_model(folder)


def _last_checkpoint(folder: Path) -> Path | None:
    """The newest complete checkpoint: the Trainer writes `trainer_state.json` last, so a checkpoint a killed
    run left half-written is passed over for the one before it."""
    checkpoints = sorted((p for p in folder.glob("checkpoint-*") if (p / "trainer_state.json").is_file()),
                         key=lambda p: int(p.name.split("-")[-1]) if p.name.split("-")[-1].isdigit() else -1)
    return checkpoints[-1] if checkpoints else None
