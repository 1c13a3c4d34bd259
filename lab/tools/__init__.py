"""Tools behind one interface (paper §3.1): basic tools, specialist and generalist LLMs.

The tool classes are imported on first use (PEP 562): they pull in faiss, torch, transformers and
the Tavily client, which commands such as `orchestra runs` never need, and `lab.tools.base` is
imported by almost everything.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from lab.tools.base import Observation, Tool, ToolContext, validate_arguments

_LAZY = {
    "CodeInterpreter": "code_interpreter",
    "LocalLLMTool": "local_llm",
    "smollm2_gguf_path": "local_llm",
    "LocalSearch": "local_search",
    "LocalSearchIndex": "local_search",
    "build_index": "index_build",
    "OpenAIChatTool": "openai_llm",
    "WebSearch": "web_search",
    "web_search_available": "web_search",
    "web_search_or_none": "web_search",
}

__all__ = ["Observation", "Tool", "ToolContext", "validate_arguments", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"lab.tools.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'lab.tools' has no attribute {name!r}")
