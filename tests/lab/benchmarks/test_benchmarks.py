"""Tests for lab.benchmarks (the registry): names route to loaders, the world hook stays thin and guarded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.benchmarks import BenchmarkTask, list_benchmarks, load_benchmark
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


def test_world_tasks_come_as_benchmark_tasks_with_world_fields_in_meta(tmp_path: Path) -> None:
    from lab.world.build import build_world
    from lab.world.tasks import WorldSize

    build_world(tmp_path, seed=0, progress=False, size=WorldSize.small(), index=False)
    tasks = load_benchmark("world:bookshop", path=tmp_path, split="train", limit=5)
    assert len(tasks) == 5 and all(isinstance(t, BenchmarkTask) and t.benchmark == "world" for t in tasks)
    assert all(t.split == "train" and t.meta["family"] == "tau2" for t in tasks)  # the shop's tool-use tasks
    with pytest.raises(LabInputError, match="world:shop: unknown family"):
        load_benchmark("world:shop", path=tmp_path)
    frames = next(t for t in load_benchmark("world", path=tmp_path) if t.meta["family"] == "frames")
    assert frames.meta["evidence"] and frames.meta["support_doc_ids"]
