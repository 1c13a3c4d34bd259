"""Real vLLM servers for the serving tests: started once per session from the lab's vLLM environment.

`caller`: a tiny Qwen3 fitted to always make one tool call (`trainer.fixed_caller`), so an evaluation
through the server runs to the end under both protocols; `smollm2`: SmolLM2-135M-Instruct's weights
(dequantised from the GGUF file once), a real LLM to serve as a tool. Each is stopped by pid at the
end of the session. Without the vLLM environment every test here is skipped with one line saying why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.testing.vllm_server import VLLMServer, vllm_unavailable


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the vLLM environment every test here is skipped with the one line saying why, before any
    fixture builds a model."""
    reason = vllm_unavailable()
    if reason:
        here = Path(__file__).parent
        for item in items:
            if here in Path(item.fspath).parents:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def caller_model() -> str:
    from trainer.fixed_caller import build_fixed_caller

    return str(build_fixed_caller())


@pytest.fixture(scope="session")
def caller_server(caller_model: str) -> Iterator[VLLMServer]:
    with VLLMServer(caller_model, name="caller", max_model_len=8192) as server:
        yield server


@pytest.fixture(scope="session")
def smollm2_server() -> Iterator[VLLMServer]:
    from lab.tools.local_llm import converted_dir, load_local_model, smollm2_gguf_path

    gguf = smollm2_gguf_path()
    load_local_model(gguf)  # writes the dequantised safetensors copy on first use
    with VLLMServer(converted_dir(gguf), name="smollm2", max_model_len=8192) as server:
        yield server
