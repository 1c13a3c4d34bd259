"""Warm start: supervised fine-tuning on successful trajectories from the store (`orchestra train sft`).

Why: a randomly initialised or small model rarely emits a well-formed tool call, and GRPO learns
nothing from groups that all fail (they are homogeneous). SFT on solved rollouts of scripted
orchestrators teaches the format and a first routing; GRPO then trades accuracy against cost.

Which rollouts, under which instruction: the scripted orchestrators ignore preferences, so one run of
each on the training tasks gives every task a small group of routes. The data are drawn like GRPO's
examples (`trainer.examples`: a task, a provider's prices, a training (PI, P) pair): for each example,
the task's group is scored with Eq. 2 under the example's P (`lab.scoring.FeatureFrame`, the reward
GRPO uses) and the solved, well-formed trajectories with the group's highest reward are kept, shown
under that example's instruction and priced catalog. So "keep the bill low" is paired with the cheapest
route that solved the task, "GPT-5 is approved" with GPT-5's, and "money is no object" with one of the
solved routes (Eq. 2 ties them all; one per example, so every instruction weighs the same):
best-of-group selection by the training reward (rejection-sampling fine-tuning), not hand-written
conditioning.

Each kept trajectory is rebuilt as the chat the rollout engine shows an orchestrator: the system
prompt (the example's priced catalog and instruction), the question, then per turn the assistant text
(its `<think>` reasoning, if the orchestrator wrote any; `<tool_call>`s or `<answer>`) and each tool response as
`lab.rollout.prompt.tool_response_text` wraps it. TRL's `SFTTrainer` trains on the assistant tokens only.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.rollout.parse import format_tool_call
from lab.rollout.prompt import system_prompt, tool_response_text
from lab.rollout.rounds import ROUND_SYSTEM, round_catalog, with_instruction
from lab.scoring import FeatureFrame
from lab.store import Store, queries
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.examples import Example
from trainer.fingerprint import reuse_decision, swap_in, warm_start_fingerprint, write_fingerprint
from trainer.models import CHATML_TRAINING_TEMPLATE, resolve_model


def warm_start_options(config: OrchestraGRPOConfig) -> dict[str, Any]:
    """The warm start's options with their defaults (keys and types were checked with the config)."""
    options = dict(config.warm_start or {})
    if not options:
        raise LabInputError("warm_start: the config has none; set warm_start.orchestrators, whose "
                            "solved rollouts to learn from")
    return {"limit": None, "samples": 1, "examples_per_task": 2, "epochs": 2, "learning_rate": 1e-3, "batch_size": 8,
            "max_length": 4096, "select": "best", **options}


def collect_runs(config: OrchestraGRPOConfig, store: Store, task_ids: list[str], console: Console) -> list[str]:
    """Run (or resume: finished rollouts are reused) the warm-start orchestrators on the training tasks."""
    options = warm_start_options(config)
    run_ids = []
    for orchestrator in options["orchestrators"]:
        eval_config = EvalConfig.build(
            benchmark=config.benchmark, split=config.train_split, orchestrator=orchestrator, toolkit=config.toolkit,
            tasks=task_ids[: options["limit"]], samples=options["samples"],
            max_turns=[config.max_turns], observation_chars=config.observation_chars, seed=config.seed,
            run_name=f"warm-start-{orchestrator.split(':')[-1]}",
            protocol=config.protocol, context_tokens=config.context_tokens,
            expert_protocol=config.eval_settings()["expert_protocol"], retrieval_top_k=config.retrieval_top_k,
        )
        run_ids += [s.run_id for s in run_eval(eval_config, store, console)]
    return run_ids


def sft_rows(store: Store, run_ids: list[str], environment: TrainingEnvironment, per_task: int,
             select: str = "best") -> list[dict[str, Any]]:
    """Dataset rows (`messages`, and under the round protocol `tools`) of the best solved trajectories
    per training example (see the module docstring), or with `select="solved"` of any solved trajectory
    of its task, whatever its P rewards."""
    trajectories = queries.trajectories_df(store, run_ids)
    trajectories = trajectories[trajectories.format_ok & trajectories.valid_output]
    questions = queries.tasks_df(store).set_index(["benchmark", "task_id"]).question
    examples = [e for e in environment.examples(per_task) if e.task_id in set(trajectories.task_id)]
    chosen = one_per_example(select_best(trajectories, examples, environment.features) if select == "best"
                             else select_solved(trajectories, examples))
    steps = {run_id: queries.steps_df(store, run_id) for run_id in run_ids}
    observation_chars = environment.config.observation_chars
    rounds = environment.config.protocol == "rounds"
    rows: list[dict[str, Any]] = []
    for example, traj in chosen:
        specs = [tool.spec for tool in environment.tools_for(example).values()]
        mine = steps[traj.run_id]
        mine = mine[(mine.task_id == traj.task_id) & (mine.sample_idx == traj.sample_idx)]
        if rounds:
            rows += _round_rows(mine, specs, example.instruction)
            continue
        messages = [{"role": "system", "content": system_prompt(specs, example.instruction)},
                    {"role": "user", "content": questions.loc[(traj.benchmark, traj.task_id)]}]
        rows.append({"messages": messages + _turn_messages(mine, observation_chars)})
    return rows


