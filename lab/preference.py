"""Preference vectors P over [each tool, outcome, compute, latency] (paper Eq. 2).

P is bound to a toolkit's tool order, so column i of the reward features and entry i of P always mean
the same thing. The paper pairs each P with a natural-language preference instruction (PI) shown to the
orchestrator; `lab/data/preferences.yaml` holds such pairs, split into train and eval sets so that
preference-following is evaluated on instructions never seen in training.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from lab.errors import LabInputError

#: The three non-tool columns, after the per-tool call counts (paper Eq. 2).
OBJECTIVES = ("outcome", "compute", "latency")


class Preference(BaseModel):
    """A preference vector over a toolkit's tools and the three objectives, every entry in [0, 1]."""

    model_config = ConfigDict(frozen=True)

    tools: tuple[str, ...] = Field(description="Tool names in toolkit order (the first n columns).")
    weights: tuple[float, ...] = Field(description="n + 3 entries: tools..., outcome, compute, latency.")
    instruction: str | None = Field(None, description="Natural-language preference instruction (PI), if any.")

    @property
    def names(self) -> list[str]:
        return [*self.tools, *OBJECTIVES]

    @property
    def vector(self) -> np.ndarray:
        """P as a float array of shape (n + 3,)."""
        return np.asarray(self.weights, dtype=float)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.names, self.weights))

    @classmethod
    def from_dict(
        cls, values: dict[str, float], tools: list[str], instruction: str | None = None, source: str = "preference"
    ) -> "Preference":
        """Build from `{"outcome": 1, "compute": 1, "gpt-5": 0}`; entries not named are 0.

        A model's name also selects its simulated stand-in (`gpt-5` -> `sim:gpt-5`), so one preference
        means the same thing offline and against real endpoints."""
        names = [*tools, *OBJECTIVES]
        resolved = {}
        for key, value in values.items():
            name = resolve_name(key, names)
            if name is None:
                raise LabInputError(f"{source}: unknown entry '{key}' (expected one of: {', '.join(names)})")
            resolved[name] = value
        weights = []
        for name in names:
            value = resolved.get(name, 0.0)
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise LabInputError(f"{source}: '{name}' must be a number in [0, 1], got {value!r}") from None
            if not 0.0 <= value <= 1.0 or value != value:
                raise LabInputError(f"{source}: '{name}' must be in [0, 1], got {value}")
            weights.append(value)
        return cls(tools=tuple(tools), weights=tuple(weights), instruction=instruction)

    @classmethod
    def parse(cls, text: str, tools: list[str]) -> "Preference":
        """Build from a CLI string `outcome=1,compute=1,gpt-5=0`."""
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise LabInputError(f"--preference '{text}': '{part}' is not NAME=VALUE")
            try:
                values[key.strip()] = float(value)
            except ValueError:
                raise LabInputError(f"--preference '{text}': '{key.strip()}' has non-numeric value '{value}'") from None
        return cls.from_dict(values, tools, source=f"--preference '{text}'")

    @classmethod
    def from_vector(cls, vector: list[float], tools: list[str]) -> "Preference":
        """Build from a full vector; its length must be n + 3."""
        if len(vector) != len(tools) + 3:
            raise LabInputError(
                f"preference vector has {len(vector)} entries; toolkit needs {len(tools) + 3} "
                f"({', '.join([*tools, *OBJECTIVES])})"
            )
        return cls.from_dict(dict(zip([*tools, *OBJECTIVES], vector)), tools)

    @classmethod
    def default(cls, tools: list[str]) -> "Preference":
        """Accuracy and cost matter, no tool is favoured: the paper's default training preference."""
        return cls.from_dict({"outcome": 1.0, "compute": 1.0, "latency": 0.0}, tools)


class PreferencePair(BaseModel):
    """A preference instruction and the vector it means, in tool-name form (toolkit-independent)."""

    instruction: str
    weights: dict[str, float]
    split: Literal["train", "eval"]

    def applies_to(self, tools: list[str]) -> bool:
        return all(resolve_name(k, [*tools, *OBJECTIVES]) is not None for k in self.weights)

    def bind(self, tools: list[str]) -> Preference:
        return Preference.from_dict(self.weights, tools, instruction=self.instruction, source="preference pair")


def resolve_name(key: str, names: list[str]) -> str | None:
    """The entry `key` names: itself, or the simulated stand-in `sim:<key>`."""
    key = key.strip()
    if key in names:
        return key
    return f"sim:{key}" if f"sim:{key}" in names else None


def preference_pairs(split: Literal["train", "eval"], tools: list[str] | None = None) -> list[PreferencePair]:
    """The (PI, P) pairs of one split, optionally only those whose tools are all in `tools`."""
    pairs = [p for p in _all_pairs() if p.split == split]
    return [p for p in pairs if tools is None or p.applies_to(tools)]


@lru_cache(maxsize=1)
def _all_pairs() -> tuple[PreferencePair, ...]:
    raw = yaml.safe_load(resources.files("lab").joinpath("data/preferences.yaml").read_text())
    return tuple(PreferencePair(split=split, **item) for split in ("train", "eval") for item in raw[split])
