"""Batched turns for `hf:` policies: concurrent sessions of one loaded model decode their turns together.

Why. The rollout engine runs 8-64 rollouts at once (GRPO samples 8 per task, several tasks a step), all
sessions of one model. Decoded one sequence at a time under the model's lock, their turns queue behind
each other; a forward pass over B rows costs little more than over one, so decoding the turns that are
ready together multiplies the tokens per second.

How a batch forms. A session submits a `TurnRequest` and awaits its (ids, logprobs). The first request
on an event loop with no batch in progress starts a driver task, which yields to the loop until
`_QUIET_PASSES` passes in a row bring no new request (sessions that became ready in the same tick, or
a few passes apart after a tool call, join), then decodes all pending requests as one batch in a worker
thread holding the model lock. Requests arriving while a batch runs wait for the next one. No timers.

Why grouping never changes a result. Rows are left-padded, the attention mask hides the padding and
position ids count from each row's own first token, so a row attends to exactly what it would alone;
each row draws from its own generator, through its own `choose`, once per token it records, and stops
on its own stop ids or budget (a finished row is still fed, keeping the batch rectangular, but records
nothing more). Only float rounding in the batched matmuls differs (about 1e-7 on fp32 logits; bf16 is
coarser, so a near-tie argmax can flip there). A row's result is handed back as soon as it finishes,
so its session can run its tool calls while the rest of the batch decodes.

Why each session keeps its KV cache between turns. A rollout's next turn continues the same token
buffer: everything but the tool output and the next turn's header was already fed to the model. A
session hands its `PrefixCache` with every request; when the new context starts with the cached
tokens, only the rest is prefilled (the batch lays out `[pad | row's cache | pad | row's new tokens]`,
the mask hiding both pads, positions continuing each row's own count). After a batch the tokens each
row really fed are kept (the pads, and a finished row's idle feeds, are cut out), so a turn attends to
exactly what a full prefill would give it; only float rounding differs. The cache lives on the session,
so it dies with the rollout: weights change between a trainer's generation batches.

Why decoding writes into preallocated room. After the prefill each full-attention layer moves to a
buffer with free positions, so a decoded token is written in place rather than concatenated onto the
whole history (`lab.policies.roomy_cache` says what that copy costs).

Why a batch's identical prompts are fed once. GRPO starts G rollouts of each example on the same
prompt (the priced catalog, the instruction and the question: most of a rollout's tokens); rows with
no cache and the same new tokens are prefilled as one and their keys and values copied (`_prefill`).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lab.errors import LabInputError

Result = tuple[list[int], list[float]]  # (sampled ids, raw-logit logprobs)

#: Gathering stops after this many loop passes in a row without a new request: a session coming back
#: from a tool call crosses `asyncio.gather` and `wait_for`, a few passes each.
_QUIET_PASSES = 8
#: Positions of KV room each decode batch starts with (`lab.policies.roomy_cache`; it doubles when used up).
_FIRST_ROOM = 256


@dataclass
class PrefixCache:
    """One session's keys and values for the tokens it has fed the model (see the module docstring)."""

    tokens: list[int] = field(default_factory=list)
    # per layer (keys, values): (1, heads, len(tokens), dim)
    layers: list[tuple[Any, Any]] = field(default_factory=list)

    def reusable(self, context: list[int]) -> int:
        """How many leading tokens of `context` this cache can stand for: the longest prefix it shares with
        the cached tokens (a round protocol's next prompt repeats the catalog and the problem, then
        differs); at least one token is always left to prefill, since the next token's logits come from
        the last one. Keys and values of a causal model at a position depend only on the tokens up to it,
        so the shared part of the cache is exactly what a prefill would give."""
        if not self.layers:
            return 0
        limit = min(len(self.tokens), len(context) - 1)
        n = 0
        while n < limit and self.tokens[n] == context[n]:
            n += 1
        return n


@dataclass(frozen=True)
class TurnRequest:
    """One turn to sample after `context`."""

    context: list[int]  # the whole token buffer the turn continues
    max_new_tokens: int  # budget; the model's window may cut it further
    temperature: float  # 0 = greedy
    top_p: float
    generator: Any  # this row's torch.Generator: its draws never depend on the rows beside it
    stop_ids: set[int]  # the turn ends on (and includes) the first of these
    # (raw logits (vocab,), temperature, top_p, generator) -> id: the session's rule (`hf_policy._choose`),
    # handed in so this module needs nothing from the policy's and a test can script the tokens
    choose: Callable[[Any, float, float, Any], int]
    turn: int  # the session's turn number, named in errors
    cache: PrefixCache | None = None  # the session's KV cache, reused and refreshed by the in-process sampler


