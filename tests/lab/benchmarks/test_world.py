"""Tests for lab.benchmarks.world: the offline world as a benchmark, its families by name, world fields in meta."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.benchmarks import BenchmarkTask, load_benchmark
from lab.errors import LabInputError


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
