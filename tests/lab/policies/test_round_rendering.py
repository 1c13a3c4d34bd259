"""Round prompts through a chat template: the catalog renders natively (`tools=`), as Qwen3's template does."""

from __future__ import annotations

import json

from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

from lab.policies.hf_policy import render_round
from lab.rollout.rounds import round_catalog, round_messages
from lab.toolkit import load_toolkit
from trainer.models import CHATML_TRAINING_TEMPLATE

PLAIN_CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
                "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def tokenizer(template: str) -> PreTrainedTokenizerFast:
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")),
                                  eos_token="<|im_end|>")
    tok.chat_template = template
    return tok


def test_the_qwen3_style_template_renders_the_catalog_in_the_system_turn():
    catalog = round_catalog(list(load_toolkit("paper-small").tools))
    text = render_round(tokenizer(CHATML_TRAINING_TEMPLATE), round_messages("What is 2+2?", ""), catalog)
    lines = [json.dumps(entry, ensure_ascii=False) for entry in catalog]
    assert text.startswith("<|im_start|>system\nYou are good at using tools.\n\n# Tools\n\n")
    assert "<tools>\n" + "\n".join(lines) + "\n</tools>" in text
    assert text.count("<|im_start|>system") == 1
    assert text.endswith("Problem: What is 2+2?\n\n\n\nChoose an appropriate tool.<|im_end|>\n<|im_start|>assistant\n")


def test_a_template_that_ignores_tools_gets_the_same_block_in_its_system_message():
    catalog = round_catalog(list(load_toolkit("paper-small").tools))
    messages = round_messages("What is 2+2?", "")
    native = render_round(tokenizer(CHATML_TRAINING_TEMPLATE), messages, catalog)
    injected = render_round(tokenizer(PLAIN_CHATML), messages, catalog)
    assert injected == native
