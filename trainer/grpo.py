"""`OrchestraGRPOTrainer`: TRL's GRPOTrainer whose rollouts are the lab's multi-turn rollouts.

Where the lab plugs into TRL (trl 1.16), stage by stage:

1. Generation: `rollout_func` runs `lab.rollout.run_rollout` (the engine evaluation uses, no second
   loop) for every row of the rank's generation batch, concurrently, with a policy adapter on the live
   model (`HFPolicy.live`). It returns the engine's token buffers as they were sampled: `prompt_ids`,
   `completion_ids` (model turns and tool output concatenated), `logprobs`, and `env_mask` (1 = sampled
   by the model, 0 = tool output and template), which TRL multiplies into the loss mask. Nothing is
   re-rendered. No collective runs while rollouts are in flight; ranks may take different turn counts.
2. Reward: the single reward function gathers the rows' features from every rank (all ranks call it
   together, after generation) and scores whole groups with `trainer.scoring.score_rows`.
3. Advantages: TRL's (R - mean) / (std + 1e-4) is replaced by the lab's Eq. 3 (sample std, groups
   below `std_threshold` dropped), and filtered rows get an all-zero loss mask, with `num_items_in_batch`
   recomputed, so under the row-excluding loss types they add nothing to the loss or its normaliser.
4. Update: TRL's clipped surrogate (Eq. 4), over the kept rows only (`kept_rows_only`: filtered rows
   would add nothing but compute). When no row of an optimizer step was kept, the optimizer
   does not step: a pre-step hook sets every gradient to None, so AdamW moves no weight (its moments
   would otherwise keep moving them on a zero gradient).
5. Logging: every rollout, with reward, advantage and filter reason, its steps and its token record
   go to the store (`kind='train'` run); one `train_metrics` row per optimizer step (`trainer.metrics`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from typing import Any

import torch
from accelerate.utils import gather_object
from trl import GRPOTrainer
from trl.models import unwrap_model_for_generation

# `rollout_func` is marked experimental in trl 1.16; the lab pins trl's minor version and tests this path.
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from lab.filters import format_consistent
from lab.rollout import RolloutRequest, RolloutResult, run_rollout
from lab.store import Store
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.examples import Example
from trainer.metrics import rollout_metrics
from trainer.rounds import round_batch, round_rows
from trainer.scoring import GroupScores, RowFeatures, score_rows
from trainer.shared_prompt import shared_prompt_logps
from trainer.task_sampler import TaskBlockSampler


class OrchestraGRPOTrainer(GRPOTrainer):
    """GRPO over the lab's rollouts; see the module docstring for what differs from TRL."""

    def __init__(self, model: Any, args: OrchestraGRPOConfig, environment: TrainingEnvironment, store: Store,
                 run_id: str, processing_class: Any, train_dataset: Any, callbacks: list | None = None,
                 peft_config: Any = None) -> None:
        self.environment = environment
        self.store = store
        self.run_id = run_id
        self._rows: list[Example] = []
        self._results: list[RolloutResult] = []
        self._scores: GroupScores | None = None
        self._kept_tokens = 0
        #: the step's differences log pi_train - log pi_sampler on kept tokens (`_note_sampler_gap`)
        self._gap: list[torch.Tensor] = []
        self._training_logps: torch.Tensor | None = None
        #: whether the last optimizer step was skipped because no row of it was kept
        self.last_step_skipped = False
        #: rollout-side metrics of the latest generation batch, read by the metrics callback
        self.generation_metrics: dict[str, float] = {}
        #: how many generation batches have been rolled out (a step reusing one sees the same number)
        self.generations = 0
        super().__init__(model=model, reward_funcs=[self.lab_reward], args=args, train_dataset=train_dataset,
                         processing_class=processing_class, rollout_func=self.rollout, callbacks=callbacks,
                         peft_config=peft_config)

    # -- 1. generation -------------------------------------------------------------------------------

    def _get_train_sampler(self, dataset: Any = None) -> Any:
        """TRL's sampler, or with `paired_instructions` one that draws whole tasks (`trainer.task_sampler`)."""
        if not self.args.paired_instructions:
            return super()._get_train_sampler(dataset)
        dataset = self.train_dataset if dataset is None else dataset
        return TaskBlockSampler(list(dataset["task_id"]), mini_repeat_count=self.num_generations,
                                batch_size=self.args.groups_per_generation,
                                repeat_count=self.num_iterations * self.args.steps_per_generation,
                                seed=self.args.seed)

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        self._rows = [Example.from_row(x) for x in inputs]
        if self.args.protocol == "rounds":
            return self._round_rows_batch(inputs)
        output = super()._generate_and_score_completions(inputs)
        if "sampling_per_token_logps" in output and self.sampler_is_policy:
            output["old_per_token_logps"] = output["sampling_per_token_logps"]
        started = time.perf_counter()
        scores = self._scores
        assert scores is not None, "the lab reward function did not run"
        local = slice(self.accelerator.process_index * len(inputs), (self.accelerator.process_index + 1) * len(inputs))
        device = output["advantages"].device
        output["advantages"] = torch.tensor(scores.advantages[local], dtype=torch.float32, device=device)
        keep = torch.tensor(scores.keep[local], dtype=output["tool_mask"].dtype, device=device)
        output["tool_mask"] = output["tool_mask"] * keep.unsqueeze(1)
        output["num_items_in_batch"] = self.accelerator.gather(
            (output["completion_mask"] * output["tool_mask"]).sum()).sum()
        self._log_rollouts(scores, local)
        self.generation_metrics["time/reward_s"] = (self.generation_metrics.get("time/reward_s", 0.0)
                                                    + time.perf_counter() - started)
        return output

    def _round_rows_batch(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        """The round protocol's generation batch: every kept round a row with its rollout's advantage
        (`trainer.rounds`), scored and logged as the conversation path is."""
        features = self.rollout([x["prompt"] for x in inputs])["lab_features"]
        self.lab_reward([], [], features)
        started = time.perf_counter()
        scores = self._scores
        assert scores is not None, "the lab reward function did not run"
        local = slice(self.accelerator.process_index * len(inputs), (self.accelerator.process_index + 1) * len(inputs))
        rows, skipped = round_rows(self._results, list(scores.advantages[local]), list(scores.keep[local]),
                                   self.args.format_penalty)
        batch = round_batch(rows, self.processing_class.pad_token_id, self.accelerator.device,
                            self.args.steps_per_generation)
        batch["num_items_in_batch"] = self.accelerator.gather(batch["completion_mask"].sum()).sum()
        batch["old_per_token_logps"] = self._old_logps(batch)
        if self.beta != 0.0:
            batch["ref_per_token_logps"] = self._reference_logps(batch)
        self._log_rollouts(scores, local)
        all_rounds = sum(len(r.rounds) for r in self._results)
        self.generation_metrics.update({"rounds/kept": float(len(rows)), "rounds/skipped_format": float(skipped),
                                        "rounds/per_trajectory": all_rounds / max(len(self._results), 1)})
        self.generation_metrics["time/reward_s"] = (self.generation_metrics.get("time/reward_s", 0.0)
                                                    + time.perf_counter() - started)
        return batch

    @property
    def sampler_is_policy(self) -> bool:
        """Whether the sampler's log-probabilities are the policy's own: its raw logits are what TRL's loss
        scores at temperature 1 (and top_p 1); at another temperature they belong to another distribution."""
        return self.args.temperature == 1.0 and self.args.top_p == 1.0

    def _old_logps(self, batch: dict[str, Any]) -> Any:
        """The old log-probabilities of Eq. 4's ratio: the sampler's own, as TRL takes vLLM's, so that a second
        pass over a batch (`num_iterations > 1`) clips against the policy that sampled it; where the sampler's
        are not the policy's distribution, the model's at generation time (one no-grad forward)."""
        if self.sampler_is_policy:
            return batch["sampling_per_token_logps"]
        return self._round_logps(self.model, batch)

    def _reference_logps(self, batch: dict[str, Any]) -> Any:
        """Per-token logps of the reference model on the round rows (for a KL term, `beta` > 0)."""
        if self.ref_model is None:
            raise RuntimeError("beta > 0 under the round protocol needs a reference model (not a PEFT adapter)")
        return self._round_logps(self.ref_model, batch)

    def _round_logps(self, model: Any, batch: dict[str, Any]) -> Any:
        """Per-token logps of `model` on the round rows' completions, without gradient."""
        input_ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
        attention = torch.cat([batch["prompt_mask"], batch["completion_mask"].clamp(min=1)], dim=1)
        with torch.no_grad():
            logps, _ = self._get_per_token_logps_and_entropies(model, input_ids, attention,
                                                               batch["completion_ids"].size(1))[:2]
        return logps

    def rollout(self, prompts: list[Any], trainer: Any = None) -> dict[str, list]:
        """TRL's `rollout_func`: the lab engine on every row of this rank's generation batch."""
        started = time.perf_counter()
        rows = self._rows
        step = self.state.global_step + 1
        task_ids = (gather_object([r.task_id for r in rows]) if self.accelerator.num_processes > 1
                    else [r.task_id for r in rows])
        offset = self.accelerator.process_index * len(rows)
        sample_idx = [task_ids[: offset + i].count(r.task_id) for i, r in enumerate(rows)]  # unique per (task, step)
        # ZeRO-3 shards the weights: gather them for the whole rollout, so no forward pass is a collective
        # (ranks take different numbers of turns). Without DeepSpeed this just unwraps the model.
        with unwrap_model_for_generation(
                self.model_wrapped, self.accelerator, gather_deepspeed3_params=self.args.ds3_gather_for_generation,
                gradient_checkpointing_kwargs=self.args.gradient_checkpointing_kwargs) as model:
            was_training = model.training
            model.eval()  # no dropout while sampling; the KV cache is on
            try:
                results = asyncio.run(self._run_all(rows, sample_idx, step, model))
            finally:
                model.train(was_training)
        self._results = results
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "logprobs": [],
                                "env_mask": [], "lab_features": []}
        eot = self.processing_class.eos_token_id
        for row, result in zip(rows, results):
            tokens = result.tokens
            if tokens is None or not tokens.completion_ids:  # the policy failed before sampling: filtered below
                out["prompt_ids"].append((tokens.prompt_ids if tokens else None) or [eot])
                out["completion_ids"].append([eot])
                out["logprobs"].append([0.0])
                out["env_mask"].append([0])
            else:
                out["prompt_ids"].append(tokens.prompt_ids)
                out["completion_ids"].append(tokens.completion_ids)
                out["logprobs"].append(tokens.logprobs)
                out["env_mask"].append(tokens.mask)
            # under the round protocol a malformed round is dropped alone (`trainer.rounds`), not its rollout
            well_formed = self.args.protocol == "rounds" or format_consistent(result.trajectory, result.steps)
            out["lab_features"].append(RowFeatures.of(result.trajectory, self.environment.features,
                                                      dict(row.preference), well_formed))
        generated = sum(sum(m) for m in out["env_mask"])
        self.generation_metrics = {"time/rollout_s": time.perf_counter() - started,
                                   "tokens/generated": float(generated)}
        self.generations += 1
        return out

    def rollout_policy(self, model: Any) -> Any:
        """The generation backend's policy adapter, one token buffer for all: transformers on the live model
        (CPU and small GPU runs), or a vLLM server / colocated vLLM (`use_vllm`, `vllm_mode`)."""
        from lab.policies.hf_policy import HFPolicy
        from trainer.vllm_samplers import VLLMColocateSampler, VLLMServerSampler

        args: OrchestraGRPOConfig = self.args
        sampler: VLLMColocateSampler | VLLMServerSampler | None = None
        if args.use_vllm:
            if args.vllm_mode == "colocate":
                sampler = VLLMColocateSampler(self.vllm_generation.llm)
            else:
                sampler = VLLMServerSampler(self._generation_client())
        return HFPolicy.live(model, self.processing_class, name=f"hf:{self.run_id}", sampler=sampler,
                             max_new_tokens=args.turn_max_new_tokens, temperature=args.temperature, top_p=args.top_p,
                             latency_per_token_s=args.orchestrator_latency_per_token_s)

    def _generation_client(self) -> Any:
        """This rank's HTTP client of the vLLM server (TRL builds one on the main process only, for weights)."""
        client = getattr(self.vllm_generation, "vllm_client", None)
        if client is None:
            from trl.generation.vllm_client import VLLMClient

            args: OrchestraGRPOConfig = self.args
            base_url = args.vllm_server_base_url or f"http://{args.vllm_server_host}:{args.vllm_server_port}"
            client = self.vllm_generation.vllm_client = VLLMClient(base_url=base_url,
                                                                   connection_timeout=args.vllm_server_timeout)
        return client

    async def _run_all(self, rows: list[Example], sample_idx: list[int], step: int, model: Any) -> list[RolloutResult]:
        args: OrchestraGRPOConfig = self.args
        policy = self.rollout_policy(model)
        config = args.rollout_config()

        async def one(row: Example, index: int) -> RolloutResult:
            seed = int.from_bytes(hashlib.sha256(f"{args.seed}/{step}/{row.example_id}/{index}".encode()).digest()[:4],
                                  "big")
            task = self.environment.task(row.task_id)
            request = RolloutRequest(
                run_id=self.run_id, task=task, sample_idx=index, train_step=step,
                group_id=f"{step}:{row.example_id}", preference=dict(row.preference),
                preference_instruction=row.instruction,
                seed=seed, benchmark=self.environment.source.benchmark, user=self.environment.source.user_for(task),
            )
            return await run_rollout(policy, self.environment.tools_for(row), request,
                                     self.environment.source.grader, config)

        return list(await asyncio.gather(*(one(row, index) for row, index in zip(rows, sample_idx))))

    # -- 2. reward -----------------------------------------------------------------------------------

    def lab_reward(self, prompts: list[Any], completions: list[Any],
                   lab_features: list[RowFeatures], **_: Any) -> list[float]:
        """Eq. 2 over whole groups (gathered from every rank); rows the filters dropped get 0 (and no gradient:
        `_generate_and_score_completions` zeroes their loss mask whatever TRL makes of this value)."""
        rows = gather_object(list(lab_features)) if self.accelerator.num_processes > 1 else list(lab_features)
        args: OrchestraGRPOConfig = self.args
        self._scores = score_rows(rows, self.environment.features, args.std_threshold, args.filter_format,
                                  args.filter_invalid, args.reward_scale_refs(), args.advantage_estimator)
        local = slice(self.accelerator.process_index * len(lab_features),
                      (self.accelerator.process_index + 1) * len(lab_features))
        return [float(r) for r in self._scores.rewards[local]]

    # -- 4. update -----------------------------------------------------------------------------------

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        mask = inputs["completion_mask"] * inputs["tool_mask"] if "tool_mask" in inputs else inputs["completion_mask"]
        self._kept_tokens += int(mask.sum())
        rows = int((mask.sum(1) > 0).sum())
        if self.accelerator.num_processes > 1:  # every rank runs the same number of rows (TRL gathers per-row metrics)
            rows = int(self.accelerator.reduce(torch.tensor(rows, device=mask.device), reduction="max"))
        kept = kept_rows_only(inputs, rows)
        self._training_logps = None
        loss = super().compute_loss(model, kept, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)
        self._note_sampler_gap(kept)
        return loss

    def _note_sampler_gap(self, inputs: dict[str, Any]) -> None:
        """Collect |log pi_train - log pi_sampler| and the importance ratio over this micro-batch's kept tokens
        (TRL logs the same for vLLM rollouts). On a batch's first pass the gap is the sampler-trainer
        mismatch alone (it should be ~0 at temperature 1: a larger one means the loss scores other tokens,
        positions or a different distribution than were sampled); later passes add the policy's own move."""
        sampled, logps = inputs.get("sampling_per_token_logps"), self._training_logps
        if sampled is None or logps is None or logps.shape != sampled.shape:
            return
        mask = inputs["completion_mask"] * inputs["tool_mask"] if "tool_mask" in inputs else inputs["completion_mask"]
        diff = (logps - sampled)[mask.bool()]
        if diff.numel():
            self._gap.append(diff.detach().float().cpu())

    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int,
                                           batch_size: int | None = None, compute_entropy: bool = False,
                                           compute_aux_loss: bool = False, **inputs: Any) -> tuple[Any, Any, Any]:
        """TRL's log-probability pass, with each distinct prompt forwarded once (`trainer.shared_prompt`) on a
        plain single-process text model; TRL's own pass everywhere else."""
        result = self._token_logps(model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy,
                                   compute_aux_loss, **inputs)
        if compute_entropy:  # the loss's own pass (TRL asks entropies only there): kept for the sampler gap
            self._training_logps = result[0].detach()
        return result

    def _token_logps(self, model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int,
                     batch_size: int | None, compute_entropy: bool, compute_aux_loss: bool,
                     **inputs: Any) -> tuple[Any, Any, Any]:
        whole = batch_size is None or batch_size >= input_ids.size(0)
        if self.averages_gradients:  # DDP's hooks allow one forward per backward: its module, synced in training_step
            model = model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model
        plain = self.accelerator.num_processes == 1 or self.averages_gradients
        if (self.args.shared_prompt_forward and whole and plain and not compute_aux_loss
                and all(v is None for v in inputs.values())):
            with self.accelerator.autocast():  # as TRL's pass: bf16 / fp16 mixed precision applies here too
                shared = shared_prompt_logps(model, input_ids, attention_mask, logits_to_keep,
                                             self.temperature, compute_entropy)
            if shared is not None:
                return (*shared, None)
        return super()._get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep,
                                                          batch_size=batch_size, compute_entropy=compute_entropy,
                                                          compute_aux_loss=compute_aux_loss, **inputs)

    @property
    def averages_gradients(self) -> bool:
        """Whether this trainer averages the ranks' gradients itself: several DDP ranks (no DeepSpeed, no FSDP)
        with the shared-prompt forward on. The forward calls the model twice (prompts, then completions on
        their cache), which DDP's hooks do not allow, so every loss pass runs DDP's module (whose hooks then
        stay idle) and `training_step` all-reduces the gradients once per optimizer step, before clipping,
        as DDP would: the same update as one rank's (tests/trainer/test_ranks.py)."""
        return (self.args.shared_prompt_forward and self.accelerator.num_processes > 1
                and not self.is_deepspeed_enabled and not self.is_fsdp_enabled)

    def training_step(self, model: Any, inputs: dict[str, Any], num_items_in_batch: Any = None) -> Any:
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.averages_gradients and self.accelerator.sync_gradients:
            average_gradients(self.model, self.accelerator.num_processes)
        return loss

    def create_optimizer(self, model: Any = None) -> torch.optim.Optimizer:
        optimizer = super().create_optimizer(model) if model is not None else super().create_optimizer()
        optimizer.register_step_pre_hook(self._skip_if_nothing_kept)
        return optimizer

    def _skip_if_nothing_kept(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        kept = torch.tensor(float(self._kept_tokens), device=self.accelerator.device)
        if self.accelerator.num_processes > 1:
            kept = self.accelerator.reduce(kept, reduction="sum")
        self._kept_tokens = 0
        self.generation_metrics.update(sampler_gap_metrics(self._gap))
        self._gap = []
        self.last_step_skipped = float(kept) == 0.0
        if self.last_step_skipped:
            for group in optimizer.param_groups:
                for param in group["params"]:
                    param.grad = None

    # -- 5. logging ----------------------------------------------------------------------------------

    def _log_rollouts(self, scores: GroupScores, local: slice) -> None:
        """Write this rank's rollouts with their reward, advantage and filter reason; note the metrics."""
        items = []
        for i, result in zip(range(local.start, local.stop), self._results):
            trajectory = result.trajectory.model_copy(update={
                "reward": float(scores.rewards[i]), "advantage": float(scores.advantages[i]),
                "filter_reason": scores.reasons[i],
            })
            items.append((trajectory, result.steps, result.token_records()))
        self.store.write_trajectories(items)
        trajectories = [r.trajectory for r in self._results]
        all_rows = (gather_object([t.model_dump(mode="json") for t in trajectories])
                    if self.accelerator.num_processes > 1 else [t.model_dump(mode="json") for t in trajectories])
        generated = self.generation_metrics.get("tokens/generated", 0.0)
        if self.accelerator.num_processes > 1:
            generated = float(self.accelerator.reduce(torch.tensor(generated, device=self.accelerator.device),
                                                      reduction="sum"))
        self.generation_metrics.update(rollout_metrics(
            tool_counts=[{k: v for k, v in json.loads(t["tool_counts_json"]).items() if k in self.environment.features}
                         for t in all_rows],
            outcomes=[t["outcome"] for t in all_rows], costs=[t["cost_usd"] for t in all_rows],
            latencies=[t["latency_s"] for t in all_rows], turns=[t["n_turns"] for t in all_rows],
            reasons=scores.reasons,
            rewards=list(scores.rewards), passed=list(scores.passed), features=self.environment.features,
            generated_tokens=int(generated), groups=[t["group_id"] for t in all_rows],
        ))


#: The micro-batch tensors `kept_rows_only` cuts: one value per row, or one per completion token.
_PER_ROW = ("advantages", "prompt_ids", "prompt_mask")
_COMPLETION_COLUMNS = ("completion_ids", "completion_mask", "tool_mask", "old_per_token_logps",
                       "sampling_per_token_logps", "ref_per_token_logps", "importance_sampling_ratio")


def average_gradients(model: torch.nn.Module, ranks: int) -> None:
    """Every trainable parameter's gradient averaged over the ranks, in one all-reduce (one flat buffer per
    dtype), as DDP leaves them. A parameter without a gradient counts as zeros, so every rank sends the same
    shapes."""
    import torch.distributed as dist
    from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

    params = [p for p in model.parameters() if p.requires_grad]
    for param in params:
        if param.grad is None:
            param.grad = torch.zeros_like(param)
    by_dtype: dict[torch.dtype, list[torch.Tensor]] = {}
    for param in params:
        by_dtype.setdefault(param.grad.dtype, []).append(param.grad)
    for grads in by_dtype.values():
        flat = _flatten_dense_tensors(grads)
        dist.all_reduce(flat)
        flat /= ranks
        for grad, synced in zip(grads, _unflatten_dense_tensors(flat, grads)):
            grad.copy_(synced)


def sampler_gap_metrics(differences: list[torch.Tensor]) -> dict[str, float]:
    """`sampling/logp_gap/{mean,max}` (absolute) and `sampling/ratio/{min,mean,max}` (exp of the difference)
    over one optimizer step's kept tokens; nothing when the step trained on none."""
    if not differences:
        return {}
    diff = torch.cat(differences)
    ratio = diff.exp()
    return {"sampling/logp_gap/mean": float(diff.abs().mean()), "sampling/logp_gap/max": float(diff.abs().max()),
            "sampling/ratio/min": float(ratio.min()), "sampling/ratio/mean": float(ratio.mean()),
            "sampling/ratio/max": float(ratio.max())}


def kept_rows_only(inputs: dict[str, Any], rows: int) -> dict[str, Any]:
    """The micro-batch cut to its first `rows` rows in kept-first order, and to the completion columns up
    to the last kept token.

    Why: filtered rows (a third or more of a step on the CPU config) carry an all-zero loss mask, so their
    forward and backward passes change nothing but the step time. The loss is unchanged: under every loss
    type the lab allows, a row with no kept token adds 0 to the loss and to its normaliser
    (`num_items_in_batch` was counted over the whole generation batch before), rows never attend to each
    other, and a causal model's logits never depend on later tokens. Prompt columns stay as they are, so
    every position id is what it was. `rows` may exceed the kept count (ranks must agree on a row count;
    at least one row is always kept, so every rank runs a forward and backward pass). A batch holding
    tensors this does not know how to cut (images) is left whole."""
    tensors = {k for k, v in inputs.items() if isinstance(v, torch.Tensor) and v.dim() > 0}
    if tensors - {*_PER_ROW, *_COMPLETION_COLUMNS}:
        return inputs
    mask = inputs["completion_mask"] * inputs["tool_mask"] if "tool_mask" in inputs else inputs["completion_mask"]
    order = torch.argsort((mask.sum(1) == 0).to(torch.int8), stable=True)  # kept rows first, in batch order
    index = order[: max(1, min(rows, len(order)))]
    used = mask[index].sum(0).nonzero()
    end = int(used[-1]) + 1 if len(used) else 1
    out = dict(inputs)
    for key in tensors:
        value = inputs[key][index]
        if key in _COMPLETION_COLUMNS and value.dim() == 2 and value.size(1) == mask.size(1):
            value = value[:, :end]
        out[key] = value
    return out
