"""KV-cache layers with room to decode into: each token's keys and values are written in place.

Why. transformers' `DynamicLayer.update` concatenates every new token onto the whole cached history, so
decoding N tokens after a prompt of length L copies about N * (L + N/2) positions per layer. On the CPU
config's tiny model that copy is 11-20% of a decode forward (`hf_batch`'s sampler spends most of a
rollout in decode forwards). A layer that owns a buffer of L + room positions writes each token into the
next free position and hands attention a view of the filled part: the same keys and values, no copy.
The room starts small and doubles when used up, so a turn budget of thousands of tokens (GPU configs)
does not reserve its whole length for rows that stop after a few hundred.

For inference only (the sampler runs under `torch.inference_mode`): a write into a buffer that an
earlier forward saved for backward would break autograd.
"""

from __future__ import annotations

from typing import Any

from transformers.cache_utils import DynamicLayer


class RoomyLayer(DynamicLayer):
    """A DynamicLayer whose keys and values are views of buffers with free positions at the end. An
    update that fits is written in place; when the room is used up, the buffers are reallocated with
    twice the room (one copy of the filled part, so decoding stays linear in its length, and a batch
    never holds much more than twice the positions it decoded). After a row selection, which replaces the
    tensors with new ones, it concatenates as DynamicLayer does."""

    def __init__(self, keys: Any, values: Any, room: int) -> None:
        super().__init__()
        self.lazy_initialization(keys, values)
        self._room = max(1, room)
        self._key_buffer, self._value_buffer = _buffer_holding(keys, self._room), _buffer_holding(values, self._room)
        length = keys.shape[-2]
        self.keys, self.values = self._key_buffer[..., :length, :], self._value_buffer[..., :length, :]

    def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        if not self._views_buffers():
            return super().update(key_states, value_states, *args, **kwargs)
        length, end = self.keys.shape[-2], self.keys.shape[-2] + key_states.shape[-2]
        if end > self._key_buffer.shape[-2]:
            self._room = max(2 * self._room, end - length)
            self._key_buffer, self._value_buffer = (_buffer_holding(self.keys, self._room),
                                                    _buffer_holding(self.values, self._room))
        self._key_buffer[..., length:end, :] = key_states
        self._value_buffer[..., length:end, :] = value_states
        self.keys, self.values = self._key_buffer[..., :end, :], self._value_buffer[..., :end, :]
        return self.keys, self.values

    def _views_buffers(self) -> bool:
        """Whether keys and values are still the leading positions of the buffers (a crop keeps them so; a
        row selection, which makes new tensors, does not)."""
        return all(t.data_ptr() == b.data_ptr() and t.shape[:-2] == b.shape[:-2] and t.stride() == b.stride()
                   for t, b in ((self.keys, self._key_buffer), (self.values, self._value_buffer)))


def _buffer_holding(filled: Any, room: int) -> Any:
    """A buffer holding `filled` (..., length, dim) followed by `room` free positions."""
    buffer = filled.new_empty((*filled.shape[:-2], filled.shape[-2] + room, filled.shape[-1]))
    buffer[..., :filled.shape[-2], :] = filled
    return buffer


def with_room(cache: Any, room: int) -> None:
    """Give each plain full-attention layer of `cache` a buffer with `room` free positions (the room then
    doubles as needed), in place; sliding-window and other layer types are left as they are."""
    layers = getattr(cache, "layers", None) or []
    for index, layer in enumerate(layers):
        if type(layer) is DynamicLayer and layer.is_initialized and layer.keys.numel():
            layers[index] = RoomyLayer(layer.keys, layer.values, room)
