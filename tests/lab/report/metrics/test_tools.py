"""Tests for lab.report.metrics.tools: calls per task, model families and delegation bias, worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lab.report import metrics
from tests.helpers.metric_frames import trajs


def tool_calls(rows: list[tuple[str, str, int, str, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["run_id", "task_id", "sample_idx", "tool_name", "n_calls"])
    return frame.assign(train_step=0)


def test_tool_calls_per_task_count_zeros_and_shares_sum_to_one():
    frame = trajs([("A", "t0", 1), ("A", "t0", 1), ("A", "t1", 0)])
    calls = tool_calls([("A", "t0", 0, "sim:gpt-5", 2), ("A", "t0", 1, "local_search", 1),
                        ("A", "t1", 0, "local_search", 3)])
    table = metrics.tool_call_table(calls, frame, ["A"]).set_index("tool_name")
    assert table.loc["sim:gpt-5", "calls_per_task"] == pytest.approx((2 / 2 + 0) / 2)
    assert table.loc["local_search", "calls_per_task"] == pytest.approx((1 / 2 + 3) / 2)
    assert table.loc["sim:gpt-5", "share"] == pytest.approx(2 / 6)
    assert table.share.sum() == pytest.approx(1.0)
    assert table.loc["sim:gpt-5", "tool_label"] == "sim:gpt-5 (simulated)" and table.loc["sim:gpt-5", "simulated"]
    assert table.loc["local_search", "tool_label"] == "local_search"


@pytest.mark.parametrize("identifier, family", [
    ("openai:gpt-5@http://localhost:8000/v1", "gpt-5"), ("scripted:gpt-5-prompted", "gpt-5"),
    ("sim:gpt-5-mini", "gpt-5"),
    ("scripted:qwen3-8b-prompted", "qwen"), ("hf:/ckpts/Qwen3-8B", "qwen"), ("llama-3.3-70b-instruct", "llama"),
    ("claude-opus-4.1", "claude"), ("scripted:cheapest-first", None), ("", None),
])
def test_model_family(identifier, family):
    assert metrics.model_family(identifier) == family


def test_delegation_bias_by_hand():
    kit = pd.DataFrame([
        ("A", "local_search", None, 0.0), ("A", "sim:gpt-5", "gpt-5", 10.0), ("A", "sim:gpt-5-mini", "gpt-5-mini", 2.0),
        ("A", "sim:qwen3-32b", "qwen3-32b", 0.6),
    ], columns=["run_id", "tool_name", "model", "output_per_mtok"])
    calls = tool_calls([("A", "t0", 0, "local_search", 9), ("A", "t0", 0, "sim:gpt-5", 1),
                        ("A", "t1", 0, "sim:gpt-5-mini", 5), ("A", "t1", 0, "sim:qwen3-32b", 4)])
    info = pd.DataFrame({"run_id": ["A", "B"], "orchestrator": ["scripted:gpt-5-prompted", "scripted:cheapest-first"]})
    kit_b = kit.assign(run_id="B")
    bias = metrics.delegation_bias(pd.concat([calls, calls.assign(run_id="B")]), pd.concat([kit, kit_b]), info,
                                   ["A", "B"])
    a, b = bias.set_index("run_id").loc["A"], bias.set_index("run_id").loc["B"]
    assert a.model_calls == 10 and a.strongest == "sim:gpt-5"              # local_search is not a model call
    assert a.strongest_share == pytest.approx(1 / 10)
    assert a.orchestrator_family == "gpt-5" and a.own_family_share == pytest.approx(6 / 10)
    assert (b.strongest_share == pytest.approx(1 / 10) and pd.isna(b.orchestrator_family)
            and np.isnan(b.own_family_share))