def _round_rows(steps: pd.DataFrame, specs: list[Any], instruction: str) -> list[dict[str, Any]]:
    """One row per round of a solved round-protocol trajectory: the round's prompt (with the example's
    instruction) and the call it made, under the round's native catalog.

    A round after which the next round's prompt is the same (a search whose writer found nothing left
    to look up, a reasoning call that wrote no program) changed nothing the orchestrator can see, so
    its prompt would be taught two different calls (this one, and the one that really came next): such
    a round is left out, and the example teaches the call that made progress."""
    catalog = json.dumps(round_catalog(specs), ensure_ascii=False)
    tool_steps = steps[steps.kind == "tool"].sort_values("turn").to_dict("records")
    rows = []
    for step, following in zip(tool_steps, [*tool_steps[1:], None]):
        if following is not None and following["prompt"] == step["prompt"]:
            continue
        prompt = [{"role": "system", "content": ROUND_SYSTEM},
                  {"role": "user", "content": with_instruction(step["prompt"], instruction)}]
        call = format_tool_call(step["tool_name"], json.loads(step["arguments_json"]))
        rows.append({"messages": [*prompt, {"role": "assistant", "content": call}], "tools": catalog})
    return rows


def one_per_example(chosen: list[tuple[Example, Any]]) -> list[tuple[Example, Any]]:
    """One of each example's best trajectories, picked by a stable hash of (example, run, task, sample).

    Why: an instruction whose P ties every solved route (accuracy only) would otherwise bring all of
    them, a cost-saving one only the cheapest, so the accuracy-only instructions outweighed the others
    several times over (measured on cpu-tiny: 829 of 1,990 rows for one of eight instructions, 684 for
    another) and the model's default, what it does under a wording it never saw, was theirs."""
    by_example: dict[str, list[tuple[Example, Any]]] = {}
    for example, traj in chosen:
        by_example.setdefault(example.example_id, []).append((example, traj))

    def key(pair: tuple[Example, Any]) -> str:
        example, traj = pair
        return hashlib.sha256(
            f"{example.example_id}/{traj.run_id}/{traj.task_id}/{traj.sample_idx}".encode()).hexdigest()

    return [min(pairs, key=key) for pairs in by_example.values()]


def select_solved(trajectories: pd.DataFrame, examples: list[Example]) -> list[tuple[Example, Any]]:
    """Per example, every solved trajectory of its task: the route is not chosen by the example's P, so the
    instruction shown with it predicts nothing, and a model warm-started on them knows the format and the
    routes that solve but not which one an instruction rewards (the headroom GRPO is to fill)."""
    solved = [t for t in trajectories.itertuples() if t.outcome == 1]
    by_task: dict[str, list[Any]] = {}
    for traj in solved:
        by_task.setdefault(traj.task_id, []).append(traj)
    return [(example, traj) for example in examples for traj in by_task.get(example.task_id, [])]


def select_best(trajectories: pd.DataFrame, examples: list[Example], features: list[str]) -> list[tuple[Example, Any]]:
    """Per example, the solved trajectories of its task with the highest Eq. 2 reward under its P.

    Each example's group is every trajectory of its task (`lab.scoring.FeatureFrame.take` regroups the
    rows by example id, so one trajectory may be scored in several examples' groups under their P)."""
    frame = FeatureFrame.of(trajectories, features)
    records = list(trajectories.itertuples())
    by_task: dict[str, list[int]] = {}
    for position, task_id in enumerate(trajectories.task_id):
        by_task.setdefault(task_id, []).append(position)
    index, groups, preferences, owners = [], [], [], []
    for example in examples:
        for position in by_task[example.task_id]:
            index.append(position)
            groups.append(example.example_id)
            preferences.append(dict(example.preference))
            owners.append((example, records[position]))
    if not index:
        return []
    rewards = frame.take(index, groups).rewards(preferences)
    best: dict[str, float] = {}
    for (example, traj), reward in zip(owners, rewards):
        if traj.outcome == 1:
            best[example.example_id] = max(best.get(example.example_id, -np.inf), float(reward))
    return [(example, traj) for (example, traj), reward in zip(owners, rewards)
            if traj.outcome == 1 and np.isclose(reward, best[example.example_id])]


