"""Typed tools: an OpenAI function schema from a function's hints and docstring, and argument checks.

Why from the code: the text an agent reads about a tool (its description, each argument's) and the
checks its arguments go through cannot drift from the function when both are read off it. A tool is
`tool(db, <arguments>, *, now)`: the first paragraph of its docstring is its description, and one
`name: text` line per argument describes that argument; a keyword-only `now` is handed the domain's
fixed clock. Argument types are str, int, float, bool, list[str] and Literal (an enum of strings).

`Tool.bind` checks one call's arguments before the function runs, so a typed domain refuses a missing,
extra or mistyped argument with one line naming it (`ToolRefused`); tau2 retail does not use it, since
tau2 passes the agent's arguments to its functions unchecked (`lab.benchmarks.tau2_retail.call`).

>>> function_schema("ping", "Say pong.", {})["parameters"]["additionalProperties"]
False
"""

from __future__ import annotations

import inspect
import math
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lab.env.environment import Access
from lab.env.errors import ToolRefused

_JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARG_LINE = re.compile(r"^(\w+): (.+)$")


def json_kind(value: Any) -> str:
    """The JSON type name of a parsed value (`integer` for an int, `boolean` for a bool)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for python, name in ((str, "string"), (int, "integer"), (float, "number"), (list, "array"), (dict, "object")):
        if isinstance(value, python):
            return name
    return type(value).__name__


def type_schema(hint: Any) -> dict[str, Any]:
    """The JSON schema of one argument type hint; a `TypeError` for a type with none."""
    if hint in _JSON_TYPE:
        return {"type": _JSON_TYPE[hint]}
    if typing.get_origin(hint) is list and typing.get_args(hint) == (str,):
        return {"type": "array", "items": {"type": "string"}}
    if typing.get_origin(hint) is Literal:
        return {"type": "string", "enum": list(typing.get_args(hint))}
    raise TypeError(f"tool argument type {hint!r} has no JSON schema (use str, int, float, bool, list[str], Literal)")


def function_schema(name: str, description: str, properties: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """An OpenAI function schema: every property is required and no other is allowed."""
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(properties),
                           "additionalProperties": False}}


def description_of(doc: str) -> str:
    """A docstring's first paragraph on one line: a tool's description."""
    return " ".join(doc.split("\n\n")[0].split())


def _checked(tool: str, name: str, hint: Any, value: Any) -> Any:
    """`value` if it fits `hint` (an int becomes a float for a float argument, so both hash alike)."""
    schema = type_schema(hint)
    kind, got = schema["type"], json_kind(value)
    if "enum" in schema:
        if value not in schema["enum"]:
            raise ToolRefused(f"{tool}: argument '{name}' must be one of {schema['enum']}, got {value!r}")
        return value
    if kind == "number" and got in ("integer", "number"):
        if not math.isfinite(value):
            raise ToolRefused(f"{tool}: argument '{name}' must be a finite number, got {value!r}")
        return float(value)
    if kind == "array" and got == "array":
        bad = next((item for item in value if not isinstance(item, str)), None)
        if bad is not None:
            raise ToolRefused(f"{tool}: argument '{name}' must be an array of strings, holds {json_kind(bad)}")
        return list(value)
    if kind != got:
        raise ToolRefused(f"{tool}: argument '{name}' must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, got {got}")
    return value


def _argument_lines(text: str) -> dict[str, str]:
    """`name: text` lines of a docstring, an indented line continuing the one before it."""
    described: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        if (match := _ARG_LINE.match(line)) is not None:
            last = match[1]
            described[last] = match[2]
        elif last is not None and line.startswith(" ") and line.strip():
            described[last] += " " + line.strip()
        else:
            last = None
    return described


@dataclass(frozen=True)
class Tool:
    """One typed agent tool: its function, access, argument types and OpenAI-style function schema."""

    name: str
    access: Access
    function: Callable[..., str]
    arguments: dict[str, Any]
    schema: dict[str, Any]
    needs_now: bool

    @classmethod
    def of(cls, function: Callable[..., str], access: Access) -> Tool:
        """Build from a function `f(db, <arguments>, *, now)`; every argument must be documented."""
        hints = typing.get_type_hints(function)
        parameters = list(inspect.signature(function).parameters.values())[1:]  # after db
        arguments = {p.name: hints[p.name] for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD}
        needs_now = any(p.name == "now" and p.kind is p.KEYWORD_ONLY for p in parameters)
        return cls.described(function.__name__, access, function, arguments, inspect.getdoc(function) or "", needs_now)

    @classmethod
    def described(cls, name: str, access: Access, function: Callable[..., str], arguments: dict[str, Any],
                  doc: str, needs_now: bool) -> Tool:
        """Build from the parts `of` reads off a live function; code that must not run here (an LLM's,
        read with `ast` in `lab.synth.sandboxed`) gives them without importing anything."""
        paragraphs = doc.split("\n\n")
        described = _argument_lines("\n".join(paragraphs[1:]))
        missing = [arg for arg in arguments if arg not in described]
        if not paragraphs[0] or missing:
            raise TypeError(f"tool {name}: the docstring needs a first paragraph and a "
                            f"'name: description' line for each of {missing or list(arguments)}")
        properties = {arg: {**type_schema(hint), "description": described[arg]} for arg, hint in arguments.items()}
        return cls(name, access, function, arguments, function_schema(name, description_of(doc), properties), needs_now)

    def bind(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The checked keyword arguments, or a `ToolRefused` naming the first missing, extra or mistyped one."""
        extra = sorted(set(arguments) - set(self.arguments))
        if extra:
            raise ToolRefused(f"{self.name}: unexpected argument '{extra[0]}' (it takes {list(self.arguments)})")
        missing = [name for name in self.arguments if name not in arguments]
        if missing:
            raise ToolRefused(f"{self.name}: missing required argument '{missing[0]}'")
        return {name: _checked(self.name, name, hint, arguments[name]) for name, hint in self.arguments.items()}


@dataclass
class Toolbox:
    """Collects a domain's tools in definition order: `@box.read`, `@box.write`, `@box.generic`."""

    tools: dict[str, Tool] = field(default_factory=dict)

    def add(self, function: Callable[..., str], access: Access) -> Callable[..., str]:
        if function.__name__ in self.tools:
            raise TypeError(f"tool {function.__name__} is registered twice")
        self.tools[function.__name__] = Tool.of(function, access)
        return function

    def read(self, function: Callable[..., str]) -> Callable[..., str]:
        return self.add(function, "read")

    def write(self, function: Callable[..., str]) -> Callable[..., str]:
        return self.add(function, "write")

    def generic(self, function: Callable[..., str]) -> Callable[..., str]:
        return self.add(function, "generic")
