"""Batched `hf:` turns, measured in one run; prints figures, never asserts.

    python benchmarks/hf_batch_throughput.py                  # N = 8 rollouts, 128 tokens a turn
    python benchmarks/hf_batch_throughput.py --n 16 --tokens 64

A random Qwen3 (hidden 128, 2 layers) with a byte-level BPE tokenizer trained here runs N one-turn
rollouts through the rollout engine twice, with the same seeds: concurrently (`asyncio.gather`, as
the trainer runs a GRPO group, so their turns decode as one batch) and one after another (each turn
a batch of one, as every turn was before batching). It prints generated tokens per second for both
and their ratio. Both runs sample the same tokens (that is the sampler's contract), so the counts
match. The random model's text parses as a plain answer, which is why each rollout has one turn.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

CHATML = ("{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


class Task:
    task_id = "bench"
    question = "What is the value of x? Look it up, then answer."


async def grade(task: Any, answer: str | None, context: Any) -> float:
    return 0.0


def build_policy(max_new_tokens: int) -> Any:
    """An `HFPolicy` over a random Qwen3 and a tokenizer trained on the prompts it will see."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from lab.policies.hf_policy import HFPolicy
    from lab.rollout.prompt import system_prompt

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([system_prompt([]), Task.question] * 3, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                                     pad_token="<|endoftext|>")
    tokenizer.chat_template = CHATML
    config = transformers.Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=32, max_position_embeddings=4096, tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    model = transformers.Qwen3ForCausalLM(config).eval()
    return HFPolicy.live(model, tokenizer, name="hf:bench-qwen3-h128", max_new_tokens=max_new_tokens,
                         temperature=0.7, top_p=0.9)


async def rollout(policy: Any, seed: int) -> int:
    """One rollout; returns the tokens it sampled."""
    from lab.rollout import RolloutConfig, RolloutRequest, run_rollout

    request = RolloutRequest(run_id="bench", task=Task(), sample_idx=seed, seed=seed)
    result = await run_rollout(policy, {}, request, grade, RolloutConfig(max_turns=1))
    return sum(result.tokens.mask)


async def batched(policy: Any, n: int) -> int:
    return sum(await asyncio.gather(*(rollout(policy, seed) for seed in range(n))))


async def one_at_a_time(policy: Any, n: int) -> int:
    return sum([await rollout(policy, seed) for seed in range(n)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="concurrent rollouts")
    parser.add_argument("--tokens", type=int, default=128, help="max new tokens per turn")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads; 1: on a small shared CPU more threads only contend on tiny matrices")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)

    policy = build_policy(args.tokens)
    asyncio.run(rollout(policy, seed=-1))  # warm-up: first-call costs out of both figures
    rates = {}
    for name, run in [("one at a time", one_at_a_time), ("batched", batched)]:
        started = time.perf_counter()
        tokens = asyncio.run(run(policy, args.n))
        seconds = time.perf_counter() - started
        rates[name] = tokens / seconds
        print(f"{name:>14}: {tokens} tokens in {seconds:.2f} s = {rates[name]:.0f} tokens/s")
    print(f"N = {args.n}, {args.tokens} tokens a turn, {args.threads} torch thread(s): batched / one at a time = "
          f"{rates['batched'] / rates['one at a time']:.1f}x")


if __name__ == "__main__":
    main()