def _turn_messages(steps: pd.DataFrame, observation_chars: int) -> list[dict[str, str]]:
    turns: dict[int, list[dict[str, Any]]] = {}
    # plain dicts: a per-turn itertuples was most of the data's preparation time
    for step in steps.sort_values("turn", kind="stable").to_dict("records"):
        turns.setdefault(step["turn"], []).append(step)
    messages = []
    for turn in turns.values():
        calls = [step for step in turn if step["kind"] == "tool"]
        reasoning = next((step["reasoning"] for step in turn if step["reasoning"]), "")
        think = f"<think>{reasoning}</think>\n" if reasoning else ""
        if calls:
            text = "\n".join(format_tool_call(c["tool_name"], json.loads(c["arguments_json"])) for c in calls)
            messages.append({"role": "assistant", "content": think + text})
            messages += [{"role": "tool", "content": tool_response_text(c["tool_name"],
                                                                        c["observation"], observation_chars)}
                         for c in calls]
        else:
            answer = [step for step in turn if step["kind"] == "answer"]
            if answer:
                messages.append({"role": "assistant", "content": f"{think}<answer>{answer[0]['observation']}</answer>"})
    while messages and messages[-1]["role"] == "tool":  # a tool that answers ends the episode unseen
        messages.pop()
    return messages


def labelled_positions_trainer() -> type:
    """`SFTTrainer` scoring only the positions that carry a label, off CUDA/XPU (a class made on call, so
    that importing this module does not import TRL).

    Why: TRL's fused LM head projects only the labelled positions on CUDA/XPU, but elsewhere scores every
    position (fixed tile shapes), with entropy and top-1 on top; the warm start's conversations are about
    90% prompt and tool output, so on CPU that head's forward and backward were over a third of each step.
    Here the backbone runs once, the head projects the assistant positions only, and the loss (summed NLL
    over TRL's token count), entropy and mean_token_accuracy are what TRL logs. Anything outside the plain
    case (CUDA/XPU, a custom loss, label smoothing, `dft`, MoE aux loss, several processes) is left
    to TRL."""

    import torch
    from trl import SFTTrainer

    class LabelledPositionsSFTTrainer(SFTTrainer):
        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            labels = inputs.get("labels")
            plain = (labels is not None and labels.device.type not in ("cuda", "xpu") and not return_outputs
                     and self.compute_loss_func is None and self.label_smoother is None and self.args.loss_type == "nll"
                     and not self.aux_loss_enabled and self.accelerator.num_processes == 1)
            if not plain:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            assert labels is not None  # `plain` holds only with labels
            mode = "train" if model.training else "eval"
            forward = {k: v for k, v in inputs.items() if k != "labels"}
            backbone = (model.get_base_model() if hasattr(model, "get_base_model") else model).base_model
            states = backbone(**forward, use_cache=False).last_hidden_state[:, :-1]
            targets = labels[:, 1:]
            mask = targets != -100
            logits = model.get_output_embeddings()(states[mask]).float()
            log_probs = torch.log_softmax(logits, dim=-1)
            picked = log_probs.gather(1, targets[mask].unsqueeze(1)).squeeze(1)
            count = mask.sum() if num_items_in_batch is None else num_items_in_batch
            loss = -picked.sum() / torch.as_tensor(count).clamp(min=1)
            with torch.no_grad():
                valid = max(int(mask.sum()), 1)
                entropy = -(log_probs.exp() * log_probs).sum(-1).sum() / valid
                accuracy = (logits.argmax(-1) == targets[mask]).sum() / valid
            self._metrics[mode]["entropy"].append(float(entropy))
            self._metrics[mode]["mean_token_accuracy"].append(float(accuracy))
            if mode == "train":
                self._total_train_tokens += (int(inputs["attention_mask"].sum()) if "attention_mask" in inputs
                                             else labels.numel())
            self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
            return loss

    return LabelledPositionsSFTTrainer


def receptive_field(model_config: Any) -> int | None:
    """How many tokens back an output position can see, or None when some layer attends to everything.

    Why: where every layer attends within a sliding window of w tokens (itself and the w-1 before it),
    an output of L such layers depends on the L*(w-1) inputs before it and on nothing earlier (rotary
    positions are relative), so tokens further back than that from the first labelled position add
    compute to the warm start and nothing to its loss or gradient."""
    window = getattr(model_config, "sliding_window", None)
    layer_types = getattr(model_config, "layer_types", None) or []
    if not window or not layer_types or any(kind != "sliding_attention" for kind in layer_types):
        return None
    return len(layer_types) * (int(window) - 1)


