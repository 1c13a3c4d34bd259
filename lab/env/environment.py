"""What an environment is to the core: a named set of tools over a database, called one by one.

Why a base class rather than three copies: the bookshop, tau2 retail and every ToolScale domain run a
chain of calls the same way (the verifier, the replay and the golden runner all do), and they label
each tool the same way: `read` (looks only), `write` (may change the database) or `generic` (touches
no database: the calculator, the hand-over to a human). A subclass gives `name`, `access` and `call`;
a domain whose tools run elsewhere (`lab.synth.sandboxed.SandboxDomain`, one sandbox run per chain)
overrides `run_chain` as well.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lab.env.state import canonical_hash

#: What a tool does to the database: looks (`read`), may change it (`write`), or never touches it (`generic`).
Access = Literal["read", "write", "generic"]


@dataclass(frozen=True)
class Step:
    """One call of a chain: its result text, whether it failed, and for a successful write the
    database's canonical hash after it (None otherwise: reads and failures change nothing)."""

    text: str
    is_error: bool
    hash_after: str | None = None


class Environment(ABC):
    """A named set of tools over a JSON database; subclasses give `name`, `access` and `call`."""

    name: str

    @abstractmethod
    def access(self, name: Any) -> Access | None:
        """The tool's access, None for a name that is no tool of this environment."""

    @abstractmethod
    def call(self, db: dict[str, Any], name: Any, arguments: Any) -> tuple[str, bool]:
        """(result text, error flag) of one agent call, mutating `db` for a successful write; never
        raises for bad agent input (an unknown tool, arguments that are not an object, a refusal)."""

    def run_chain(self, db: dict[str, Any], calls: Iterable[Mapping[str, Any]], hash_writes: bool = True) -> list[Step]:
        """Every call (`{name, arguments}`) in order on `db`, mutated as each write succeeds; with
        `hash_writes`, each successful write's step holds the hash after it."""
        steps = []
        for item in calls:
            text, is_error = self.call(db, item.get("name"), item.get("arguments"))
            written = hash_writes and not is_error and self.access(item.get("name")) == "write"
            steps.append(Step(text, is_error, canonical_hash(db) if written else None))
        return steps
