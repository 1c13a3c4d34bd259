"""Price tables per provider, copied with their sources from public price lists.

Why a chain of providers: the paper prices open-weight models at a hosting provider (TogetherAI by
default, DeepInfra for the held-out pricing experiment) and closed models at their vendor's own API.
A *pricing* name therefore resolves a model through an ordered list of provider tables: the named
provider first, then the official APIs. The default chain follows the paper's training prices and uses
Fireworks where Together publishes no price (see `_meta.missing` in `lab/data/pricing.json`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, Field

from lab.errors import LabInputError

#: Providers that always price their own models, whatever hosting provider is chosen.
OFFICIAL_APIS = ("openai", "anthropic", "tavily")
#: The pricing used when none is named: official APIs, then TogetherAI, then Fireworks.
DEFAULT_CHAIN = ("openai", "anthropic", "tavily", "together", "fireworks")


class ModelPrice(BaseModel):
    """One model's list price at one provider."""

    model: str = Field(description="Canonical model id, lower-case (e.g. `gpt-5`, `qwen3-32b`).")
    provider: str = Field(description="Provider whose table this price comes from.")
    input_per_mtok: float = Field(0.0, ge=0, description="USD per 1M input tokens.")
    output_per_mtok: float = Field(0.0, ge=0, description="USD per 1M output tokens.")
    per_call: float = Field(0.0, ge=0, description="USD per call (search APIs).")
    source: str = Field("", description="URL the number was copied from.")
    stand_in: str | None = Field(None, description="Model whose price stands in, when none is published.")
    uncertain: bool = Field(False, description="Sources conflict or are undated.")

    def cost(self, input_tokens: int, output_tokens: int, calls: int = 1) -> float:
        """USD for one call with these token counts."""
        return (
            input_tokens * self.input_per_mtok / 1e6
            + output_tokens * self.output_per_mtok / 1e6
            + calls * self.per_call
        )


class PriceTable(BaseModel):
    """Prices of one provider, or of a chain of providers looked up in order."""

    name: str = Field(description="Pricing name: a provider, or `default`.")
    chain: tuple[str, ...] = Field(description="Providers consulted in order.")
    prices: dict[str, ModelPrice] = Field(description="Model id -> first price found along the chain.")

    def price(self, model: str) -> ModelPrice:
        """The price of `model`; unknown models are a user error naming the pricing."""
        key = canonical_model(model)
        if key not in self.prices:
            raise LabInputError(
                f"pricing '{self.name}': no price for model '{model}' "
                f"(priced models: {', '.join(sorted(self.prices))})"
            )
        return self.prices[key]

    def has(self, model: str) -> bool:
        return canonical_model(model) in self.prices

    @classmethod
    def load(cls, name: str = "default") -> PriceTable:
        """Price table for a provider name (`deepinfra`, `together`, ...) or `default`."""
        data = _pricing_data()["providers"]
        if name == "default":
            chain = DEFAULT_CHAIN
        elif name in data:
            chain = (name,) + tuple(p for p in OFFICIAL_APIS if p != name)
        else:
            raise LabInputError(
                f"unknown pricing provider '{name}' (known: default, {', '.join(sorted(data))})"
            )
        prices: dict[str, ModelPrice] = {}
        for provider in chain:
            for model, entry in data[provider]["models"].items():
                prices.setdefault(model, _model_price(model, provider, entry))
        for model, fine_tune in _fine_tunes().items():
            base = prices.get(fine_tune["base"])
            if base is not None and model not in prices:
                prices[model] = base.model_copy(update={"model": model, "stand_in": fine_tune["base"],
                                                        "source": f"{base.source}; {fine_tune['source']}"})
        return cls(name=name, chain=chain, prices=prices)


def providers() -> list[str]:
    """Every provider with a price table, plus `default`."""
    return ["default", *sorted(_pricing_data()["providers"])]


def canonical_model(model: str) -> str:
    """Lower-case id without an organisation prefix: `Qwen/Qwen3-32B` -> `qwen3-32b`."""
    return model.strip().split("/")[-1].lower()


def _model_price(model: str, provider: str, entry: dict[str, Any]) -> ModelPrice:
    return ModelPrice(
        model=model,
        provider=provider,
        input_per_mtok=entry.get("input", 0.0),
        output_per_mtok=entry.get("output", 0.0),
        per_call=entry.get("per_call", 0.0),
        source=entry.get("source", ""),
        stand_in=entry.get("stand_in"),
        uncertain=bool(entry.get("uncertain", False)),
    )


def _fine_tunes() -> dict[str, dict[str, str]]:
    """Orchestrator checkpoints (`nemotron-orchestrator-8b`) priced at their base model's rates in each
    table: no provider lists them, and serving one costs what serving its base costs."""
    return {model: entry for model, entry in _pricing_data().get("fine_tunes", {}).items() if not model.startswith("_")}


@lru_cache(maxsize=1)
def _pricing_data() -> dict[str, Any]:
    return json.loads(resources.files("lab").joinpath("data/pricing.json").read_text())
