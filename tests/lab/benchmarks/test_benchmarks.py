"""Tests for lab.benchmarks (the registry): names route to loaders, unknown names are listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.benchmarks import list_benchmarks, load_benchmark
from lab.errors import LabInputError

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared benchmark data not found at {SHARED}")


@needs_shared
def test_names_route_to_their_loaders() -> None:
    assert [t.benchmark for t in load_benchmark("frames", SHARED, limit=2)] == ["frames", "frames"]
    airline = load_benchmark("tau2:airline", SHARED, split="test")
    assert len(airline) == 20 and {t.domain for t in airline} == {"airline"}
    assert {t.domain for t in load_benchmark("tau2", SHARED)} == {"airline", "retail"}
    bfcl = load_benchmark("bfcl:multiple,parallel", SHARED)
    assert {t.domain for t in bfcl} == {"multiple", "parallel"}
    assert len(load_benchmark("BFCL", SHARED, limit=3)) == 3


def test_hle_routes_with_options(tmp_path: Path) -> None:
    row = {"id": "x1", "question": "2+2?", "answer": "4", "answer_type": "exactMatch", "image": ""}
    (tmp_path / "hle.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (task,) = load_benchmark("hle", tmp_path, text_only=True)
    assert (task.benchmark, task.answer) == ("hle", 4)


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(LabInputError, match="unknown name 'gsm8k'.*world, frames, hle, tau2, toolscale, bfcl"):
        load_benchmark("gsm8k")
    with pytest.raises(LabInputError, match="unknown name 'frames:x'"):
        load_benchmark("frames:x")
    assert set(list_benchmarks()) == {"frames", "hle", "tau2", "bfcl", "world", "toolscale"}
