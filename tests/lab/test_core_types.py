"""Price tables, tool specs, toolkits and preference vectors: the types every other module builds on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.preference import OBJECTIVES, Preference, preference_pairs
from lab.pricing import PriceTable, canonical_model, providers
from lab.toolspec import Toolkit
from tests.conftest import SHARED, TINY_TOOLKIT

TOOLS = ["local_search", "gpt-5", "qwen3-32b"]


def test_price_tables_carry_the_shared_numbers_and_sources():
    shared = json.loads((SHARED / "pricing" / "providers.json").read_text())["providers"]
    for provider in ("openai", "deepinfra", "together", "fireworks"):
        table = PriceTable.load(provider)
        for key, entry in shared[provider]["models"].items():
            if "stand-in" in key:
                continue  # stored under the model it stands in for, checked below
            price = table.price(key)
            assert (price.provider, price.input_per_mtok, price.output_per_mtok) == (provider, entry["input"], entry["output"])
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


def test_toolkit_prices_llm_tools_from_the_table_and_reprices():
    toolkit = Toolkit.from_dict(TINY_TOOLKIT)
    assert toolkit.names == TOOLS
    qwen = toolkit.get("qwen3-32b")
    assert qwen.parameters["required"] == ["prompt"]
    default_price = PriceTable.load().price("qwen3-32b")
    assert (qwen.input_per_mtok, qwen.output_per_mtok) == (default_price.input_per_mtok, default_price.output_per_mtok)
    cheap = toolkit.repriced("deepinfra").get("qwen3-32b")
    assert (cheap.input_per_mtok, cheap.output_per_mtok) == (0.1, 0.28)
    assert toolkit.subset(["gpt-5"]).names == ["gpt-5"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("tools: [\n  - name: a\n    bad: [", "line"),
        ("name: x", "a toolkit is a mapping with a 'tools' list"),
        ("tools:\n  - name: a\n    category: wizard\n    description: d\n    parameters: {type: object}", "tools[0] (a).category"),
        ("tools:\n  - {name: m, category: generalist, description: d, model: gpt-9}", "model 'gpt-9' of tool 'm' has no price"),
        ("tools:\n  - {name: a, category: basic, description: d, parameters: {type: string}}", "tools[0] (a).parameters"),
        ("tools:\n  - {name: a, category: basic, description: d, parameters: {type: object}}\n"
         "  - {name: a, category: basic, description: d, parameters: {type: object}}", "appears twice"),
    ],
)
def test_bad_toolkit_files_name_file_and_field(tmp_path: Path, content: str, message: str):
    path = tmp_path / "kit.yaml"
    path.write_text(content)
    with pytest.raises(LabInputError) as info:
        Toolkit.from_yaml(path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_toolkit_file(tmp_path: Path):
    with pytest.raises(LabInputError, match="toolkit file not found"):
        Toolkit.from_yaml(tmp_path / "nope.yaml")


def test_preference_from_dict_string_and_vector_agree():
    a = Preference.from_dict({"outcome": 1, "compute": 1, "gpt-5": 0}, TOOLS)
    b = Preference.parse("outcome=1, compute=1, gpt-5=0", TOOLS)
    c = Preference.from_vector([0, 0, 0, 1, 1, 0], TOOLS)
    assert a.weights == b.weights == c.weights
    assert a.names == [*TOOLS, *OBJECTIVES]
    assert np.array_equal(a.vector, np.array([0, 0, 0, 1, 1, 0], dtype=float))


@pytest.mark.parametrize(
    "text, message",
    [
        ("outcome=1.5", "'outcome' must be in [0, 1], got 1.5"),
        ("outcome=-0.1", "must be in [0, 1]"),
        ("speed=1", "unknown entry 'speed'"),
        ("outcome", "'outcome' is not NAME=VALUE"),
        ("outcome=high", "non-numeric value 'high'"),
    ],
)
def test_bad_preference_strings(text: str, message: str):
    with pytest.raises(LabInputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Preference.parse(text, TOOLS)


def test_wrong_length_vector_names_the_expected_entries():
    with pytest.raises(LabInputError, match="has 4 entries; toolkit needs 6"):
        Preference.from_vector([1, 0, 0, 1], TOOLS)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=6, max_size=6))
def test_cli_string_round_trips(weights):
    pref = Preference.from_vector(weights, TOOLS)
    text = ",".join(f"{k}={v!r}" for k, v in pref.as_dict().items())
    assert Preference.parse(text, TOOLS).weights == pref.weights


def test_preference_pairs_split_train_and_eval_without_shared_instructions():
    train, evals = preference_pairs("train"), preference_pairs("eval")
    assert train and evals
    assert not {p.instruction for p in train} & {p.instruction for p in evals}
    usable = preference_pairs("train", tools=TOOLS)
    assert usable and all(p.applies_to(TOOLS) for p in usable)
    bound = usable[0].bind(TOOLS)
    assert bound.instruction == usable[0].instruction and len(bound.weights) == len(TOOLS) + 3


def test_package_pricing_file_keeps_sources():
    data = json.loads((Path(__file__).resolve().parents[2] / "lab" / "data" / "pricing.json").read_text())
    for provider, entry in data["providers"].items():
        for model, price in entry["models"].items():
            assert price["source"], (provider, model)
