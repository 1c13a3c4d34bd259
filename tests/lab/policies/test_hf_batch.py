"""Tests for lab.policies.hf_batch.

BatchedSampler: turns decoded together give what each gives decoded alone (tiny random Qwen3, offline, CPU).

The model and tokenizer are test_hf_policy.py's. Requests submitted with `asyncio.gather` all reach the
sampler before its driver first runs, so they form one batch; the tests check that they did (a spy
on `_run` records batch sizes), then compare each row with the same request decoded alone.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers

from lab.errors import LabInputError
from lab.policies import hf_policy
from lab.policies.hf_batch import BatchedSampler, PrefixCache, TurnRequest
from lab.policies.hf_policy import HFPolicy
from lab.rollout import RolloutConfig, RolloutRequest, run_rollout
from lab.rollout.policy import sampling_seed
from lab.tools.local_llm import LoadedModel
from tests.helpers.tiny_qwen3 import (
    QWEN3_TEMPLATE,
    TURN_1,
    TURN_2,
    TURN_3,
    Lookup,
    Task,
    build_model_dir,
    grade,
    ids,
)

pytestmark = pytest.mark.usefixtures("one_thread")

QUESTIONS = ["Hi", "What is the value of x?", "<think>" + "let me think about this, " * 6, "Look x up, then answer."]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return build_model_dir(tmp_path_factory.mktemp("qwen3-tiny"), QWEN3_TEMPLATE)


@pytest.fixture(scope="module")
def loaded(model_dir) -> LoadedModel:
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir)
    return LoadedModel(model=model, tokenizer=transformers.AutoTokenizer.from_pretrained(model_dir), device="cpu")


@pytest.fixture(scope="module")
def gpt2(loaded) -> LoadedModel:
    """A model with learned absolute positions, where a left-padded row whose position ids did not
    start at its own first token would see other positions than alone (RoPE, being relative, cannot tell)."""
    config = transformers.GPT2Config(vocab_size=len(loaded.tokenizer), n_embd=32, n_layer=2, n_head=4, n_positions=256)
    torch.manual_seed(0)
    return LoadedModel(model=transformers.GPT2LMHeadModel(config).eval(), tokenizer=loaded.tokenizer, device="cpu")


@pytest.fixture(scope="module")
def sliding(loaded) -> LoadedModel:
    """A Qwen3 whose layers all attend within a window of 4 tokens, far shorter than the prompts: its
    keys and values beyond the window must still be kept, and the window left to the attention mask."""
    config = transformers.Qwen3Config(**{**loaded.model.config.to_dict(), "use_sliding_window": True,
                                         "sliding_window": 4,
                                         "max_window_layers": 0, "layer_types": None})
    assert set(config.layer_types) == {"sliding_attention"}
    torch.manual_seed(0)
    return LoadedModel(model=transformers.Qwen3ForCausalLM(config).eval(), tokenizer=loaded.tokenizer, device="cpu")


@pytest.fixture(scope="module")
def mixed(loaded) -> LoadedModel:
    """A Qwen3 with one full-attention layer and one within a window of 4 tokens."""
    config = transformers.Qwen3Config(**{**loaded.model.config.to_dict(), "use_sliding_window": True,
                                         "sliding_window": 4,
                                         "layer_types": ["full_attention", "sliding_attention"]})
    torch.manual_seed(0)
    return LoadedModel(model=transformers.Qwen3ForCausalLM(config).eval(), tokenizer=loaded.tokenizer, device="cpu")


@pytest.fixture()
def batches(monkeypatch) -> list[int]:
    """The size of every batch decoded while the test runs."""
    sizes: list[int] = []
    run = BatchedSampler._run

    def spy(self, rows, loop):
        sizes.append(len(rows))
        return run(self, rows, loop)

    monkeypatch.setattr(BatchedSampler, "_run", spy)
    return sizes


def contexts(loaded: LoadedModel) -> list[list[int]]:
    """Chat prompts of different lengths."""
    tok = loaded.tokenizer
    return [tok(tok.apply_chat_template([{"role": "user", "content": q}], tokenize=False, add_generation_prompt=True),
                add_special_tokens=False).input_ids for q in QUESTIONS]


def turn_request(context: list[int], budget: int = 12, temperature: float = 0.0, top_p: float = 1.0, seed: int = 0,
                 stop: tuple[int, ...] = ()) -> TurnRequest:
    return TurnRequest(context=context, max_new_tokens=budget, temperature=temperature, top_p=top_p,
                       generator=torch.Generator().manual_seed(seed), stop_ids=set(stop),
                       choose=hf_policy._choose, turn=1)


def together(sampler: BatchedSampler, requests: list[TurnRequest]) -> list[Any]:
    """Each request's result (or error), all submitted in the same tick."""
    async def go() -> list[Any]:
        return await asyncio.gather(*(sampler.sample(r) for r in requests), return_exceptions=True)

    return asyncio.run(go())