@dataclass
class _Row:
    """A request in a batch: what it has sampled so far, and the future its session awaits."""

    request: TurnRequest
    budget: int
    future: asyncio.Future
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    done: bool = False


@dataclass
class _Queue:
    """One event loop's requests not yet in a batch, and the task that batches them."""

    rows: list[_Row] = field(default_factory=list)
    driver: asyncio.Task | None = None  # held here: the event loop keeps only a weak reference to its tasks


_MAKING = threading.Lock()  # sessions of one model may be opened from several threads


def sampler_for(loaded: Any) -> BatchedSampler:
    """The sampler of `loaded` (a `LoadedModel`), made on first use and kept on it: sessions batch
    together only through a shared sampler, and it lives exactly as long as the model it drives."""
    with _MAKING:
        if not hasattr(loaded, "batched_sampler"):
            loaded.batched_sampler = BatchedSampler(loaded)
        return loaded.batched_sampler


class BatchedSampler:
    """Decodes the pending turns of one loaded model together, one batch at a time under its lock."""

    def __init__(self, loaded: Any) -> None:
        self.loaded = loaded
        forward = inspect.signature(loaded.model.forward).parameters
        self._keep_last = "logits_to_keep" in forward
        self._cache_name = cache_argument(loaded.model)
        # per event loop, since futures belong to one: a trainer and an eval may share the model from two threads
        self._queues: dict[asyncio.AbstractEventLoop, _Queue] = {}

    async def sample(self, request: TurnRequest) -> Result:
        """(sampled ids ending on a stop id unless cut by the budget, their raw-logit logprobs), as if alone.

        Raises `LabInputError` when the context leaves no room in the model's window; that request
        never joins a batch, so the others are unaffected."""
        budget = self._budget(request)
        loop = asyncio.get_running_loop()
        row = _Row(request, budget, loop.create_future())
        queue = self._queues.get(loop)
        if queue is None:
            queue = self._queues[loop] = _Queue()
            queue.driver = loop.create_task(self._drive(loop, queue))
        queue.rows.append(row)
        return await row.future

    def _budget(self, request: TurnRequest) -> int:
        """The request's token budget, cut to what the model's window leaves after its context."""
        window = getattr(self.loaded.model.config, "max_position_embeddings", None)
        if window is None:
            return request.max_new_tokens
        budget = min(request.max_new_tokens, window - len(request.context))
        if budget < 1:
            raise LabInputError(f"hf: turn {request.turn}: the conversation ({len(request.context)} tokens) "
                                f"fills the {window}-token window")
        return budget

    async def _drive(self, loop: asyncio.AbstractEventLoop, queue: _Queue) -> None:
        """Gather and decode this loop's requests, batch after batch, until none is pending."""
        batch: list[_Row] = []
        try:
            while queue.rows:
                await _gather(queue.rows)
                batch = [row for row in queue.rows if not row.future.done()]  # a cancelled session's turn is dropped
                queue.rows.clear()
                if not batch:
                    continue
                try:
                    await asyncio.to_thread(self._run, batch, loop)
                except Exception as exc:  # the forward pass failed (out of memory, a model bug): the batch shares it
                    for row in batch:
                        _settle(row.future, exc)
        except BaseException:  # cancelled with the loop: nobody may wait forever
            for row in batch + queue.rows:
                row.future.cancel()
            raise
        finally:
            del self._queues[loop]

    def _run(self, rows: list[_Row], loop: asyncio.AbstractEventLoop) -> None:
        """Blocking: decode `rows` as one batch until each hit a stop id or its budget, handing each
        result to its future as soon as the row finishes. A KV-cached loop rather than `generate`, so
        logits are raw and each row's generator is its own."""
        import torch

        from lab.policies.roomy_cache import with_room

        model = self.loaded.model
        with self.loaded.lock, torch.inference_mode():
            step, mask, positions, cache = self._prefill_inputs(rows)
            logits, cache = self._prefill(step, mask, positions, cache)
            with_room(cache, min(_FIRST_ROOM, max(row.budget - len(row.ids) for row in rows)))
            while True:
                live = [not row.done for row in rows]
                tokens = [_draw(row, logits[b]) if on else row.ids[-1] for b, (row, on) in enumerate(zip(rows, live))]
                step = torch.tensor(tokens, device=model.device)[:, None]  # (B, 1): also the next input
                logprobs = torch.log_softmax(logits, dim=-1).gather(1, step)[:, 0].tolist()  # (B,): one sync a step
                for row, on, token, logprob in zip(rows, live, tokens, logprobs):
                    if on:
                        row.ids.append(token)
                        row.logprobs.append(logprob)
                        row.done = token in row.request.stop_ids or len(row.ids) == row.budget
                        # its next turn can only join the next batch, which starts after the caches are kept
                        if row.done:
                            loop.call_soon_threadsafe(_settle, row.future, (row.ids, row.logprobs))
                if all(row.done for row in rows):
                    self._keep_caches(rows, mask, cache)
                    return
                mask = torch.cat([mask, mask.new_ones(len(rows), 1)], dim=1)  # (B, T + n)
                positions = positions[:, -1:] + 1  # (B, 1)
                out = model(input_ids=step, attention_mask=attention_masks(model, step, mask, cache),
                            position_ids=positions, use_cache=True, **{self._cache_name: cache})
                cache = getattr(out, self._cache_name)
                logits = out.logits[:, -1].float()  # (B, vocab) raw: no temperature, no top-p

    def _prefill(self, step: Any, mask: Any, positions: Any, cache: Any) -> tuple[Any, Any]:
        """(raw logits of each row's last position (B, vocab), the cache) after feeding the batch's new tokens.

        Rows with no cached prefix and the same new tokens (a GRPO group's first turn: G rollouts of one
        prompt) are fed once and their keys and values copied to each row: the numbers a separate forward
        pass gives them (a row's padding depends on its length only), for 1/G of the prompt's compute."""
        import torch

        def feed(rows: Any) -> tuple[Any, Any]:
            kv = cache if cache is not None else full_cache()
            out = self.loaded.model(input_ids=step[rows], attention_mask=attention_masks(self.loaded.model,
                                                                                         step[rows], mask[rows], kv),
                                    position_ids=positions[rows], use_cache=True, **{self._cache_name: kv},
                                    **({"logits_to_keep": 1} if self._keep_last else {}))
            return out.logits[:, -1].float(), getattr(out, self._cache_name)

        everyone = slice(None)
        if cache is not None or len(step) == 1:
            return feed(everyone)
        distinct, copies = torch.unique(step, dim=0, return_inverse=True)
        if len(distinct) == len(step):
            return feed(everyone)
        order = torch.arange(len(step), device=step.device)
        firsts = torch.full((len(distinct),), len(step), device=step.device).scatter_reduce(0, copies, order, "amin")
        logits, fed = feed(firsts)
        copied = cache_rows(fed, copies)
        if copied is None:
            return feed(everyone)  # a cache whose rows cannot be copied (exotic layers): feed every row
        return logits[copies], copied

    def _prefill_inputs(self, rows: list[_Row]) -> tuple[Any, Any, Any, Any]:
        """(input ids (B, S), attention mask (B, C + S), position ids (B, S), cache or None) of a batch whose
        rows may continue their sessions' caches (C = the longest reused prefix, 0 when none is)."""
        import torch
        from transformers import DynamicCache

        device = self.loaded.model.device
        reused = [row.request.cache.reusable(row.request.context) if row.request.cache else 0 for row in rows]
        fresh = [row.request.context[n:] for row, n in zip(rows, reused)]
        width, cached = max(len(f) for f in fresh), max(reused)
        step = torch.tensor([[0] * (width - len(f)) + f for f in fresh], device=device)  # the pad id is masked out
        mask = torch.tensor([[0] * (cached - n) + [1] * n + [0] * (width - len(f)) + [1] * len(f)
                             for n, f in zip(reused, fresh)], device=device)
        positions = torch.tensor([[0] * (width - len(f)) + list(range(n, n + len(f))) for n, f in zip(reused, fresh)],
                                 device=device)
        if not cached:
            return step, mask, positions, None
        donor = next(row.request.cache for row, n in zip(rows, reused) if n)
        layers = []
        for index, (keys, _) in enumerate(donor.layers):
            per_row: list[tuple[Any, Any]] = []
            for row, n in zip(rows, reused):
                k, v = row.request.cache.layers[index] if n else (keys[:, :, :0], keys[:, :, :0])
                k, v = k[:, :, :n], v[:, :, :n]  # the shared prefix only
                pad = keys.new_zeros(1, keys.shape[1], cached - n, keys.shape[3])
                per_row.append((torch.cat([pad, k], dim=2), torch.cat([pad, v], dim=2)))
            layers.append((torch.cat([k for k, _ in per_row]), torch.cat([v for _, v in per_row])))
        return step, mask, positions, DynamicCache(ddp_cache_data=layers)

    def _keep_caches(self, rows: list[_Row], mask: Any, cache: Any) -> None:
        """Store in each row's session cache the keys and values of the tokens it really fed: its context
        and all it sampled but the last token (not yet fed when the row stopped)."""
        layers = _plain_layers(cache)
        if layers is None:
            return  # exotic caches (no whole keys and values per layer): always prefill in full
        for b, row in enumerate(rows):
            target = row.request.cache
            if target is None:
                continue
            n = len(row.request.context) + len(row.ids) - 1
            index = mask[b].nonzero()[:n, 0]
            target.tokens = row.request.context + row.ids[:-1]
            target.layers = [(layer.keys[b:b + 1, :, index], layer.values[b:b + 1, :, index]) for layer in layers]


