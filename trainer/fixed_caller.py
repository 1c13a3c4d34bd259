"""A tiny Qwen3 that always makes one tool call: the model the vLLM tests and the serving benchmark serve.

Why a trained model and not random weights: a server's tool-call parsing, the lab's reading of
`tool_calls` and a whole evaluation through a real server can only be checked with a model whose
greedy output *is* a well-formed call. A 2-layer Qwen3 with the world tokenizer (`trainer.models`)
is fitted here, in a few seconds on a CPU, to answer every prompt with

    <tool_call>\\n{"name": "answer", "arguments": {"model": "answer-1"}}\\n</tool_call>

after the chat template's generation prompt, under both rollout protocols' prompts (the conversation
protocol's system prompt, and a round's prompt with the catalog rendered through `tools=`). That call
ends a task under both protocols with the paper toolkits, so an evaluation through the server runs to
the end. The fit is checked greedily before the folder is written; nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path
from typing import Any

from trainer.models import build_tiny_qwen3, models_dir

#: The one call the model makes (a tool and slot of `configs/toolkits/paper-small.yaml` and `paper.yaml`).
CALL: dict[str, Any] = {"name": "answer", "arguments": {"model": "answer-1"}}
TARGET = "<tool_call>\n" + json.dumps(CALL) + "\n</tool_call><|im_end|>"
#: The fit stops once the loss is low and every check prompt's greedy output is the call (~70 steps).
CHECK_EVERY, MAX_STEPS = 20, 400
#: Qwen3-architecture and small; head_dim 32 is the least vLLM's CPU attention takes.
ARCHITECTURE = {"tokenizer": "world", "vocab_size": 4096, "hidden_size": 128, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 384}


def build_fixed_caller(toolkit: str = "paper-small", seed: int = 0) -> Path:
    """The fitted model's folder (built once per toolkit and seed under the models cache)."""
    key = hashlib.sha256(json.dumps({"a": ARCHITECTURE, "t": TARGET,
                                     "k": toolkit, "s": seed, "v": 3}).encode()).hexdigest()[:10]
    target = models_dir() / f"fixed-caller-{key}"
    if (target / "config.json").is_file():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = build_tiny_qwen3(ARCHITECTURE, seed)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    prompts = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in _prompts(tokenizer, toolkit, seed)]
    answer = tokenizer(TARGET, add_special_tokens=False)["input_ids"]
    checks = prompts[::12]  # a spread of both protocols and turn counts
    torch.manual_seed(seed)
    rng = random.Random(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    wrong: list[int] = []
    for _ in range(MAX_STEPS // CHECK_EVERY):
        if _fit(model, optimiser, rng, prompts, answer, CHECK_EVERY) >= 0.05:
            continue
        wrong = next((out for out in (_greedy(model, ids, len(answer)) for ids in checks) if out != answer), [])
        if not wrong:
            break
    else:
        raise RuntimeError(f"fixed caller: no fit after {MAX_STEPS} steps (greedy: {tokenizer.decode(wrong)!r})")
    staging = target.with_name(target.name + f".tmp{os.getpid()}")
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    staging.rename(target)  # atomic: a folder with a config.json is complete
    return target


def _prompts(tokenizer: Any, toolkit: str, seed: int) -> list[str]:
    """Prompts of both protocols over world questions, rendered as the `hf:` policy and a server render them:
    rounds with some tools withdrawn and documents gathered, conversations at their first turn and after
    a call and its result (role `tool`), with and without a preference instruction."""
    from lab.preference import preference_pairs
    from lab.rollout.prompt import system_prompt, tool_response_text
    from lab.rollout.rounds import round_catalog, round_messages
    from lab.toolkit import load_toolkit
    from lab.world.build import build_world

    rng = random.Random(seed)
    specs = list(load_toolkit(toolkit).tools)
    world = build_world(seed=0, progress=False)
    instructions = [None] + [p.instruction for p in preference_pairs("train")]
    texts = []
    for task in rng.sample(world.tasks, 96):
        instruction = rng.choice(instructions)
        offered = [s for s in specs if s.name == CALL["name"] or rng.random() < 0.7]
        documents = rng.sample(world.docs, rng.randint(0, 2))
        context = ("Documents:\n" + "\n".join(f"Doc {i + 1}: {d.text[:400]} ..." for i, d in enumerate(documents))
                   if documents else "")
        texts.append(tokenizer.apply_chat_template(round_messages(task.question, context, instruction),
                                                   tools=round_catalog(offered), tokenize=False,
                                                   add_generation_prompt=True))
        conversation = [{"role": "system", "content": system_prompt(offered, instruction)},
                        {"role": "user", "content": task.question}]
        for _ in range(rng.randint(0, 2)):
            result = documents[0].text[:300] if documents else "No answer yet."
            conversation += [{"role": "assistant", "content": TARGET.removesuffix("<|im_end|>")},
                             {"role": "tool", "content": tool_response_text(CALL["name"], result, 300)}]
        texts.append(tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True))
    return texts


def _fit(model: Any, optimiser: Any, rng: random.Random, prompts: list[list[int]], answer: list[int], steps: int,
         batch: int = 8) -> float:
    """`steps` of teacher-forced cross-entropy on the answer tokens only (each prompt's own tokens are
    context); returns the last step's loss."""
    import torch

    model.train()
    for _ in range(steps):
        chosen = rng.sample(prompts, batch)
        width = max(len(p) for p in chosen) + len(answer)
        ids = torch.zeros(batch, width, dtype=torch.long)
        labels = torch.full((batch, width), -100, dtype=torch.long)
        mask = torch.zeros(batch, width, dtype=torch.long)
        for row, prompt in enumerate(chosen):
            sequence = prompt + answer
            ids[row, :len(sequence)] = torch.tensor(sequence)
            labels[row, len(prompt):len(sequence)] = torch.tensor(answer)
            mask[row, :len(sequence)] = 1
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()
    return float(loss.detach())


def _greedy(model: Any, prompt: list[int], count: int) -> list[int]:
    import torch

    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=count, do_sample=False)
    return out[0, len(prompt):].tolist()