def alone(sampler: BatchedSampler, requests: list[TurnRequest]) -> list[Any]:
    return [together(sampler, [r])[0] for r in requests]


def assert_same(batched: list[Any], single: list[Any]) -> None:
    for (got_ids, got_lp), (want_ids, want_lp) in zip(batched, single, strict=True):
        assert got_ids == want_ids
        assert got_lp == pytest.approx(want_lp, abs=1e-4)


@pytest.mark.parametrize("architecture", ["loaded", "gpt2"])
def test_greedy_rows_of_different_lengths_decode_as_alone(architecture, batches, request):
    loaded = request.getfixturevalue(architecture)
    sampler, prompts = BatchedSampler(loaded), contexts(loaded)
    assert len({len(p) for p in prompts}) == len(prompts)  # left padding differs on every row
    batched = together(sampler, [turn_request(p) for p in prompts])
    assert batches == [len(prompts)]
    assert_same(batched, alone(sampler, [turn_request(p) for p in prompts]))
    assert sampler._queues == {}  # a finished event loop leaves nothing behind
    # and both are the model's own: raw-logit logprobs of one uncached forward pass over prompt + sample
    for prompt, (sampled, logprobs) in zip(prompts, batched):
        assert len(sampled) == 12
        with torch.no_grad():
            logp = torch.log_softmax(loaded.model(torch.tensor([prompt + sampled])).logits[0].float(), dim=-1)
        assert logprobs == pytest.approx([float(logp[len(prompt) + i - 1, t]) for i, t in enumerate(sampled)], abs=1e-4)


def test_seeded_sampling_draws_per_row_as_alone(loaded, batches):
    sampler, prompts = BatchedSampler(loaded), contexts(loaded)

    def make() -> list[TurnRequest]:
        return [turn_request(p, budget=16, temperature=0.7, top_p=0.9, seed=seed) for seed, p in enumerate(prompts)]

    batched = together(sampler, make())
    assert batches == [len(prompts)]
    assert_same(batched, alone(sampler, make()))
    greedy = together(sampler, [turn_request(p, budget=16) for p in prompts])
    assert [ids for ids, _ in batched] != [ids for ids, _ in greedy]  # it did sample


def test_rows_end_on_their_own_budget_or_stop_id(loaded, batches):
    sampler, prompts = BatchedSampler(loaded), contexts(loaded)
    full = [ids for ids, _ in alone(sampler, [turn_request(p) for p in prompts[:3]])]
    stop = full[0][4]

    def make() -> list[TurnRequest]:
        return [turn_request(prompts[0], stop=(stop,)), turn_request(prompts[1], budget=3), turn_request(prompts[2])]

    batched = together(sampler, make())
    assert batches == [1, 1, 1, 3]
    assert [ids for ids, _ in batched] == [full[0][: full[0].index(stop) + 1], full[1][:3], full[2]]
    assert_same(batched, alone(sampler, make()))


def test_a_context_that_fills_the_window_fails_alone(model_dir, batches):
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, max_position_embeddings=48)
    sampler = BatchedSampler(LoadedModel(model=model, tokenizer=None, device="cpu"))
    prompts = [list(range(10, 20)), list(range(10, 56)), list(range(10, 58)), list(range(10, 70))]  # 10, 46, 48, 60
    batched = together(sampler, [turn_request(p) for p in prompts])
    assert batches == [2]  # the two that do not fit never joined the batch
    for error, n in zip(batched[2:], (48, 60)):
        assert isinstance(error, LabInputError)
        assert str(error) == f"hf: turn 1: the conversation ({n} tokens) fills the 48-token window"
    assert [len(ids) for ids, _ in batched[:2]] == [12, 2]  # the 46-token one is cut by the window
    assert_same(batched[:2], alone(sampler, [turn_request(p) for p in prompts[:2]]))


