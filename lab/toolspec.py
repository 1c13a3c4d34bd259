"""Tool specifications and toolkits: the one JSON-schema interface every tool shares (paper §3.1).

A `ToolSpec` is what the orchestrator sees (OpenAI function-calling schema) plus what the lab needs to
account for a call (category, prices, latency). A `Toolkit` is an ordered list of specs loaded from
YAML; its order fixes the column order of the reward's feature matrix and of preference vectors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lab.errors import LabInputError, first_error, read_yaml
from lab.pricing import PriceTable

Category = Literal["basic", "specialist", "generalist"]

#: How domain APIs (tau2 retail, the bookshop) name the functions that only read: a plan's lookups come
#: before its writes, and a wrong plan must touch a write (graders compare databases).
READ_PREFIXES = ("get_", "find_", "list_", "search_", "lookup_", "check_", "calculate", "think", "transfer_to_human")


def is_read_action(name: str) -> bool:
    """True for a domain function that, by its name, only reads (`READ_PREFIXES`).

    >>> is_read_action("get_order"), is_read_action("cancel_order")
    (True, False)
    """
    return str(name).startswith(READ_PREFIXES)


#: Schema of LLM tools when a toolkit entry gives none: the orchestrator writes the prompt it delegates.
LLM_TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "Self-contained request for the model."}},
    "required": ["prompt"],
    "additionalProperties": False,
}


class LatencyProfile(BaseModel):
    """How long a call takes: a fixed part plus a per-output-token part, with lognormal jitter."""

    model_config = ConfigDict(extra="forbid")

    base_s: float = Field(0.0, ge=0, description="Seconds per call before the first token (or per search).")
    per_output_token_s: float = Field(0.0, ge=0, description="Seconds per generated token.")
    jitter: float = Field(0.0, ge=0, description="Sigma of the lognormal multiplier on the total.")

    def expected(self, output_tokens: int = 0) -> float:
        return self.base_s + self.per_output_token_s * output_tokens


class ToolSpec(BaseModel):
    """One tool as the orchestrator sees it and as the lab prices it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Name the orchestrator calls; unique within a toolkit.")
    description: str = Field(description="Capability description shown to the orchestrator.")
    parameters: dict[str, Any] = Field(description="JSON schema (type=object) of the arguments.")
    category: Category = Field(description="basic (search, code), specialist (math, code LLMs) or generalist LLM.")
    model: str | None = Field(None, description="Canonical model id behind an LLM tool; priced from the table.")
    input_per_mtok: float = Field(0.0, ge=0, description="USD per 1M input tokens.")
    output_per_mtok: float = Field(0.0, ge=0, description="USD per 1M output tokens.")
    per_call: float = Field(0.0, ge=0, description="USD per call (search APIs).")
    latency: LatencyProfile = Field(default_factory=LatencyProfile, description="Latency profile.")
    backend: dict[str, Any] = Field(default_factory=dict, description="How to run it: `kind` plus options.")
    simulated: bool = Field(False, description="True for `sim:` models; reports and the app label them.")
    slots: dict[str, ToolSpec] = Field(
        default_factory=dict,
        description="Paper-toolkit tools only: model slot (e.g. `answer-1`) -> the priced model behind it.",
    )

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object":
            raise ValueError("parameters must be a JSON schema with type 'object'")
        return value

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for one call."""
        return input_tokens * self.input_per_mtok / 1e6 + output_tokens * self.output_per_mtok / 1e6 + self.per_call

    def openai_schema(self) -> dict[str, Any]:
        """The function-calling entry (`{"type": "function", "function": {...}}`)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


ToolSpec.model_rebuild()


