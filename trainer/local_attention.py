"""Sliding-window attention in blocks, for training forwards of packed (padding-free) sequences.

Why: the warm start's model attends within a window of w tokens in every layer, yet SDPA is given a
materialised (T x T) mask and so computes every query against every key of its row, and a padded batch
pays for the padding too. Here the rows of a batch are packed into one sequence (TRL's `padding_free`)
and cut into blocks of w queries; a block's queries can only see keys of their own block and the one
before it, so each query is scored against 2w keys instead of every key of its padded row, for the
same outputs (the warm start's backbone, forward and backward: a third of padded SDPA's time).

Masks come from `position_ids` (a token whose position is not its predecessor's plus one starts a new
sequence), so packed conversations never see each other. Registered as the attention implementation
`lab_block_sliding`, which transformers builds no mask for; training forwards only (no cache).
"""

from __future__ import annotations

from typing import Any

import torch

NAME = "lab_block_sliding"


def register() -> str:
    """Make `NAME` a transformers attention implementation (idempotent); returns the name."""
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, block_sliding_attention)
    return NAME


def sequence_ids(position_ids: torch.Tensor | None, batch: int, length: int, device: torch.device) -> torch.Tensor:
    """(batch, length) index of the packed sequence each token belongs to."""
    if position_ids is None:
        return torch.zeros(batch, length, dtype=torch.long, device=device)
    positions = position_ids.expand(batch, -1)
    starts = torch.ones_like(positions, dtype=torch.bool)
    starts[:, 1:] = positions[:, 1:] != positions[:, :-1] + 1
    return starts.long().cumsum(-1)


def block_sliding_attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                            attention_mask: torch.Tensor | None, scaling: float, dropout: float = 0.0,
                            sliding_window: int | None = None, **kwargs: Any) -> tuple[torch.Tensor, None]:
    """Attention of (B, H, T, d) queries over (B, Hkv, T, d) keys and values where query i sees key j
    iff both are in the same packed sequence and 0 <= i - j < `sliding_window` (transformers' sliding
    window); returns (B, T, H, d) like transformers' other implementations."""
    if not sliding_window:
        raise ValueError(f"{NAME}: layer {getattr(module, 'layer_idx', '?')} attends to everything; "
                         "this implementation serves models whose every layer has a sliding window")
    if query.shape[-2] != key.shape[-2]:
        raise ValueError(f"{NAME}: training forwards only (got {query.shape[-2]} queries over "
                         f"{key.shape[-2]} keys, i.e. a cache)")
    batch, heads, length, _ = query.shape
    kv_heads = key.shape[1]
    window = int(sliding_window)
    blocks = -(-length // window)
    pad = blocks * window - length
    ids = sequence_ids(kwargs.get("position_ids"), batch, length, query.device)
    ids = torch.nn.functional.pad(ids, (window, pad), value=-1)  # a block before the first, and the tail: nobody's

    def blocked(states: torch.Tensor) -> torch.Tensor:  # (B, h, T, d) -> (B, h, blocks, w, d), zero tail
        return torch.nn.functional.pad(states, (0, 0, 0, pad)).unflatten(2, (blocks, window))

    def with_previous(states: torch.Tensor) -> torch.Tensor:  # keys of each block: the block before, then its own
        previous = torch.nn.functional.pad(states, (0, 0, 0, 0, 1, 0))[:, :, :-1]
        return torch.cat([previous, states], dim=-2)

    offsets = torch.arange(window, device=query.device)[:, None] + window - torch.arange(2 * window,
                                                                                         device=query.device)
    band = (offsets >= 0) & (offsets < window)  # query a of a block, key b of [previous, own]: 0 <= i - j < w
    query_ids = ids[:, window:].unflatten(1, (blocks, window))
    key_ids = ids.unfold(1, 2 * window, window)  # (B, n, 2w): block n-1 and block n
    allowed = band & (query_ids[..., :, None] == key_ids[..., None, :])  # (B, n, w, 2w)
    queries = blocked(query).transpose(1, 2).flatten(0, 1)  # (B*n, H, w, d): one attention call per block
    keys, values = (with_previous(blocked(states)).transpose(1, 2).flatten(0, 1) for states in (key, value))
    output = torch.nn.functional.scaled_dot_product_attention(
        queries, keys, values, attn_mask=allowed.flatten(0, 1)[:, None], dropout_p=dropout if module.training else 0.0,
        scale=scaling, enable_gqa=heads != kv_heads)  # (B*n, H, w, d)
    output = output.unflatten(0, (batch, blocks)).transpose(2, 3).flatten(1, 2)[:, :length]  # (B, T, H, d)
    return output.contiguous(), None
