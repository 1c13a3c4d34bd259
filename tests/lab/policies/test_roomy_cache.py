"""Tests for lab.policies.roomy_cache.

RoomyLayer: decoding into preallocated room gives DynamicLayer's keys and values, without re-copying
the history, whether the room holds what comes, grows to hold it, or the rows were re-selected.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from lab.policies.roomy_cache import RoomyLayer, with_room


def _kv(rows: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, 2, length, 4, generator=generator), torch.randn(rows, 2, length, 4, generator=generator))


@settings(max_examples=40, deadline=None)
@given(prompt=st.integers(1, 6), room=st.integers(0, 5), feeds=st.lists(st.integers(1, 3), min_size=1, max_size=6))
def test_updates_equal_dynamic_layers_inside_and_beyond_the_room(prompt, room, feeds):
    keys, values = _kv(3, prompt, 0)
    plain, roomy = DynamicLayer(), RoomyLayer(keys, values, room)
    plain.update(keys, values)
    for seed, new in enumerate(feeds, start=1):
        k, v = _kv(3, new, seed)
        expected = plain.update(k, v)
        got = roomy.update(k, v)
        assert all(torch.equal(a, b) for a, b in zip(got, expected))
        assert roomy.get_seq_length() == plain.get_seq_length()


def test_an_update_that_fits_writes_in_place_and_leaves_earlier_views_alone():
    keys, values = _kv(2, 3, 0)
    roomy = RoomyLayer(keys, values, room=4)
    before, _ = roomy.update(*_kv(2, 1, 1))
    snapshot = before.clone()
    after, _ = roomy.update(*_kv(2, 1, 2))
    assert after.data_ptr() == before.data_ptr()            # the same buffer: nothing was copied
    assert torch.equal(before, snapshot)                     # the earlier view still shows 4 positions
    assert torch.equal(after[..., :4, :], snapshot)


def test_a_full_room_doubles_and_later_updates_write_in_place_again():
    roomy = RoomyLayer(*_kv(1, 3, 0), room=2)
    first, _ = roomy.update(*_kv(1, 2, 1))                  # fills the room
    grown, _ = roomy.update(*_kv(1, 1, 2))                  # does not fit: a buffer with room 4
    assert grown.data_ptr() != first.data_ptr() and torch.equal(grown[..., :5, :], first)
    after, _ = roomy.update(*_kv(1, 3, 3))
    assert after.data_ptr() == grown.data_ptr() and after.shape[-2] == 9


def test_after_a_row_selection_or_a_crop_it_still_matches_a_dynamic_layer():
    keys, values = _kv(3, 4, 0)
    plain, roomy = DynamicLayer(), RoomyLayer(keys, values, room=6)
    plain.update(keys, values)
    for layer in (plain, roomy):
        layer.batch_select_indices(torch.tensor([2, 0]))
    step = _kv(2, 1, 1)
    assert all(torch.equal(a, b) for a, b in zip(roomy.update(*step), plain.update(*step)))
    for layer in (plain, roomy):
        layer.crop(-2)
    step = _kv(2, 2, 2)
    assert all(torch.equal(a, b) for a, b in zip(roomy.update(*step), plain.update(*step)))


def test_with_room_converts_filled_full_attention_layers_only():
    filled, unfilled, sliding = _kv(1, 3, 0), (None, None), (*_kv(1, 3, 1), torch.tensor(4))
    cache = DynamicCache(ddp_cache_data=[filled, unfilled, sliding])
    kinds = [type(layer) for layer in cache.layers]
    with_room(cache, 8)
    assert type(cache.layers[0]) is RoomyLayer and torch.equal(cache.layers[0].keys, filled[0])
    assert [type(layer) for layer in cache.layers[1:]] == kinds[1:]   # unfilled and sliding layers stay as they were
