"""What a synthetic domain is: records, seeded data, typed tools and a policy (ToolScale, paper §3.3).

Why one description for every domain: the paper builds each of its domains the same way (a database
schema, data that fits it, tool APIs over it, a policy the agent must follow) and then tasks whose
golden actions run on that data. Holding the parts in one `Domain` lets the task generator, the
verifier and the exporter treat bank and restaurant, and the domains still to come, alike.

A database is plain JSON, `{table: {record id: record}}`; each record is the `model_dump(mode="json")`
of its table's pydantic model, whose first field is the id. Plain dicts rather than models because
the canonical hash, the export and a replay all want JSON, and `validate` proves the dicts still fit.

A tool is a pure function `tool(db, **arguments) -> str` that raises `ToolRefused`; a write checks
everything before its first change, so a refused call leaves the database as it was. A tool that
declares a keyword-only `now` is handed the domain's fixed current time: nothing reads the wall clock,
so replaying a task a year later gives the same database. Tools are typed `lab.env.schema.Tool`s
(schema from hints and docstring, arguments checked before the function runs), collected by a
`Toolbox` as read, write or generic; a `Domain` is a `lab.env` environment, so the core's adapter,
replay and grading run it.

    domain.call(db, "get_account_details", {"account_id": "ACC-100001"})   # -> (json text, False)
    domain.call(db, "get_account_details", {})  # -> ("Error: get_account_details: missing ...", True)
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lab.env.environment import Access, Environment
from lab.env.errors import ToolRefused, error_line
from lab.env.schema import Tool, json_kind
from lab.errors import LabInputError

#: The paper's domains hold 11-25 tools each; a domain outside that range is refused when built.
TOOL_RANGE = (11, 25)



class Record(BaseModel):
    """Base of every table's record model: unknown fields are an error, so a typo cannot hide."""

    model_config = ConfigDict(extra="forbid")


# ---- seeds, ids, lookups ----------------------------------------------------------------------------


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from labelled parts via sha256: unlike `hash()`, the same in every process."""
    digest = hashlib.sha256("/".join(str(part) for part in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def seeded_rng(*parts: object) -> random.Random:
    """A `random.Random` whose stream depends only on `parts` (e.g. domain, seed, purpose)."""
    return random.Random(derive_seed(*parts))



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
    """An ISO day, or a `ToolRefused` naming `what` (`fromisoformat` alone would also take '20250905')."""
    if _ISO_DAY.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:  # 2025-02-30
            pass
    raise ToolRefused(f"{what} must be a day as YYYY-MM-DD, got {text!r}")


def clock_day(now: str) -> date:
    """The day of a domain's clock (`now`, an ISO time)."""
    return date.fromisoformat(now[:10])


def clock_text(minutes: int) -> str:
    """Minutes after midnight as HH:MM."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def lookup(db: dict[str, Any], table: str, key: str, what: str) -> dict[str, Any]:
    """The record `key` of `table`, or a `ToolRefused` naming what was not found."""
    record = db[table].get(key)
    if record is None:
        raise ToolRefused(f"{what} '{key}' not found")
    return record


def id_by_email(db: dict[str, Any], table: str, email: str, what: str) -> str:
    """The id of the first record of `table` whose email is `email` (compared trimmed and lower-case,
    as stored), or a `ToolRefused` naming `what` was not found: the identity lookup every domain offers."""
    wanted = email.strip().lower()
    found = next((key for key, record in db[table].items() if record["email"] == wanted), None)
    if found is None:
        raise ToolRefused(f"no {what} with email '{email}'")
    return found


def as_json(value: Any) -> str:
    """A tool's result text: JSON with Python's default separators, as tau2's tools print records."""
    return json.dumps(value)


# ---- the domain ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Domain(Environment):
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

    def access(self, name: Any) -> Access | None:
        tool = self.tools.get(name) if isinstance(name, str) else None
        return tool.access if tool else None

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
            return f"Error: {name}: arguments must be a JSON object, got {json_kind(arguments)}", True
        try:
            values = tool.bind(arguments)
            return tool.function(db, **values, **({"now": self.now} if tool.needs_now else {})), False
        except ToolRefused as exc:
            return error_line(name, str(exc)), True


