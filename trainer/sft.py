"""Warm start: supervised fine-tuning on successful trajectories from the store (`orchestra train sft`).

Why: a randomly initialised or small model rarely emits a well-formed tool call, and GRPO learns
nothing from groups that all fail (they are homogeneous). SFT on solved rollouts of scripted
orchestrators teaches the format and a first routing; GRPO then trades accuracy against cost.

The data are logged rollouts rebuilt as the chat the rollout engine would show an orchestrator:
the system prompt (the run's priced catalog and the task's preference instruction), the question,
then per turn the assistant text (`<think>` reasoning, `<tool_call>`s or `<answer>`) and each tool
response as `lab.rollout.prompt.tool_response_text` wraps it. Only trajectories that solved their task
and passed the format filter are used. TRL's `SFTTrainer` trains on the assistant tokens only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.preference import logged_instruction
from lab.rollout.parse import format_tool_call
from lab.rollout.prompt import system_prompt, tool_response_text
from lab.store import Store, queries
from lab.toolspec import Toolkit
from trainer.config import OrchestraGRPOConfig
from trainer.models import CHATML_TRAINING_TEMPLATE, resolve_model

WARM_START_KEYS = {"orchestrators", "preferences", "limit", "epochs", "learning_rate", "batch_size", "max_length"}


def warm_start_options(config: OrchestraGRPOConfig) -> dict[str, Any]:
    options = dict(config.warm_start or {})
    unknown = sorted(set(options) - WARM_START_KEYS)
    if unknown:
        raise LabInputError(f"warm_start: unknown key '{unknown[0]}' (known: {', '.join(sorted(WARM_START_KEYS))})")
    if not options.get("orchestrators"):
        raise LabInputError("warm_start.orchestrators: name the orchestrators whose solved rollouts to learn from")
    return {"preferences": [None], "limit": None, "epochs": 2, "learning_rate": 1e-3, "batch_size": 8,
            "max_length": 4096, **options}


def collect_runs(config: OrchestraGRPOConfig, store: Store, task_ids: list[str], console: Console) -> list[str]:
    """Run (or resume: finished rollouts are reused) the warm-start orchestrators on the training tasks."""
    options = warm_start_options(config)
    run_ids = []
    for orchestrator in options["orchestrators"]:
        eval_config = EvalConfig.build(
            benchmark=config.benchmark, split=config.train_split, orchestrator=orchestrator, toolkit=config.toolkit,
            preferences=[p for p in options["preferences"] if p is not None], tasks=task_ids[: options["limit"]],
            max_turns=[config.max_turns], observation_chars=config.observation_chars, seed=config.seed, run_name=f"warm-start-{orchestrator.split(':')[-1]}",
        )
        run_ids += [s.run_id for s in run_eval(eval_config, store, console)]
    return run_ids


def sft_conversations(store: Store, run_ids: list[str], observation_chars: int) -> list[list[dict[str, str]]]:
    """The solved, well-formed trajectories of these runs as chat messages (see the module docstring)."""
    runs = queries.runs_df(store).set_index("run_id")
    trajectories = queries.trajectories_df(store, run_ids)
    solved = trajectories[(trajectories.outcome == 1) & trajectories.format_ok & trajectories.valid_output]
    questions = queries.tasks_df(store).set_index(["benchmark", "task_id"]).question
    conversations = []
    for run_id, group in solved.groupby("run_id"):
        run = runs.loc[run_id]
        specs = Toolkit.model_validate_json(run.toolkit_json).tools
        steps = queries.steps_df(store, run_id)
        for traj in group.itertuples():
            mine = steps[(steps.task_id == traj.task_id) & (steps.sample_idx == traj.sample_idx)]
            instruction = logged_instruction(run.config_json, traj.task_id)
            messages = [{"role": "system", "content": system_prompt(specs, instruction)},
                        {"role": "user", "content": questions.loc[(traj.benchmark, traj.task_id)]}]
            messages += _turn_messages(mine, observation_chars)
            conversations.append(messages)
    return conversations


def _turn_messages(steps: Any, observation_chars: int) -> list[dict[str, str]]:
    messages = []
    for _, turn in steps.groupby("turn", sort=True):
        calls = turn[turn.kind == "tool"]
        reasoning = next((r for r in turn.reasoning if r), "")
        think = f"<think>{reasoning}</think>\n" if reasoning else ""
        if len(calls):
            text = "\n".join(format_tool_call(c.tool_name, json.loads(c.arguments_json)) for c in calls.itertuples())
            messages.append({"role": "assistant", "content": think + text})
            messages += [{"role": "tool", "content": tool_response_text(c.tool_name, c.observation, observation_chars)}
                         for c in calls.itertuples()]
        else:
            answer = turn[turn.kind == "answer"]
            if len(answer):
                messages.append({"role": "assistant", "content": f"{think}<answer>{answer.observation.iloc[0]}</answer>"})
    while messages and messages[-1]["role"] == "tool":  # a tool that answers ends the episode unseen
        messages.pop()
    return messages


def warm_start_dir(config: OrchestraGRPOConfig) -> Path:
    """Where the warm-start model of a config is saved: `output_dir/warm-start`."""
    return Path(config.output_dir) / "warm-start"


def train_sft(config: OrchestraGRPOConfig, store: Store, task_ids: list[str], console: Console) -> Path:
    """Warm-start the config's model; returns the folder of the fine-tuned model (reused when present)."""
    target = warm_start_dir(config)
    if (target / "config.json").is_file():
        console.print(f"warm start: reusing {target}")
        return target
    options = warm_start_options(config)
    run_ids = collect_runs(config, store, task_ids, console)
    conversations = sft_conversations(store, run_ids, config.observation_chars)
    if not conversations:
        raise LabInputError(f"warm start: the runs {', '.join(run_ids)} solved no task; nothing to learn from")
    console.print(f"warm start: SFT on {len(conversations)} solved trajectories from {len(run_ids)} runs")

    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    source = resolve_model(config.model, config.tiny_model, config.seed)
    tokenizer = AutoTokenizer.from_pretrained(source)
    if "{% generation %}" not in (tokenizer.chat_template or "") and "<|im_start|>" in (tokenizer.chat_template or ""):
        tokenizer.chat_template = CHATML_TRAINING_TEMPLATE  # ChatML with assistant markers: same rendering
    model = AutoModelForCausalLM.from_pretrained(source)
    args = SFTConfig(
        output_dir=str(target.with_name("warm-start-trainer")), assistant_only_loss=True,
        num_train_epochs=options["epochs"], learning_rate=options["learning_rate"],
        per_device_train_batch_size=options["batch_size"], max_length=options["max_length"],
        use_cpu=config.use_cpu, bf16=config.bf16, gradient_checkpointing=config.gradient_checkpointing, save_strategy="no", report_to=[], logging_steps=10,
        seed=config.seed, disable_tqdm=False, lr_scheduler_type="cosine", warmup_steps=5,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list([{"messages": m} for m in conversations]),
                         processing_class=tokenizer)
    trainer.train()
    staging = target.with_name("warm-start.tmp")
    trainer.save_model(str(staging))
    tokenizer.save_pretrained(str(staging))
    staging.rename(target)
    return target