class ScriptBySeed:
    """Stands in for `_choose` in the sessions it has a script for: each turn's generator is seeded by
    (session seed, turn), so its seed picks the script whatever rows share the batch. Others sample.
    A session's seed is the rollout's seed mixed with the task id (`sampling_seed`)."""

    def __init__(self, scripts: dict[int, list[list[int]]],
                 task_id: str = Task.task_id) -> None:  # rollout seed -> ids per turn
        self.choose = hf_policy._choose
        self.queues = {hf_policy._turn_seed(sampling_seed(seed, task_id), turn): list(tokens)
                       for seed, turns in scripts.items() for turn, tokens in enumerate(turns, start=1)}

    def __call__(self, logits, temperature, top_p, generator) -> int:
        queue = self.queues.get(generator.initial_seed())
        return queue.pop(0) if queue is not None else self.choose(logits, temperature, top_p, generator)


def test_concurrent_rollouts_give_the_trajectories_of_rollouts_run_one_by_one(model_dir, batches, monkeypatch):
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    eot = tokenizer.convert_tokens_to_ids("<|im_end|>")
    call, answer = ids(tokenizer, TURN_1) + [eot], ids(tokenizer, TURN_3) + [eot]
    budget = max(len(call), len(answer))
    cut = ids(tokenizer, TURN_2)[:budget]  # no call, no answer, cut by the budget: a format reminder follows
    scripts = {0: [call, answer], 1: [call, cut, answer], 2: [cut, answer]}  # seeds 3-5 sample freely
    policy = HFPolicy(str(model_dir), max_new_tokens=budget, temperature=0.7, top_p=0.9)

    async def rollout(seed: int):
        request = RolloutRequest(run_id="hf", task=Task(), sample_idx=seed, seed=seed)
        return await run_rollout(policy, {"lookup": Lookup()}, request, grade, RolloutConfig(max_turns=4))

    async def concurrently():
        return await asyncio.gather(*(rollout(seed) for seed in range(6)))

    monkeypatch.setattr(hf_policy, "_choose", ScriptBySeed(scripts))
    results = asyncio.run(concurrently())
    assert batches[0] == 6 and sum(batches) == sum(r.trajectory.n_turns for r in results)
    del batches[:]
    monkeypatch.setattr(hf_policy, "_choose", ScriptBySeed(scripts))
    one_by_one = [asyncio.run(rollout(seed)) for seed in range(6)]
    assert set(batches) == {1}

    assert [r.trajectory.n_turns for r in results[:3]] == [2, 3, 2]  # the scripted ones ran several turns
    for got, want in zip(results, one_by_one, strict=True):
        assert (got.trajectory.n_turns, got.trajectory.status, got.trajectory.final_answer, got.trajectory.error) == (
            want.trajectory.n_turns, want.trajectory.status, want.trajectory.final_answer, want.trajectory.error)
        assert got.tokens.prompt_ids == want.tokens.prompt_ids
        assert (got.tokens.completion_ids, got.tokens.mask) == (want.tokens.completion_ids, want.tokens.mask)
        assert got.tokens.logprobs == pytest.approx(want.tokens.logprobs, abs=1e-4)


@pytest.fixture()
def prefills(loaded, gpt2, sliding) -> list[tuple[int, int]]:
    """(rows, width) of every first (prefill) forward pass of a batch while the test runs."""
    shapes: list[tuple[int, int]] = []

    def hook(module, args, kwargs):
        ids_in = kwargs.get("input_ids")
        if ids_in is not None and ids_in.shape[1] > 1:
            shapes.append(tuple(ids_in.shape))

    handles = [m.model.register_forward_pre_hook(hook, with_kwargs=True) for m in (loaded, gpt2, sliding)]
    yield shapes
    for handle in handles:
        handle.remove()


def cached(context: list[int], cache: PrefixCache, **kwargs: Any) -> TurnRequest:
    request = turn_request(context, **kwargs)
    return TurnRequest(**{**request.__dict__, "cache": cache})


