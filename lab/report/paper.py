"""The paper's reported numbers as DataFrames, to set the lab's offline results beside them.

They live in `lab/data/paper_numbers.yaml`, each table with its source and its caveats; a table the
transcription lacks (Table 4) is there too, with why, so a notebook can say so instead of inventing it.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import pandas as pd
import yaml


@cache
def paper_numbers() -> dict[str, Any]:
    """The whole data file (tables by key, each with `title`, `source` and values)."""
    return yaml.safe_load(resources.files("lab").joinpath("data/paper_numbers.yaml").read_text())


def delegation_shares() -> pd.DataFrame:
    """Fig. 3: orchestrator, model, share (0-1) of its model calls."""
    return _shares("figure_3_delegation", "model")


def tool_call_shares() -> pd.DataFrame:
    """Fig. 4: orchestrator, tool, share (0-1) of its tool calls (labelled slices only)."""
    return _shares("figure_4_tool_shares", "tool")


def test_time_scaling() -> pd.DataFrame:
    """Test-time scaling plot: model, budget (1-4, cheapest first), cost_usd per task, hle_accuracy (0-1)."""
    rows = [(model, k + 1, cost, pct / 100) for model, points in paper_numbers()["test_time_scaling"]["points"].items()
            for k, (cost, pct) in enumerate(points)]
    return pd.DataFrame(rows, columns=["model", "budget", "cost_usd", "hle_accuracy"])


def source(key: str) -> str:
    """`title (source)` of one table, or why it is missing."""
    table = paper_numbers()[key]
    return f"{table['title']} ({table.get('source') or table.get('missing')})"


def _shares(key: str, column: str) -> pd.DataFrame:
    rows = [(orchestrator, name, pct / 100) for orchestrator, shares in paper_numbers()[key]["shares_percent"].items()
            for name, pct in shares.items()]
    return pd.DataFrame(rows, columns=["orchestrator", column, "share"])
