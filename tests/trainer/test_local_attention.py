"""Block sliding-window attention over packed rows gives what SDPA gives over the padded batch: the same
outputs and the same gradients, and packed conversations never see each other."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trainer.local_attention import NAME, block_sliding_attention, register
from trainer.models import build_tiny_qwen3


class Layer(torch.nn.Module):
    """What the attention function reads off its module."""

    layer_idx = 0


def reference(query, key, value, lengths, window, scaling):
    """Per packed sequence, every query over its own keys at most `window - 1` positions back."""
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    outputs, start = [], 0
    for length in lengths:
        span = slice(start, start + length)
        i = torch.arange(length)[:, None]
        j = torch.arange(length)[None, :]
        mask = (j <= i) & (i - j < window)
        outputs.append(torch.nn.functional.scaled_dot_product_attention(
            query[:, :, span], key[:, :, span], value[:, :, span], attn_mask=mask, scale=scaling))
        start += length
    return torch.cat(outputs, dim=2).transpose(1, 2)


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 23), min_size=1, max_size=4), window=st.integers(1, 7),
       kv_heads=st.sampled_from([1, 2, 4]), seed=st.integers(0, 2**16))
def test_packed_block_attention_equals_per_sequence_sliding_attention(lengths, window, kv_heads, seed):
    generator = torch.Generator().manual_seed(seed)
    total = sum(lengths)
    query = torch.randn(1, 4, total, 8, generator=generator)
    key, value = (torch.randn(1, kv_heads, total, 8, generator=generator) for _ in range(2))
    positions = torch.cat([torch.arange(n) for n in lengths])[None]
    output, _ = block_sliding_attention(Layer().eval(), query, key, value, None, scaling=0.3, sliding_window=window,
                                        position_ids=positions)
    torch.testing.assert_close(output, reference(query, key, value, lengths, window, 0.3), rtol=1e-5, atol=1e-5)


def test_block_attention_refuses_full_attention_layers_and_caches():
    query = torch.randn(1, 2, 5, 4)
    with pytest.raises(ValueError, match="attends to everything"):
        block_sliding_attention(Layer(), query, query, query, None, scaling=1.0, sliding_window=None)
    with pytest.raises(ValueError, match="training forwards only"):
        block_sliding_attention(Layer(), query[:, :, :1], query, query, None, scaling=1.0, sliding_window=3)


@pytest.mark.slow
def test_a_packed_batch_trains_a_sliding_model_as_the_padded_batch_does():
    from transformers import AutoModelForCausalLM

    spec = {"tokenizer": "world", "vocab_size": 1024, "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 64, "use_sliding_window": True,
            "sliding_window": 5, "max_window_layers": 0}
    model = AutoModelForCausalLM.from_pretrained(build_tiny_qwen3(spec, seed=0))
    generator = torch.Generator().manual_seed(0)
    lengths = [13, 4, 21]
    rows = [torch.randint(5, 1000, (n,), generator=generator) for n in lengths]

    def loss_and_grads(parts: list[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad(set_to_none=True)
        sum((part ** 2).mean() for part in parts).backward()
        return torch.cat(parts).detach(), [p.grad.clone() for p in model.parameters()]

    padded = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True)
    mask = torch.nn.utils.rnn.pad_sequence([torch.ones(n, dtype=torch.long) for n in lengths], batch_first=True)
    model.set_attn_implementation("sdpa")
    hidden = model.model(input_ids=padded, attention_mask=mask).last_hidden_state
    expected = loss_and_grads([hidden[i, :n] for i, n in enumerate(lengths)])

    model.set_attn_implementation(register())
    assert model.config._attn_implementation == NAME
    positions = torch.cat([torch.arange(n) for n in lengths])[None]
    hidden = model.model(input_ids=torch.cat(rows)[None], position_ids=positions).last_hidden_state[0]
    packed = loss_and_grads(list(torch.split(hidden, lengths)))
    torch.testing.assert_close(packed[0], expected[0], rtol=1e-5, atol=1e-5)
    for mine, theirs in zip(packed[1], expected[1]):
        torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-6)