def cache_argument(model: Any) -> str:
    """The name under which `model`'s forward takes a KV cache (`past_key_values`, renamed `cache` in
    transformers 5.2x)."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def attention_masks(model: Any, step: Any, mask: Any, cache: Any) -> Any:
    """The `attention_mask` a forward of the batch takes: its padding mask (B, K), or, for a model with
    sliding-window layers, each layer type's mask with the window counted in the row's real tokens.

    Why: a batch that continues kept caches lays a row out as `[pad | its cache | pad | its new tokens]`,
    and transformers counts a sliding window in key positions, pads included, so a row's first new tokens
    would see fewer of its own tokens than in one forward of the conversation (how GRPO scores them)."""
    window = getattr(model.config, "sliding_window", None)
    kinds = set(getattr(model.config, "layer_types", None) or [])
    if not window or "sliding_attention" not in kinds:
        return mask
    real = mask.cumsum(-1)  # (B, K): how many of the row's real tokens lie at or before each key
    if step.shape[1] == 1 and model.config._attn_implementation == "sdpa":
        # a decode step (one new token per row): its query is the last key, so causality holds already and
        # each mask is the row's real keys (within the window, for sliding layers), built here: the generic
        # builder's per-step cost was most of a decode step's on a tiny model
        keys = mask.bool()
        per_kind = {"full_attention": keys, "sliding_attention": keys & (real[:, -1:] - real < window)}
        return {kind: per_kind[kind][:, None, None, :] for kind in kinds}
    from transformers.masking_utils import create_causal_mask

    def within_window(batch_idx: Any, head_idx: Any, q_idx: Any, kv_idx: Any) -> Any:
        return real[batch_idx, q_idx] - real[batch_idx, kv_idx] < window

    embeds = model.get_input_embeddings()(step)
    common = {"config": model.config, "inputs_embeds": embeds, "attention_mask": mask, "cache": cache}
    masks = {"sliding_attention": create_causal_mask(**common, and_mask_function=within_window,
                                                     allow_is_causal_skip=False)}
    if "full_attention" in kinds:
        masks["full_attention"] = create_causal_mask(**common)
    return masks


def full_cache() -> Any:
    """An empty cache whose every layer keeps all keys and values, sliding-window layers included.

    Why: left to itself, a model with sliding-window layers (Qwen3 `layer_types`) builds a cache that keeps
    only the last window of those layers, and such rows can be neither copied across a group nor kept
    between turns, so every turn would be prefilled in full. The window is the attention mask's job: the
    model masks a sliding layer's keys to its window whatever the cache holds, so the logits are the same."""
    from transformers import DynamicCache

    return DynamicCache()


