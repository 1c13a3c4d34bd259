"""Tests for lab.pricing: the shared price tables, providers' fallbacks, and the sources kept beside every price."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.errors import LabInputError
from lab.pricing import PriceTable, canonical_model, providers
from tests.conftest import SHARED


def test_price_tables_carry_the_shared_numbers_and_sources():
    shared = json.loads((SHARED / "pricing" / "providers.json").read_text())["providers"]
    for provider in ("openai", "deepinfra", "together", "fireworks"):
        table = PriceTable.load(provider)
        for key, entry in shared[provider]["models"].items():
            if "stand-in" in key:
                continue  # stored under the model it stands in for, checked below
            price = table.price(key)
            assert (price.provider, price.input_per_mtok, price.output_per_mtok) == (provider, entry["input"],
                                                                                     entry["output"])
            assert price.source.startswith("http")
    stand_in = PriceTable.load("deepinfra").price("qwen2.5-math-72b-instruct")
    assert stand_in.stand_in == "qwen2.5-72b-instruct" and stand_in.input_per_mtok == 0.12


@pytest.mark.parametrize("provider", ["default", "fireworks", "novita", "toolorchestra_code"])
def test_the_released_orchestrator_is_priced_at_its_base_models_rates_in_every_table(provider):
    table = PriceTable.load(provider)
    orchestrator, base = table.price("nvidia/Nemotron-Orchestrator-8B"), table.price("qwen3-8b")
    assert (orchestrator.input_per_mtok, orchestrator.output_per_mtok) == (base.input_per_mtok, base.output_per_mtok)
    assert orchestrator.stand_in == "qwen3-8b" and "Nemotron-Orchestrator-8B" in orchestrator.source


def test_an_orchestrator_served_by_an_endpoint_is_charged_for_its_own_tokens():
    import asyncio

    from lab.policies.openai_policy import OpenAIPolicy
    from lab.testing.openai_server import OpenAICompatServer

    with OpenAICompatServer(reply="<answer>1834</answer>", usage=(1000, 200)) as server:
        policy = OpenAIPolicy.from_spec(f"openai:nvidia/Nemotron-Orchestrator-8B@{server.base_url}")
        session = policy.session(type("Task", (), {"task_id": "t"})(), [], seed=0)
        output = asyncio.run(session.generate([{"role": "user", "content": "When was the harbour lit?"}]))
    base = PriceTable.load().price("qwen3-8b")
    assert output.cost_usd > 0
    assert output.cost_usd == pytest.approx((1000 * base.input_per_mtok + 200 * base.output_per_mtok) / 1e6)


def test_gpt5_input_is_priced_per_million_not_ten_million():
    gpt5 = PriceTable.load().price("gpt-5")
    assert gpt5.cost(1_000_000, 0) == pytest.approx(1.25)  # the authors' eval code charges 0.125


def test_a_hosting_provider_falls_back_to_official_apis_for_closed_models():
    deepinfra = PriceTable.load("deepinfra")
    assert deepinfra.price("gpt-5").provider == "openai"
    assert deepinfra.price("Qwen/Qwen3-32B").provider == "deepinfra"
    assert canonical_model("meta-llama/Llama-3.3-70B-Instruct") == "llama-3.3-70b-instruct"
    assert "default" in providers() and "deepinfra" in providers()


def test_unknown_provider_and_model_are_one_line_errors():
    with pytest.raises(LabInputError, match="unknown pricing provider 'acme'"):
        PriceTable.load("acme")
    with pytest.raises(LabInputError, match="no price for model 'gpt-9'"):
        PriceTable.load().price("gpt-9")


def test_package_pricing_file_keeps_sources():
    data = json.loads((Path(__file__).resolve().parents[2] / "lab" / "data" / "pricing.json").read_text())
    for provider, entry in data["providers"].items():
        for model, price in entry["models"].items():
            assert price["source"], (provider, model)
