"""Per-token log-probabilities of a GRPO micro-batch with each distinct prompt forwarded once.

Why: a GRPO group is G completions of one prompt, and on the lab's configs the prompt (tool catalog,
instruction, question) is most of a row's tokens: on `cpu-tiny` about 700 prompt tokens against 375
completion tokens. TRL forwards and back-propagates every row's copy of the prompt. Here the distinct
prompts are forwarded once, with their keys and values kept, and every row's completion is forwarded on
its prompt's cache; the gradient of each shared prompt sums over its rows, as it does when the copies are
forwarded apart. The numbers are TRL's (same positions, same masks, same fused head for the completion
tokens); only the prompt's share of the work shrinks, by a factor near G.

It applies to a plain model: one process, or DDP ranks whose gradients the trainer averages itself
(`OrchestraGRPOTrainer.averages_gradients`: DDP's hooks expect one forward per backward); not under FSDP or
DeepSpeed, not with gradient checkpointing (which turns the cache off), not with image inputs.
Sliding-window layers are fine, as the prompt's cache keeps all their keys (`full_cache`).
`shared_prompt_logps` returns None elsewhere, and the caller runs TRL's own forward.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from lab.policies.hf_batch import cache_argument, cache_rows, full_cache


def shared_prompt_logps(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int,
                        temperature: float, compute_entropy: bool) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """(log-probabilities (B, C), entropies (B, C) or None) of the last `logits_to_keep` = C tokens of each
    row, as TRL's fused forward computes them, or None when no prompt is shared or the model does not allow
    it. `model` must carry TRL's fused LM head (`trl.trainer.utils.add_fused_lm_head`)."""
    checkpointing = ("is_activation_checkpointing" if hasattr(type(model), "is_activation_checkpointing")
                     else "is_gradient_checkpointing")
    if getattr(model, checkpointing, False) or logits_to_keep >= input_ids.size(1):
        return None
    prompts, completions = input_ids[:, :-logits_to_keep], input_ids[:, -logits_to_keep:]
    prompt_mask = attention_mask[:, :-logits_to_keep]
    keyed = torch.cat([prompts, prompt_mask], dim=1)  # the same ids under a different padding are not the same prompt
    distinct, copies = torch.unique(keyed, dim=0, return_inverse=True)
    if len(distinct) == len(keyed):
        return None
    width = prompts.size(1)
    cache_name = cache_argument(model)
    keep_last = "logits_to_keep" in inspect.signature(model.forward).parameters
    head = model(input_ids=distinct[:, :width], attention_mask=distinct[:, width:], use_cache=True,
                 **{cache_name: full_cache()}, **({"logits_to_keep": 1} if keep_last else {}))
    cache = cache_rows(getattr(head, cache_name, None), copies)
    if cache is None:
        return None
    completion_mask = attention_mask[:, -logits_to_keep:]
    labels = completions.masked_fill(completion_mask == 0, -100)
    tail = model(input_ids=completions, attention_mask=attention_mask, labels=labels, fused_lm_head=True,
                 **{cache_name: cache})
    # the first completion token is predicted by the prompt's last position: scored here, as the fused head
    # scores the rest (temperature-scaled logits, float32)
    first_logits = head.logits[:, -1].float()[copies] / temperature
    first_logps = torch.log_softmax(first_logits, dim=-1)
    first = first_logps.gather(1, completions[:, :1].clamp(min=0)).masked_fill(completion_mask[:, :1] == 0, 0.0)
    logps = torch.cat([first, tail.log_probs], dim=1)
    if not compute_entropy:
        return logps, None
    first_entropy = -(first_logps.exp() * first_logps).sum(-1, keepdim=True).masked_fill(completion_mask[:, :1] == 0,
                                                                                          0.0)
    return logps, torch.cat([first_entropy, tail.entropy], dim=1)