class Toolkit(BaseModel):
    """An ordered set of tools; the order is the column order of reward features and preferences.

    A reward feature is a tool, or, for the paper toolkit's slot tools, each of its slots (the models
    are what a preference is about): `feature_names` lists them in order."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Toolkit name, recorded with every run.")
    tools: list[ToolSpec] = Field(description="Tools in feature-column order.")
    pricing: str = Field("default", description="Pricing the LLM tools were priced with.")

    @model_validator(mode="after")
    def _unique_names(self) -> Toolkit:
        for names, what in ((self.names, "tool name"), (self.feature_names, "tool or slot name")):
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    raise ValueError(f"{what} '{name}' appears twice")
                seen.add(name)
        return self

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    @property
    def feature_names(self) -> list[str]:
        """Reward feature columns: each tool, or each slot of a slot tool, in toolkit order."""
        return [name for t in self.tools for name in (list(t.slots) or [t.name])]

    def feature_specs(self) -> dict[str, ToolSpec]:
        """Feature name -> the spec that prices it (a slot's model spec, or the tool itself)."""
        return {name: spec for t in self.tools for name, spec in (t.slots.items() if t.slots else [(t.name, t)])}

    def feature_models(self) -> dict[str, str | None]:
        """Feature name -> model id (None for tools without a model): how preferences name models."""
        return {name: spec.model for name, spec in self.feature_specs().items()}

    def get(self, name: str) -> ToolSpec:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise LabInputError(f"toolkit '{self.name}': unknown tool '{name}' (tools: {', '.join(self.names)})")

    def subset(self, names: list[str]) -> Toolkit:
        """A toolkit with only these tools, in this toolkit's order (training randomises subsets)."""
        unknown = [n for n in names if n not in self.names]
        if unknown:
            raise LabInputError(f"toolkit '{self.name}': unknown tools {unknown}")
        return self.model_copy(update={"tools": [t for t in self.tools if t.name in names]})

    def subset_features(self, features: list[str]) -> Toolkit:
        """Only these reward features: tools not named are dropped, a slot tool keeps the named slots
        (and its `model` enum lists only them); a slot tool left with no slot is dropped."""
        unknown = [f for f in features if f not in self.feature_names]
        if unknown:
            raise LabInputError(f"toolkit '{self.name}': unknown tools or slots {unknown}")
        kept = []
        for tool in self.tools:
            if not tool.slots:
                if tool.name in features:
                    kept.append(tool)
                continue
            slots = {name: spec for name, spec in tool.slots.items() if name in features}
            if slots:
                kept.append(tool.model_copy(update={"slots": slots,
                                                    "parameters": _slot_parameters(tool.parameters, list(slots))}))
        return self.model_copy(update={"tools": kept})

    def repriced(self, pricing: str) -> Toolkit:
        """The same tools with LLM prices from another provider's table."""
        table = PriceTable.load(pricing)
        return self.model_copy(update={"tools": [_priced(t, table) for t in self.tools], "pricing": pricing})

    @classmethod
    def from_yaml(cls, path: str | Path, pricing: str | None = None) -> Toolkit:
        """Load and validate a toolkit file; every problem is one line naming file and field."""
        return cls.from_dict(read_yaml(path, "toolkit file"), source=str(path), pricing=pricing)

    @classmethod
    def from_dict(cls, raw: Any, source: str = "<toolkit>", pricing: str | None = None) -> Toolkit:
        if not isinstance(raw, dict) or not isinstance(raw.get("tools"), list):
            raise LabInputError(f"{source}: a toolkit is a mapping with a 'tools' list")
        pricing = pricing or raw.get("pricing", "default")
        table = PriceTable.load(pricing)
        tools = []
        for i, entry in enumerate(raw["tools"]):
            if not isinstance(entry, dict):
                raise LabInputError(f"{source}: tools[{i}] must be a mapping")
            entry = dict(entry)
            if entry.get("model") and "parameters" not in entry:
                entry["parameters"] = LLM_TOOL_PARAMETERS
            try:
                spec = ToolSpec.model_validate(entry)
            except ValidationError as exc:
                raise LabInputError(f"{source}: tools[{i}] ({entry.get('name', f'#{i}')}).{first_error(exc)}") from None
            tools.append(_priced(spec, table, source=f"{source}: tools[{i}]"))
        try:
            return cls(name=raw.get("name", Path(source).stem), tools=tools, pricing=pricing)
        except ValidationError as exc:
            raise LabInputError(f"{source}: {first_error(exc)}") from None


def logged_features(toolkit_json: str | None) -> dict[str, dict[str, Any]]:
    """Reward feature name -> its logged spec (a tool, or a slot of a slot tool) from a run's
    `toolkit_json`, in column order. Read from the JSON, so toolkits logged before slots existed read
    the same; `{name: spec.get("model")}` is what preferences resolve model names with."""
    features: dict[str, dict[str, Any]] = {}
    for tool in json.loads(toolkit_json or "{}").get("tools", []):
        features.update(tool.get("slots") or {tool["name"]: tool})
    return features


def _slot_parameters(parameters: dict[str, Any], slots: list[str]) -> dict[str, Any]:
    """A slot tool's schema with its `model` argument limited to `slots`."""
    properties = dict(parameters.get("properties") or {})
    if isinstance(properties.get("model"), dict):
        properties["model"] = {**properties["model"], "enum": slots}
    return {**parameters, "properties": properties}


def _priced(spec: ToolSpec, table: PriceTable, source: str = "") -> ToolSpec:
    """Fill an LLM tool's token prices from the table (slots too); explicit per-call prices are kept."""
    if spec.slots:
        spec = spec.model_copy(update={"slots": {k: _priced(v, table, source) for k, v in spec.slots.items()}})
    if not spec.model:
        return spec
    if not table.has(spec.model):
        where = f"{source}: " if source else ""
        raise LabInputError(f"{where}model '{spec.model}' of tool '{spec.name}' has no price in pricing '{table.name}'")
    price = table.price(spec.model)
    return spec.model_copy(update={"input_per_mtok": price.input_per_mtok, "output_per_mtok": price.output_per_mtok})
