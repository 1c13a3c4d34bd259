"""Tests for lab.toolkit: named toolkits filled from their backends, checked when read, and built into tools."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lab.errors import LabInputError
from lab.preference import Preference
from lab.sim.calibrate import profile_to_yaml
from lab.sim.profiles import get_profile
from lab.toolkit import TOOLKITS_DIR, load_toolkit

SLOTS = {
    "search": {"search-1": "gpt-5", "search-2": "gpt-5-mini", "search-3": "qwen3-32b"},
    "enhance_reasoning": {"reasoner-1": "gpt-5", "reasoner-2": "gpt-5-mini",
                          "reasoner-3": "qwen2.5-coder-32b-instruct"},
    "answer": {"answer-1": "gpt-5", "answer-2": "gpt-5-mini", "answer-3": "llama-3.3-70b-instruct",
               "answer-4": "qwen3-32b",
               "answer-math-1": "qwen2.5-math-72b-instruct", "answer-math-2": "qwen2.5-math-7b-instruct"},
}


def test_the_released_codes_three_tools_and_slots_priced_from_the_tables():
    kit = load_toolkit("paper")
    assert (TOOLKITS_DIR / "paper.yaml").is_file() and kit.names == list(SLOTS)
    for tool in kit.tools:
        assert tool.parameters["required"] == ["model"] and list(tool.parameters["properties"]) == ["model"]
        assert tool.parameters["properties"]["model"]["enum"] == list(SLOTS[tool.name])
        assert {slot: spec.model for slot, spec in tool.slots.items()} == SLOTS[tool.name]
        assert all(spec.simulated for spec in tool.slots.values())  # offline: simulated stand-ins, labelled
    gpt5 = kit.get("answer").slots["answer-1"]
    assert (gpt5.input_per_mtok, gpt5.output_per_mtok) == (1.25, 10.0)  # not the released code's $0.125
    # reward features are the slots, and a preference for a model means every slot standing for it
    assert kit.feature_names == [slot for slots in SLOTS.values() for slot in slots]
    pref = Preference.parse("outcome=1,qwen3-32b=1", kit.feature_names, kit.feature_models())
    assert {k for k, v in pref.as_dict().items() if v} == {"outcome", "search-3", "answer-4"}
    # repricing the toolkit reprices the slots
    cheap = kit.repriced("deepinfra").get("answer").slots["answer-4"]
    assert cheap.input_per_mtok < kit.get("answer").slots["answer-4"].input_per_mtok


@pytest.mark.parametrize("top_k", [0, "150", 2.5])
def test_a_retrieval_depth_that_is_not_a_positive_integer_is_refused_naming_the_field(tmp_path: Path, top_k):
    raw = yaml.safe_load((TOOLKITS_DIR / "paper.yaml").read_text())
    raw["tools"][0]["backend"]["retriever"]["top_k"] = top_k
    (tmp_path / "kit.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(LabInputError, match=r"kit.yaml: tools\[0\].backend.retriever.top_k: expected an integer >= 1"):
        load_toolkit(str(tmp_path / "kit.yaml"))


def test_a_toolkit_can_take_a_sim_profile_from_a_fitted_file(tmp_path):
    """`orchestra calibrate` writes a profiles file; a toolkit entry naming it as `profiles_file` simulates
    with the fitted numbers, and only that entry does."""
    import yaml

    from lab.toolkit import build_tools, load_toolkit

    packaged = get_profile("gpt-5")
    tokens = packaged.output_tokens.model_copy(update={"median_tokens": 11.0})
    fitted = packaged.model_copy(update={"output_tokens": tokens})
    (tmp_path / "fitted.yaml").write_text(profile_to_yaml(fitted))
    (tmp_path / "kit.yaml").write_text(yaml.safe_dump({"name": "kit", "tools": [
        {"name": "sim:gpt-5",
         "backend": {"kind": "sim", "profile": "gpt-5", "profiles_file": str(tmp_path / "fitted.yaml")}},
        {"name": "sim:gpt-5-mini", "backend": {"kind": "sim", "profile": "gpt-5-mini"}},
    ]}))
    tools = build_tools(load_toolkit(str(tmp_path / "kit.yaml")))
    assert tools["sim:gpt-5"].profile.output_tokens.median_tokens == 11.0
    assert tools["sim:gpt-5-mini"].profile == get_profile("gpt-5-mini")
    (tmp_path / "kit.yaml").write_text((tmp_path / "kit.yaml").read_text().replace("fitted.yaml", "missing.yaml"))
    with pytest.raises(LabInputError, match="missing.yaml"):
        build_tools(load_toolkit(str(tmp_path / "kit.yaml")))
