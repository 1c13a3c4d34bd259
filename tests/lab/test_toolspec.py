"""Tests for lab.toolspec: a toolkit priced from the tables, repriced and subset, and bad toolkit files named."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.errors import LabInputError
from lab.pricing import PriceTable
from lab.toolspec import Toolkit
from tests.conftest import TINY_TOOLKIT

TOOLS = ["local_search", "gpt-5", "qwen3-32b"]


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
        ("tools:\n  - name: a\n    category: wizard\n    description: d\n    parameters: {type: object}",
         "tools[0] (a).category"),
        ("tools:\n  - {name: m, category: generalist, description: d, model: gpt-9}",
         "model 'gpt-9' of tool 'm' has no price"),
        ("tools:\n  - {name: a, category: basic, description: d, parameters: {type: string}}",
         "tools[0] (a).parameters"),
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


