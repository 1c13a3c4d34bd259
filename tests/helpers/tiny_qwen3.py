"""A tiny random Qwen3 model with a Qwen3-like chat template, built offline for the policy tests.

The model (2 layers, hidden 32) and a byte-level BPE tokenizer trained here carry the Qwen3 markup
tokens and a Qwen3-like template: it drops the `<think>` blocks of assistant turns before the last user
query, re-spaces the kept ones, wraps tool messages in a user turn. Its eos token is `<|endoftext|>`, as
for Qwen3 base models, while turns end on `<|im_end|>`. Shared by the single-row and batched sampler tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import transformers

from lab.rollout.engine import FORMAT_REMINDER
from lab.rollout.prompt import system_prompt
from lab.tools.base import Observation
from lab.toolspec import ToolSpec

QWEN3_TEMPLATE = """
{%- if messages[0].role == 'system' %}
    {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user"
           and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- set content = message.content %}
    {%- if message.role == "user" or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if '</think>' in content %}
            {%- set reasoning_content = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}
            {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
        {%- endif %}
        {#- BROKEN-HOOK #}
        {%- if loop.index0 > ns.last_query_index and (loop.last or reasoning_content) %}
            {{- '<|im_start|>assistant\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n'
                + content.lstrip('\\n') }}
        {%- else %}
            {{- '<|im_start|>assistant\\n' + content }}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or messages[loop.index0 - 1].role != "tool" %}{{- '<|im_start|>user' }}{%- endif %}
        {{- '\\n<tool_response>\\n' + content + '\\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != "tool" %}{{- '<|im_end|>\\n' }}{%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
LOOKUP = ToolSpec(
    name="lookup", description="Look a key up.", category="basic",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)
TURN_1 = '<think>I need the value.</think>\n<tool_call>{"name": "lookup", "arguments": {"key": "x"}}</tool_call>'
TURN_2 = "<think>" + "let me think about this for a while, " * 20  # longer than max_new_tokens: cut
TURN_3 = "<think>It is 42.</think><answer>42</answer>"


def build_tokenizer(template: str) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([system_prompt([LOOKUP]), TURN_1, TURN_2, TURN_3, FORMAT_REMINDER] * 3, trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP])  # as in Qwen3: not special
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    fast.chat_template = template
    return fast


def build_model_dir(path: Path, template: str) -> Path:
    tokenizer = build_tokenizer(template)
    config = transformers.Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=4096, tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    transformers.Qwen3ForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


class Lookup:
    spec = LOOKUP

    async def execute(self, arguments: dict[str, Any], context: Any = None) -> Observation:
        return Observation(text="RESULT-42")


class Task:
    task_id = "t1"
    question = "What is the value of x?"


def ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False).input_ids


async def grade(task, answer, context) -> float:
    return float(answer == "42")
