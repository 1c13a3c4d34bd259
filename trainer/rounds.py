"""Training rows of the round protocol: one row per round, carrying its rollout's advantage.

The released trainer (training/lead_agent/llm_agent/generation_quick3.py) makes each round of a rollout
its own row, [that round's prompt, that round's completion], and gives every round the rollout's
group-normalised reward. A row is kept when its rollout passed the filters (a valid answer, a group
whose reward std is at least the threshold) and the round itself ran a well-formed call: a skipped
round is dropped alone, the rest of its rollout still trains.

Dropped rounds are not rows at all, so no loss type counts them: `dapo` / `bnpo` normalise per token
over all kept rounds (the released verl default, `loss_agg_mode: token-mean`), `grpo` per round
(each round's token mean, then the mean over rounds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from lab.rollout import RolloutResult


@dataclass(frozen=True)
class RoundRow:
    """One training row: a round's ids and the advantage of the rollout it belongs to."""

    prompt_ids: list[int]
    completion_ids: list[int]
    mask: list[int]
    advantage: float
    logprobs: list[float]   # the sampler's, per completion token (0.0 where mask is 0)


def round_rows(results: list[RolloutResult], advantages: list[float], keep: list[bool],
               format_penalty: float = 0.0) -> tuple[list[RoundRow], int]:
    """The kept rounds of the kept rollouts, and how many rounds ran no valid call (format errors).

    A format error is dropped (the paper's filter, and the released trainer's: it selects a round only when
    `turn_format`), or with `format_penalty` > 0 trained as a row of its own with advantage -format_penalty,
    whatever its rollout's fate (the lab's lever, in no released code: dropped, nothing pushes back when
    probability drifts into malformed calls)."""
    rows, skipped = [], 0
    for result, advantage, kept in zip(results, advantages, keep):
        for record in result.rounds:
            if not record.valid:
                skipped += 1
                if format_penalty > 0:
                    tokens = record.tokens
                    rows.append(RoundRow(tokens.prompt_ids, tokens.completion_ids, tokens.mask, -format_penalty,
                                         tokens.logprobs))
            elif kept:
                tokens = record.tokens
                rows.append(RoundRow(tokens.prompt_ids, tokens.completion_ids, tokens.mask, float(advantage),
                                     tokens.logprobs))
    return rows, skipped


def round_batch(rows: list[RoundRow], pad_id: int, device: Any, multiple: int = 1) -> dict[str, torch.Tensor]:
    """The rows as TRL's loss reads them: prompts left-padded, completions right-padded, the loss mask the
    rounds' own (0 on a closing token the model did not sample), the sampler's log-probabilities. With no
    row, one empty row (its mask all 0) so every rank still runs its forward and backward pass; rows are
    padded with empty ones to a multiple of `multiple` (TRL splits a generation batch into that many equal
    parts)."""
    if not rows:
        rows = [RoundRow([pad_id], [pad_id], [0], 0.0, [0.0])]
    while len(rows) % multiple:
        rows = [*rows, RoundRow([pad_id], [pad_id], [0], 0.0, [0.0])]
    prompt_len = max(len(r.prompt_ids) for r in rows)
    completion_len = max(len(r.completion_ids) for r in rows)
    prompt_ids = torch.full((len(rows), prompt_len), pad_id, dtype=torch.long)
    prompt_mask = torch.zeros((len(rows), prompt_len), dtype=torch.long)
    completion_ids = torch.full((len(rows), completion_len), pad_id, dtype=torch.long)
    completion_mask = torch.zeros((len(rows), completion_len), dtype=torch.long)
    sampling_logps = torch.zeros((len(rows), completion_len), dtype=torch.float32)
    for i, row in enumerate(rows):
        prompt_ids[i, prompt_len - len(row.prompt_ids):] = torch.tensor(row.prompt_ids)
        prompt_mask[i, prompt_len - len(row.prompt_ids):] = 1
        completion_ids[i, : len(row.completion_ids)] = torch.tensor(row.completion_ids)
        completion_mask[i, : len(row.mask)] = torch.tensor(row.mask)
        sampling_logps[i, : len(row.logprobs)] = torch.tensor(row.logprobs, dtype=torch.float32)
    return {"prompt_ids": prompt_ids.to(device), "prompt_mask": prompt_mask.to(device),
            "completion_ids": completion_ids.to(device), "completion_mask": completion_mask.to(device),
            "sampling_per_token_logps": sampling_logps.to(device),
            "advantages": torch.tensor([r.advantage for r in rows], dtype=torch.float32, device=device)}