def fit_row(example: dict[str, list[int]], max_length: int | None, reach: int | None) -> dict[str, list[int]]:
    """Keep a tokenized row's first `max_length` tokens, then drop the tokens no labelled position can
    see (`receptive_field`: the first labelled token is predicted from the position before it, which
    sees `reach` tokens further back)."""
    input_ids, labels = example["input_ids"][:max_length], example["labels"][:max_length]
    if reach is None:
        return {"input_ids": input_ids, "labels": labels}
    first = next((i for i, label in enumerate(labels) if label != -100), 0)  # none: keep the row whole
    start = max(0, first - 1 - reach)
    return {"input_ids": input_ids[start:], "labels": labels[start:]}


def fit_rows(trainer: Any, max_length: int | None) -> None:
    """`fit_row` over an `SFTTrainer`'s tokenized dataset. The truncation is done here, not by TRL,
    because TRL enforces no length on padding-free rows (`block_attention`)."""
    reach = receptive_field(trainer.model.config)
    trainer.train_dataset = trainer.train_dataset.map(fit_row, fn_kwargs={"max_length": max_length, "reach": reach})


def block_attention(model: Any) -> bool:
    """Switch a model whose every layer has a sliding window to `trainer.local_attention` (rows packed
    without padding, each query scored against 2 windows of keys); returns whether it switched.

    Why: the same outputs and gradients as SDPA over a padded batch, for about a third of the
    backbone's time on the warm start's conversations (`benchmarks/sft_step_speed.py`)."""
    if receptive_field(model.config) is None:
        return False
    from trainer import local_attention

    model.set_attn_implementation(local_attention.register())
    return True


def warm_start_dir(config: OrchestraGRPOConfig) -> Path:
    """Where the warm-start model of a config is saved: `output_dir/warm-start`."""
    return Path(config.output_dir) / "warm-start"


def train_sft(config: OrchestraGRPOConfig, store: Store, environment: TrainingEnvironment, console: Console) -> Path:
    """Warm-start the config's model; returns the folder of the fine-tuned model.

    A folder already there is reused only when its fingerprint matches what would make it now
    (`trainer.fingerprint`: config, code, data); otherwise it is rebuilt, saying which input differed, and
    replaced only once the new model is complete."""
    target = warm_start_dir(config)
    options = warm_start_options(config)
    expected = warm_start_fingerprint(config, options)
    reuse, reason = reuse_decision(target, expected)
    if reuse:
        console.print(f"warm start: reusing {target} ({reason})")
        return target
    if target.exists():
        console.print(f"warm start: {target} {reason}; rebuilding")
    run_ids = collect_runs(config, store, list(environment.tasks), console)
    rows = sft_rows(store, run_ids, environment, options["examples_per_task"], options["select"])
    if not rows:
        raise LabInputError(f"warm start: the runs {', '.join(run_ids)} solved no task; nothing to learn from")
    unit = "rounds" if config.protocol == "rounds" else "trajectories"
    which = "the best solved" if options["select"] == "best" else "any solved"
    console.print(f"warm start: SFT on {len(rows)} {unit} of {which} trajectories of {len(run_ids)} runs, "
                  f"{options['examples_per_task']} training instructions per task")

    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig

    from trainer.callbacks import StepProgress, quiet_trainer

    source = resolve_model(config.model, config.tiny_model, config.seed)
    tokenizer = AutoTokenizer.from_pretrained(source)
    if "{% generation %}" not in (tokenizer.chat_template or "") and "<|im_start|>" in (tokenizer.chat_template or ""):
        tokenizer.chat_template = CHATML_TRAINING_TEMPLATE  # ChatML with assistant markers: same rendering
    model = AutoModelForCausalLM.from_pretrained(source)
    attention = model.config._attn_implementation
    packed = block_attention(model)
    args = SFTConfig(
        output_dir=str(target.with_name("warm-start-trainer")), assistant_only_loss=True,
        num_train_epochs=options["epochs"], learning_rate=options["learning_rate"],
        per_device_train_batch_size=options["batch_size"], max_length=None, padding_free=packed,
        use_cpu=config.use_cpu, bf16=config.bf16, activation_checkpointing=config.activation_checkpointing,
        save_strategy="no", report_to=[], logging_steps=10,
        seed=config.seed, disable_tqdm=False, lr_scheduler_type="cosine", warmup_steps=5,
    )
    trainer = labelled_positions_trainer()(model=model, args=args, train_dataset=Dataset.from_list(rows),
                         processing_class=tokenizer, callbacks=[StepProgress("SFT", console)])
    quiet_trainer(trainer)
    fit_rows(trainer, options["max_length"])
    trainer.train()
    model.set_attn_implementation(attention)  # the saved model runs anywhere: block attention is for training forwards
    staging = target.with_name("warm-start.tmp")
    if staging.exists():  # left by an interrupted save
        shutil.rmtree(staging)
    trainer.save_model(str(staging))
    tokenizer.save_pretrained(str(staging))
    write_fingerprint(staging, expected)  # before the rename: a warm-start folder never lacks its fingerprint
    swap_in(staging, target)
    return target
