"""One error type for bad user input, so the CLI can print one clear line and exit 2.

Library code raises `LabInputError` with a message that names what is wrong and where (file, field,
value). Anything else escaping to the CLI is a bug and keeps its traceback. The helpers below turn the
two usual sources of bad input, YAML files and pydantic validation, into such one-line messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError


class LabInputError(ValueError):
    """Bad user input: a config, a flag, a tool call, a benchmark file or a run id."""

    exit_code = 2


class EndpointUnavailable(RuntimeError):
    """A model endpoint could not answer (after its retries): an outage, not a result.

    Why its own type: a rollout that failed because the orchestrator's server was down says nothing
    about the orchestrator, so the harness does not write it (a resume retries it) and the command
    exits 1 naming the endpoint; every other failure is written with its error and counted."""


class JudgeError(RuntimeError):
    """The judge model could not give a verdict: unreachable, failed, or a reply without exactly one
    verdict tag (`lab.judge.parse_verdict`).

    Why its own type: a missing verdict says nothing about the answer, so the rollout must not be
    stored as wrong (nor as right); like an outage it is not written, a resume re-runs it, and the
    command exits 1 naming it."""


def read_yaml(path: str | Path, what: str = "file") -> Any:
    """Parse a YAML file; a missing file or a syntax error is one line naming the file (and line)."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise LabInputError(f"{path}: {what} not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise LabInputError(f"{path}:{line} malformed YAML ({getattr(exc, 'problem', exc)})") from None


def first_error(exc: ValidationError) -> str:
    """`field.path: message (got value)` for the first problem pydantic found.

    >>> from pydantic import BaseModel
    >>> class M(BaseModel):
    ...     n: int
    >>> try:
    ...     M(n="x")
    ... except ValidationError as e:
    ...     first_error(e)
    "n: Input should be a valid integer, unable to parse string as an integer (got 'x')"
    """
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(root)"
    value = err.get("input")
    shown = f" (got {value!r})" if not isinstance(value, (dict, list)) and value is not None else ""
    return f"{loc}: {str(err['msg']).removeprefix('Value error, ')}{shown}"