def cache_rows(cache: Any, index: Any) -> Any:
    """A cache holding `cache`'s rows `index` (a repeated index copies a row), or None when its rows cannot
    be copied (a cache that does not hold whole keys and values): how rows of one prompt, fed once, get a
    cache each."""
    from transformers import DynamicCache

    layers = _plain_layers(cache)
    if layers is None:
        return None
    return DynamicCache(ddp_cache_data=[(layer.keys[index], layer.values[index]) for layer in layers])


def _plain_layers(cache: Any) -> list[Any] | None:
    """The cache's layers when each holds its rows' whole keys and values, else None (e.g. a cache built
    with the model's config, which keeps only a window of sliding layers)."""
    layers = getattr(cache, "layers", None)
    if not layers or any(getattr(layer, "_sliding_window_tensor", None) is not None or not hasattr(layer, "keys")
                         for layer in layers):
        return None
    return layers


def _draw(row: _Row, logits: Any) -> int:
    """The row's next token from its raw logits (vocab,), by its own rule and generator."""
    request = row.request
    return int(request.choose(logits, request.temperature, request.top_p, request.generator))


async def _gather(rows: list[_Row]) -> None:
    """Yield to the event loop until `_QUIET_PASSES` passes in a row add nothing to `rows`."""
    quiet, seen = 0, len(rows)
    while quiet < _QUIET_PASSES:
        await asyncio.sleep(0)
        quiet, seen = (quiet + 1, seen) if len(rows) == seen else (0, len(rows))


def _settle(future: asyncio.Future, outcome: Result | BaseException) -> None:
    """Resolve `future` unless its session stopped waiting (cancelled)."""
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
