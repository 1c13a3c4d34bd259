"""KV-cache layers with room to decode into: each token's keys and values are written in place.

Why. transformers' `DynamicLayer.update` concatenates every new token onto the whole cached history, so
decoding N tokens after a prompt of length L copies about N * (L + N/2) positions per layer. On the CPU
config's tiny model that copy is 11-20% of a decode forward (`hf_batch`'s sampler spends most of a
rollout in decode forwards). A layer that owns a buffer of L + room positions writes each token into the
next free position and hands attention a view of the filled part: the same keys and values, no copy.

For inference only (the sampler runs under `torch.inference_mode`): a write into a buffer that an
earlier forward saved for backward would break autograd.
"""

from __future__ import annotations

from typing import Any

from transformers.cache_utils import DynamicLayer


class RoomyLayer(DynamicLayer):
    """A DynamicLayer whose keys and values are views of buffers with free positions at the end. An
    update that fits is written in place; one that does not, or one after the rows were re-selected (which
    replaces the tensors with new ones), falls back to DynamicLayer's concatenation."""

    def __init__(self, keys: Any, values: Any, room: int) -> None:
        super().__init__()
        self.lazy_initialization(keys, values)
        length = keys.shape[-2]
        self._key_buffer = keys.new_empty((*keys.shape[:-2], length + room, keys.shape[-1]))
        self._value_buffer = values.new_empty((*values.shape[:-2], length + room, values.shape[-1]))
        self._key_buffer[..., :length, :] = keys
        self._value_buffer[..., :length, :] = values
        self.keys, self.values = self._key_buffer[..., :length, :], self._value_buffer[..., :length, :]

    def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        length, new = self.keys.shape[-2], key_states.shape[-2]
        if not self._views_buffers() or length + new > self._key_buffer.shape[-2]:
            return super().update(key_states, value_states, *args, **kwargs)
        self._key_buffer[..., length:length + new, :] = key_states
        self._value_buffer[..., length:length + new, :] = value_states
        self.keys = self._key_buffer[..., :length + new, :]
        self.values = self._value_buffer[..., :length + new, :]
        return self.keys, self.values

    def _views_buffers(self) -> bool:
        """Whether keys and values are still the leading positions of the buffers (a crop keeps them so; a
        row selection or a fallback concatenation does not)."""
        return all(t.data_ptr() == b.data_ptr() and t.shape[:-2] == b.shape[:-2] and t.stride() == b.stride()
                   for t, b in ((self.keys, self._key_buffer), (self.values, self._value_buffer)))


def with_room(cache: Any, room: int) -> None:
    """Give each plain full-attention layer of `cache` a buffer with `room` free positions, in place;
    sliding-window and other layer types are left as they are."""
    layers = getattr(cache, "layers", None) or []
    for index, layer in enumerate(layers):
        if type(layer) is DynamicLayer and layer.is_initialized and layer.keys.numel():
            layers[index] = RoomyLayer(layer.keys, layer.values, room)
