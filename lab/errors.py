"""One error type for bad user input, so the CLI can print one clear line and exit 2.

Library code raises `LabInputError` with a message that names what is wrong and where (file, field,
value). Anything else escaping to the CLI is a bug and keeps its traceback.
"""

from __future__ import annotations


class LabInputError(ValueError):
    """Bad user input: a config, a flag, a tool call, a benchmark file or a run id."""

    exit_code = 2


def where(path: object, field: str | None = None) -> str:
    """Format a location as `file: field` for error messages."""
    return f"{path}: {field}" if field else str(path)
