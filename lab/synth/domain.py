"""What a synthetic domain is: records, seeded data, typed tools and a policy (ToolScale, paper §3.3).

Why one description for every domain: the paper builds each of its domains the same way (a database
schema, data that fits it, tool APIs over it, a policy the agent must follow) and then tasks whose
golden actions run on that data. Holding the parts in one `Domain` lets the task generator, the
verifier and the exporter treat bank and restaurant, and the domains still to come, alike.

A database is plain JSON, `{table: {record id: record}}`; each record is the `model_dump(mode="json")`
of its table's pydantic model, whose first field is the id. Plain dicts rather than models because
the canonical hash, the export and a replay all want JSON, and `validate` proves the dicts still fit.

A tool is a pure function `tool(db, **arguments) -> str` that raises `DomainError`; a write checks
everything before its first change, so a refused call leaves the database as it was. A tool that
declares a keyword-only `now` is handed the domain's fixed current time: nothing reads the wall clock,
so replaying a task a year later gives the same database. The first paragraph of a tool's docstring
is its description, and one `name: text` line per argument describes that argument; the schema is
built from those and the type hints, so the text an agent reads cannot drift from the code.

    domain.call(db, "get_account_details", {"account_id": "ACC-100001"})   # -> (json text, False)
    domain.call(db, "get_account_details", {})  # -> ("Error: get_account_details: missing ...", True)
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import random
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from lab.errors import LabInputError

ToolKind = Literal["read", "write", "generic"]
#: The paper's domains hold 11-25 tools each; a domain outside that range is refused when built.
TOOL_RANGE = (11, 25)


class DomainError(ValueError):
    """A refused or impossible tool call; `Domain.call` turns it into one `Error: ...` line."""


def canonical_hash(db: dict[str, Any]) -> str:
    """tau2's database hash: sha256 of the sorted-key JSON text with Python's default separators.

    `check_circular=False` changes no output (a database has no cycles) and saves a tenth of the time.
    """
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str, check_circular=False).encode()).hexdigest()


@dataclass(frozen=True)
class Step:
    """One call of a chain: its result text, whether it failed, and for a successful write the
    database's canonical hash after it (None otherwise: reads and failures change nothing)."""

    text: str
    is_error: bool
    hash_after: str | None = None


class Record(BaseModel):
    """Base of every table's record model: unknown fields are an error, so a typo cannot hide."""

    model_config = ConfigDict(extra="forbid")


# ---- seeds, copies, ids ----------------------------------------------------------------------------


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from labelled parts via sha256: unlike `hash()`, the same in every process."""
    digest = hashlib.sha256("/".join(str(part) for part in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def seeded_rng(*parts: object) -> random.Random:
    """A `random.Random` whose stream depends only on `parts` (e.g. domain, seed, purpose)."""
    return random.Random(derive_seed(*parts))


def clone(db: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON database; an orjson round trip keeps ints, floats and key order."""
    return orjson.loads(orjson.dumps(db))


def next_id(table: Mapping[str, Any], prefix: str, width: int) -> str:
    """A new id for `table`: `prefix` + the record count + 1, zero-padded; deterministic, never reused.

    Records are never deleted, so that id is free; if it is taken anyway (ids with gaps, from
    hand-made data), the one after the largest is used instead.
    """
    candidate = f"{prefix}{len(table) + 1:0{width}d}"
    if candidate not in table:
        return candidate
    numbers = [int(key[len(prefix):]) for key in table if key.startswith(prefix) and key[len(prefix):].isdigit()]
    return f"{prefix}{max(numbers, default=0) + 1:0{width}d}"


_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_day(text: str, what: str) -> date:
    """An ISO day, or a `DomainError` naming `what` (`fromisoformat` alone would also take '20250905')."""
    if _ISO_DAY.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:  # 2025-02-30
            pass
    raise DomainError(f"{what} must be a day as YYYY-MM-DD, got {text!r}")


def clock_day(now: str) -> date:
    """The day of a domain's clock (`now`, an ISO time)."""
    return date.fromisoformat(now[:10])


def clock_text(minutes: int) -> str:
    """Minutes after midnight as HH:MM."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def lookup(db: dict[str, Any], table: str, key: str, what: str) -> dict[str, Any]:
    """The record `key` of `table`, or a `DomainError` naming what was not found."""
    record = db[table].get(key)
    if record is None:
        raise DomainError(f"{what} '{key}' not found")
    return record


def id_by_email(db: dict[str, Any], table: str, email: str, what: str) -> str:
    """The id of the first record of `table` whose email is `email` (compared trimmed and lower-case,
    as stored), or a `DomainError` naming `what` was not found: the identity lookup every domain offers."""
    wanted = email.strip().lower()
    found = next((key for key, record in db[table].items() if record["email"] == wanted), None)
    if found is None:
        raise DomainError(f"no {what} with email '{email}'")
    return found


def as_json(value: Any) -> str:
    """A tool's result text: JSON with Python's default separators, as tau2's tools print records."""
    return json.dumps(value)