@pytest.mark.parametrize("architecture", ["loaded", "gpt2", "sliding"])
def test_a_session_cache_prefills_only_the_new_tokens_and_samples_as_a_full_prefill(architecture, prefills, request):
    loaded = request.getfixturevalue(architecture)
    sampler, prompts = BatchedSampler(loaded), contexts(loaded)
    caches = [PrefixCache() for _ in prompts]
    first = together(sampler, [cached(p, c) for p, c in zip(prompts, caches)])
    for prompt, cache, (sampled, _) in zip(prompts, caches, first):
        assert cache.tokens == prompt + sampled[:-1]  # what was fed: the last sampled token was not yet
    tool_output = [list(range(40, 40 + 3 * (i + 1))) for i in range(len(prompts))]  # rows add different lengths
    second = [p + s + extra for p, (s, _), extra in zip(prompts, first, tool_output)]
    del prefills[:]
    reused = together(sampler, [cached(c, k, budget=8) for c, k in zip(second, caches)])
    assert [width for _,
            width in prefills] == [max(len(extra) + 1 for extra in tool_output)]  # not the whole conversation
    assert_same(reused, alone(sampler, [turn_request(c, budget=8) for c in second]))


def test_a_cache_is_reused_up_to_where_it_differs_and_a_batch_mixes_both(loaded, batches):
    sampler, prompts = BatchedSampler(loaded), contexts(loaded)
    caches = [PrefixCache() for _ in prompts]
    first = together(sampler, [cached(p, c) for p, c in zip(prompts, caches)])
    edited = list(prompts[1])
    edited[2] = edited[2] + 1  # the context differs from the cache at token 2: only tokens 0-1 are reused
    contexts_2 = [prompts[0] + first[0][0] + [7, 8], edited, prompts[2] + first[2][0][:3], prompts[3]]
    requests = [cached(contexts_2[0], caches[0]), cached(contexts_2[1], caches[1]), cached(contexts_2[2], caches[2]),
                turn_request(contexts_2[3])]
    shared_2 = min(len(caches[2].tokens), len(contexts_2[2]) - 1)  # a shorter continuation: all but its last token
    assert [c.reusable(x) for c, x in zip(caches[:3], contexts_2[:3])] == [len(caches[0].tokens), 2, shared_2]
    del batches[:]
    mixed = together(sampler, requests)
    assert batches == [4]
    assert_same(mixed, alone(sampler, [turn_request(c) for c in contexts_2]))


@pytest.mark.parametrize("architecture", ["loaded", "gpt2", "sliding"])
def test_rows_of_one_prompt_are_prefilled_once_and_sample_as_alone(architecture, prefills, request):
    """A GRPO group's first turn: G rows of one prompt, each with its own generator."""
    loaded = request.getfixturevalue(architecture)
    sampler, prompts = BatchedSampler(loaded), contexts(loaded)
    rows = [turn_request(prompts[i % 2], temperature=1.0, seed=s) for s, i in enumerate([0, 0, 0, 1, 1, 0])]
    batched = together(sampler, rows)
    assert [n for n, _ in prefills] == [2]  # two distinct prompts fed, for six rows
    assert_same(batched, alone(sampler, [turn_request(r.context, temperature=1.0, seed=s) for s, r in enumerate(rows)]))
    assert len({tuple(ids) for ids, _ in batched}) > 2  # the copies sampled on their own generators


@pytest.mark.parametrize("architecture", ["sliding", "mixed"])
def test_a_sliding_window_model_samples_what_a_full_forward_scores(architecture, request):
    """Rows continued from kept caches and rows copied across a group score their tokens as one
    forward of the whole conversation does (how GRPO scores them), window and all."""
    sliding = request.getfixturevalue(architecture)
    sampler, prompts = BatchedSampler(sliding), contexts(sliding)
    caches = [PrefixCache() for _ in prompts]
    first = together(sampler, [cached(p, c, temperature=1.0, seed=i) for i, (p, c) in enumerate(zip(prompts, caches))])
    second = [p + s + [40, 41, 42] for p, (s, _) in zip(prompts, first)]
    reused = together(sampler, [cached(c, k, budget=8, temperature=1.0, seed=9) for c, k in zip(second, caches)])
    with torch.no_grad():
        for context, (sampled, logprobs) in zip(second, reused):
            logits = sliding.model(input_ids=torch.tensor([context + sampled])).logits[0].float()
            scored = torch.log_softmax(logits[len(context) - 1:-1], dim=-1).gather(1, torch.tensor(sampled)[:, None])[:,
                                                                                                                      0]
            assert logprobs == pytest.approx(scored.tolist(), abs=1e-4)
