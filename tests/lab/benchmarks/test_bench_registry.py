"""Tests for lab.benchmarks (the registry): names route to loaders, the world hook stays thin and guarded."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from lab.benchmarks import BenchmarkTask, list_benchmarks, load_benchmark
from lab.errors import LabInputError
from lab.world.task import WorldTask

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
    with pytest.raises(LabInputError, match="unknown name 'gsm8k'.*frames, hle, tau2, bfcl, world"):
        load_benchmark("gsm8k")
    with pytest.raises(LabInputError, match="unknown name 'frames:x'"):
        load_benchmark("frames:x")
    assert set(list_benchmarks()) == {"frames", "hle", "tau2", "bfcl", "world"}


def fake_world(monkeypatch: pytest.MonkeyPatch, load_world) -> None:
    module = types.ModuleType("lab.world.build")
    module.load_world = load_world
    monkeypatch.setitem(sys.modules, "lab.world.build", module)


def world_tasks() -> list[WorldTask]:
    return [
        WorldTask(task_id=f"frames-{i:04d}", family="frames", split="train" if i % 2 else "test",
                  domain="multihop", question=f"Q{i}?", answer=str(i), evidence=[f"fact {i}"])
        for i in range(6)
    ]


def test_world_hook_adapts_tasks_and_filters_what_the_loader_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_world(monkeypatch, lambda: world_tasks())  # a loader taking no arguments at all
    tasks = load_benchmark("toolscale", split="train", limit=2)
    assert [t.task_id for t in tasks] == ["frames-0001", "frames-0003"]
    assert all(isinstance(t, BenchmarkTask) and t.benchmark == "world" for t in tasks)
    assert tasks[0].meta["evidence"] == ["fact 1"] and tasks[0].meta["family"] == "frames"


def test_world_hook_passes_only_accepted_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}

    def load_world(out_dir: Path | None = None, seed: int = 0) -> types.SimpleNamespace:
        seen.update(out_dir=out_dir, seed=seed)
        return types.SimpleNamespace(tasks=world_tasks())  # like lab.world's World: tasks in `.tasks`

    fake_world(monkeypatch, load_world)
    tasks = load_benchmark("world", path=Path("/tmp/w"), split="test", seed=7)
    assert seen == {"out_dir": Path("/tmp/w"), "seed": 7}
    assert [t.task_id for t in tasks] == ["frames-0000", "frames-0002", "frames-0004"]


def test_world_hook_without_the_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "lab.world.build", None)  # makes the import fail
    with pytest.raises(LabInputError, match="benchmark 'world': lab.world.build.load_world is not available"):
        load_benchmark("world")