# ---- tools: argument checks and schemas from hints and docstrings ----------------------------------

_JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARG_LINE = re.compile(r"^(\w+): (.+)$")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for python, name in ((str, "string"), (int, "integer"), (float, "number"), (list, "array"), (dict, "object")):
        if isinstance(value, python):
            return name
    return type(value).__name__


def _type_schema(hint: Any) -> dict[str, Any]:
    if hint in _JSON_TYPE:
        return {"type": _JSON_TYPE[hint]}
    if typing.get_origin(hint) is list and typing.get_args(hint) == (str,):
        return {"type": "array", "items": {"type": "string"}}
    if typing.get_origin(hint) is Literal:
        return {"type": "string", "enum": list(typing.get_args(hint))}
    raise TypeError(f"tool argument type {hint!r} has no JSON schema (use str, int, float, bool, list[str], Literal)")


def _checked(tool: str, name: str, hint: Any, value: Any) -> Any:
    """`value` if it fits `hint` (an int becomes a float for a float argument, so both hash alike)."""
    schema = _type_schema(hint)
    kind, got = schema["type"], _json_kind(value)
    if "enum" in schema:
        if value not in schema["enum"]:
            raise DomainError(f"{tool}: argument '{name}' must be one of {schema['enum']}, got {value!r}")
        return value
    if kind == "number" and got in ("integer", "number"):
        if not math.isfinite(value):
            raise DomainError(f"{tool}: argument '{name}' must be a finite number, got {value!r}")
        return float(value)
    if kind == "array" and got == "array":
        bad = next((item for item in value if not isinstance(item, str)), None)
        if bad is not None:
            raise DomainError(f"{tool}: argument '{name}' must be an array of strings, holds {_json_kind(bad)}")
        return list(value)
    if kind != got:
        raise DomainError(f"{tool}: argument '{name}' must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, got {got}")
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
    """One agent tool: its function, kind, argument types and OpenAI-style function schema."""

    name: str
    kind: ToolKind
    function: Callable[..., str]
    arguments: dict[str, Any]
    schema: dict[str, Any]
    needs_now: bool

    @classmethod
    def of(cls, function: Callable[..., str], kind: ToolKind) -> Tool:
        """Build from a function `f(db, <arguments>, *, now)`; every argument must be documented."""
        hints = typing.get_type_hints(function)
        parameters = list(inspect.signature(function).parameters.values())[1:]  # after db
        arguments = {p.name: hints[p.name] for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD}
        needs_now = any(p.name == "now" and p.kind is p.KEYWORD_ONLY for p in parameters)
        return cls.described(function.__name__, kind, function, arguments, inspect.getdoc(function) or "", needs_now)

    @classmethod
    def described(cls, name: str, kind: ToolKind, function: Callable[..., str], arguments: dict[str, Any],
                  doc: str, needs_now: bool) -> Tool:
        """Build from the parts `of` reads off a live function; code that must not run here (an LLM's,
        read with `ast` in `lab.synth.sandboxed`) gives them without importing anything."""
        paragraphs = doc.split("\n\n")
        described = _argument_lines("\n".join(paragraphs[1:]))
        missing = [arg for arg in arguments if arg not in described]
        if not paragraphs[0] or missing:
            raise TypeError(f"tool {name}: the docstring needs a first paragraph and a "
                            f"'name: description' line for each of {missing or list(arguments)}")
        properties = {arg: {**_type_schema(hint), "description": described[arg]} for arg, hint in arguments.items()}
        schema = {"name": name, "description": " ".join(paragraphs[0].split()),
                  "parameters": {"type": "object", "properties": properties, "required": list(arguments),
                                 "additionalProperties": False}}
        return cls(name, kind, function, arguments, schema, needs_now)

    def bind(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The checked keyword arguments, or a `DomainError` naming the first missing, extra or mistyped one."""
        extra = sorted(set(arguments) - set(self.arguments))
        if extra:
            raise DomainError(f"{self.name}: unexpected argument '{extra[0]}' (it takes {list(self.arguments)})")
        missing = [name for name in self.arguments if name not in arguments]
        if missing:
            raise DomainError(f"{self.name}: missing required argument '{missing[0]}'")
        return {name: _checked(self.name, name, hint, arguments[name]) for name, hint in self.arguments.items()}


@dataclass
class Toolbox:
    """Collects a domain's tools in definition order: `@box.read`, `@box.write`, `@box.generic`."""

    tools: dict[str, Tool] = field(default_factory=dict)

    def add(self, function: Callable[..., str], kind: ToolKind) -> Callable[..., str]:
        if function.__name__ in self.tools:
            raise TypeError(f"tool {function.__name__} is registered twice")
        self.tools[function.__name__] = Tool.of(function, kind)
        return function

    def read(self, function: Callable[..., str]) -> Callable[..., str]:
        return self.add(function, "read")

    def write(self, function: Callable[..., str]) -> Callable[..., str]:
        return self.add(function, "write")

    def generic(self, function: Callable[..., str]) -> Callable[..., str]:
        return self.add(function, "generic")


# ---- the domain ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    """A domain as the paper defines one: schema (`tables`), data (`generate`), tools and policy."""

    name: str
    tables: Mapping[str, type[Record]]
    generate: Callable[[int, int], dict[str, Any]]
    default_size: int
    tools: Mapping[str, Tool]
    policy: str
    now: str

    def __post_init__(self) -> None:
        low, high = TOOL_RANGE
        if not low <= len(self.tools) <= high:
            raise TypeError(f"domain {self.name}: {len(self.tools)} tools, the paper's domains hold {low}-{high}")
        if self.now not in self.policy:
            raise TypeError(f"domain {self.name}: the policy must state the current time {self.now!r}")

    def make_db(self, seed: int, size: int | None = None) -> dict[str, Any]:
        """The seeded database (`size` main records, e.g. customers), validated against the tables."""
        db = self.generate(seed, self.default_size if size is None else size)
        self.validate(db)
        return db

    def validate(self, db: dict[str, Any]) -> None:
        """Raise `LabInputError` naming the table, record and problem unless every record is in
        canonical form: it validates, its key is its id, and it equals its own dump (field order and
        float-versus-int included, since both change the hash)."""
        if sorted(db) != sorted(self.tables):
            raise LabInputError(f"{self.name} db: tables {sorted(db)}, expected {sorted(self.tables)}")
        for table, model in self.tables.items():
            id_field = next(iter(model.model_fields))
            for key, record in db[table].items():
                where = f"{self.name} db: {table} '{key}'"
                try:
                    dumped = model.model_validate(record).model_dump(mode="json")
                except ValidationError as exc:
                    raise LabInputError(f"{where}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
                if record[id_field] != key:
                    raise LabInputError(f"{where}: its {id_field} is '{record[id_field]}'")
                if as_json(dumped) != as_json(record):
                    raise LabInputError(f"{where}: not in canonical form (field order or a number's type)")

    def kind(self, name: str) -> ToolKind | None:
        tool = self.tools.get(name) if isinstance(name, str) else None
        return tool.kind if tool else None

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """Every tool's function schema, in definition order."""
        return [tool.schema for tool in self.tools.values()]

    def call(self, db: dict[str, Any], name: Any, arguments: Any) -> tuple[str, bool]:
        """(result text, error flag) of one agent call, mutating `db` for a successful write.

        Never raises for bad agent input: an unknown tool, arguments that are not an object, a
        missing, extra or mistyped argument and a refused call each give one `Error: ...` line.
        """
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return f"Error: unknown tool {name!r} in domain {self.name}", True
        if not isinstance(arguments, dict):
            return f"Error: {name}: arguments must be a JSON object, got {_json_kind(arguments)}", True
        try:
            values = tool.bind(arguments)
            return tool.function(db, **values, **({"now": self.now} if tool.needs_now else {})), False
        except DomainError as exc:
            return error_line(name, str(exc)), True

    def run_chain(self, db: dict[str, Any], calls: Iterable[Mapping[str, Any]], hash_writes: bool = True) -> list[Step]:
        """Every call (`{name, arguments}`) in order on `db`, mutated as each write succeeds; with
        `hash_writes`, each successful write's step holds the hash after it.

        The one way the verifier and the grader run several calls, so a domain whose tools run
        elsewhere (`lab.synth.sandboxed.SandboxDomain`, one sandbox run per chain) fits them too.
        """
        steps = []
        for item in calls:
            text, is_error = self.call(db, item.get("name"), item.get("arguments"))
            written = hash_writes and not is_error and self.kind(item.get("name")) == "write"
            steps.append(Step(text, is_error, canonical_hash(db) if written else None))
        return steps


def error_line(name: str, message: str) -> str:
    """A refusal as the agent sees it: `Error: <tool>: <message>` on one line."""
    message = " ".join(message.split())
    return f"Error: {message if message.startswith(name + ':') else f'{name}: {message}'}"
