"""Tools behind one interface (paper §3.1): basic tools, specialist and generalist LLMs."""

from lab.tools.base import Observation, Tool, ToolContext, validate_arguments
from lab.tools.code_interpreter import CodeInterpreter
from lab.tools.local_llm import LocalLLMTool, smollm2_gguf_path
from lab.tools.local_search import LocalSearch, LocalSearchIndex, build_index
from lab.tools.openai_llm import OpenAIChatTool
from lab.tools.web_search import WebSearch, web_search_available, web_search_or_none

__all__ = [
    "build_index",
    "CodeInterpreter",
    "LocalLLMTool",
    "LocalSearch",
    "LocalSearchIndex",
    "Observation",
    "OpenAIChatTool",
    "Tool",
    "ToolContext",
    "smollm2_gguf_path",
    "validate_arguments",
    "web_search_available",
    "web_search_or_none",
    "WebSearch",
]
