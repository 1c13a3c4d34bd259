"""Preference vectors P over [each tool, outcome, compute, latency] (paper Eq. 2).

P is bound to a toolkit's tool order, so column i of the reward features and entry i of P always mean
the same thing. The paper pairs each P with a natural-language preference instruction (PI) shown to the
orchestrator; `lab/data/preferences.yaml` holds such pairs, split into train and eval sets so that
preference-following is evaluated on instructions never seen in training.

What an evaluation shows each task (`task_preferences`, used by `orchestra eval --preference`):

- a P that equals the P of held-out `eval` pairs gets one of those pairs' instructions (never a train
  one), picked by a sha256 of the task id, so a task reads the same wording in every run;
- any other P gets `describe(P)`, a fixed template naming each nonzero weight in words;
- `held-out` gives each task a whole held-out pair (its P and its instruction), picked the same way;
- `--preference-instruction TEXT` replaces the text for every task (P is kept).

The candidates and the picking rule are logged in the run's `config_json["variant"]["instruction"]`,
so `logged_instruction(config_json, task_id)` recovers any trajectory's instruction from the store alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from lab.errors import LabInputError
from lab.pricing import canonical_model

#: The three non-tool columns, after the per-tool call counts (paper Eq. 2).
OBJECTIVES = ("outcome", "compute", "latency")

#: `--preference held-out`: each task gets a whole held-out (PI, P) pair.
HELD_OUT = "held-out"

#: How each task's choice is made; written beside the choices in the run's config_json.
PICK_RULE = "choices[int.from_bytes(sha256(task_id)[:8], 'big') % len(choices)]"


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
        cls, values: dict[str, float], tools: list[str], instruction: str | None = None, source: str = "preference",
        models: Mapping[str, str | None] | None = None,
    ) -> Preference:
        """Build from `{"outcome": 1, "compute": 1, "gpt-5": 0}`; entries not named are 0.

        A model's name also selects its simulated stand-in (`gpt-5` -> `sim:gpt-5`), and, given `models`
        (feature name -> model id, `Toolkit.feature_models()`), every feature standing for that model (the
        paper toolkit's `search-1`, `reasoner-1`, `answer-1` for `gpt-5`), so one preference means the same
        thing offline, against real endpoints and on either toolkit shape."""
        names = [*tools, *OBJECTIVES]
        resolved = {}
        for key, value in values.items():
            matched = resolve_names(key, names, models)
            if not matched:
                raise LabInputError(f"{source}: unknown entry '{key}' (expected one of: {', '.join(names)})")
            resolved.update(dict.fromkeys(matched, value))
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
    def parse(cls, text: str, tools: list[str], models: Mapping[str, str | None] | None = None) -> Preference:
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
        return cls.from_dict(values, tools, source=f"--preference '{text}'", models=models)

    @classmethod
    def from_vector(cls, vector: list[float], tools: list[str]) -> Preference:
        """Build from a full vector; its length must be n + 3."""
        if len(vector) != len(tools) + 3:
            raise LabInputError(
                f"preference vector has {len(vector)} entries; toolkit needs {len(tools) + 3} "
                f"({', '.join([*tools, *OBJECTIVES])})"
            )
        return cls.from_dict(dict(zip([*tools, *OBJECTIVES], vector)), tools)

    @classmethod
    def default(cls, tools: list[str]) -> Preference:
        """Accuracy and cost matter, no tool is favoured: the paper's default training preference."""
        return cls.from_dict({"outcome": 1.0, "compute": 1.0, "latency": 0.0}, tools)


class PreferencePair(BaseModel):
    """A preference instruction and the vector it means, in tool-name form (toolkit-independent)."""

    instruction: str
    weights: dict[str, float]
    split: Literal["train", "eval"]

    def applies_to(self, tools: list[str], models: Mapping[str, str | None] | None = None) -> bool:
        return all(resolve_names(k, [*tools, *OBJECTIVES], models) for k in self.weights)

    def bind(self, tools: list[str], models: Mapping[str, str | None] | None = None) -> Preference:
        return Preference.from_dict(self.weights, tools, instruction=self.instruction,
                                    source="preference pair", models=models)


def resolve_names(key: str, names: list[str], models: Mapping[str, str | None] | None = None) -> list[str]:
    """The entries `key` names: itself, or the simulated stand-in `sim:<key>`, or (given `models`) every
    feature whose model is `key`; [] when none."""
    key = key.strip()
    if key in names:
        return [key]
    if f"sim:{key}" in names:
        return [f"sim:{key}"]
    wanted = canonical_model(key)
    return [n for n in names if (models or {}).get(n) and canonical_model(str(models[n])) == wanted]


def preference_pairs(split: Literal["train", "eval"], tools: list[str] | None = None,
                     models: Mapping[str, str | None] | None = None) -> list[PreferencePair]:
    """The (PI, P) pairs of one split, optionally only those whose tools are all in `tools`."""
    pairs = [p for p in _all_pairs() if p.split == split]
    return [p for p in pairs if tools is None or p.applies_to(tools, models)]


@lru_cache(maxsize=1)
def _all_pairs() -> tuple[PreferencePair, ...]:
    raw = yaml.safe_load(resources.files("lab").joinpath("data/preferences.yaml").read_text())
    return tuple(PreferencePair(split=split, **item) for split in ("train", "eval") for item in raw[split])


# ---------------------------------------------------------------- the instruction each task is shown

#: How the template words each objective; tools read "calling <name>" (a tool's weight rewards using it).
_OBJECTIVE_WORDS = {"outcome": "getting the answer right", "compute": "keeping the cost low",
                    "latency": "answering quickly"}


def describe(pref: Preference) -> str:
    """The instruction written from P when no held-out pair words it: every nonzero weight in words,
    largest first, then the numbers.

    >>> describe(Preference.from_dict({"outcome": 1, "compute": 0.5, "local_search": 0.2}, ["local_search"]))
    'Getting the answer right matters a lot; keeping the cost low matters; calling local_search matters a little. (Weights in [0, 1]: outcome=1, compute=0.5, local_search=0.2.)'
    """  # noqa: E501 (a doctest's expected output: one line)
    order = [*OBJECTIVES, *pref.tools]  # ties: objectives first, then tools in toolkit order
    weights = pref.as_dict()
    named = sorted((n for n in order if weights[n] > 0), key=lambda n: (-weights[n], order.index(n)))
    if not named:
        return "No preference: every weight is 0."
    parts = [f"{_OBJECTIVE_WORDS.get(n, f'calling {n}')} {_level(weights[n])}" for n in named]
    numbers = ", ".join(f"{n}={weights[n]:g}" for n in named)
    text = "; ".join(parts)
    return f"{text[0].upper()}{text[1:]}. (Weights in [0, 1]: {numbers}.)"


def _level(weight: float) -> str:
    return "matters a lot" if weight >= 0.75 else "matters" if weight >= 0.4 else "matters a little"


def pick(task_id: str, n: int) -> int:
    """Index of a task's choice among `n`: a sha256 of the task id, so stable across runs and processes
    (Python's `hash` is salted per process).

    >>> pick("world-0001", 3) == pick("world-0001", 3)
    True
    """
    return int.from_bytes(hashlib.sha256(task_id.encode()).digest()[:8], "big") % n


class TaskPreferences(BaseModel):
    """What one `--preference` value gives each task: a (P, instruction) choice picked by task id.

    `source` says where the instructions come from: `none` (no instruction), `given`
    (`--preference-instruction`), `eval` (held-out pairs whose P equals the given one), `template`
    (`describe(P)`) or `held-out` (whole held-out pairs, one per task)."""

    model_config = ConfigDict(frozen=True)

    source: Literal["none", "given", "eval", "template", "held-out"]
    choices: tuple[Preference, ...] = Field(description="Candidate (P, instruction); task t gets choices[pick(t, n)].")

    def for_task(self, task_id: str) -> Preference:
        return self.choices[pick(task_id, len(self.choices))]

    def log(self) -> dict[str, Any]:
        """What the run logs in `config_json["variant"]["instruction"]` (read by `logged_instruction`)."""
        return {"source": self.source, "pick": PICK_RULE,
                "choices": [{"instruction": c.instruction, "preference": c.as_dict()} for c in self.choices]}


def task_preferences(spec: str | None, tools: list[str], instruction: str | None = None,
                     models: Mapping[str, str | None] | None = None) -> TaskPreferences:
    """Resolve one `--preference` value (a P string, `held-out` or None for the default P) and the
    optional `--preference-instruction` into the per-task choices (rules in the module docstring).
    `models` maps feature names to model ids (see `Preference.from_dict`)."""
    if spec is not None and spec.strip() == HELD_OUT:
        choices = [p.bind(tools, models) for p in preference_pairs("eval", tools, models)]
        if not choices:
            raise LabInputError(f"--preference {HELD_OUT}: no held-out pair names only tools of this "
                                f"toolkit ({', '.join(tools)})")
        source = "held-out"
    elif spec:
        pref = Preference.parse(spec, tools, models)
        choices = [p.bind(tools, models) for p in preference_pairs("eval", tools, models)
                   if np.allclose(p.bind(tools, models).vector, pref.vector, rtol=0, atol=1e-9)]
        source = "eval" if choices else "template"
        choices = choices or [pref.model_copy(update={"instruction": describe(pref)})]
    else:
        choices, source = [Preference.default(tools)], "none"
    if instruction is not None:
        choices = [c.model_copy(update={"instruction": instruction.strip()}) for c in choices]
        source = "given"
    return TaskPreferences(source=source, choices=tuple(dict.fromkeys(choices)))


def instruction_for(task_id: str, spec: str | None, tools: list[str], instruction: str | None = None,
                    models: Mapping[str, str | None] | None = None) -> str | None:
    """The instruction `orchestra eval --preference spec [--preference-instruction instruction]` shows
    task `task_id` over a toolkit with these feature names (a pure function of its arguments and the yaml)."""
    return task_preferences(spec, tools, instruction, models).for_task(task_id).instruction


def logged_instruction(config_json: str | dict[str, Any], task_id: str) -> str | None:
    """The instruction a logged eval run showed task `task_id`, from the run's `config_json` alone
    (independent of later edits to the yaml). None for runs that logged none."""
    config = json.loads(config_json or "{}") if isinstance(config_json, str) else config_json
    logged = (config.get("variant") or {}).get("instruction") or {}
    choices = logged.get("choices") or []
    return choices[pick(task_id, len(choices))]["instruction"] if choices else None
