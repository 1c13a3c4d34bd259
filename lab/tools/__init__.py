"""Tools behind one interface (paper §3.1): basic tools, specialist and generalist LLMs."""

from lab.tools.base import Observation, Tool, ToolContext, validate_arguments

__all__ = ["Observation", "Tool", "ToolContext", "validate_arguments"]
