"""Tests for lab.task: world tasks and benchmark tasks are both `Task`s, so one harness runs either."""

from __future__ import annotations

from lab.benchmarks import BenchmarkTask, from_world_task
from lab.task import Task
from lab.world.task import WorldTask


def test_world_and_benchmark_tasks_satisfy_the_protocol_and_convert_one_way() -> None:
    world = WorldTask(task_id="hle-0001", family="hle", domain="physics", question="2+2?", answer=4,
                      answer_type="numeric", evidence=["2+2=4"])
    bench = BenchmarkTask(benchmark="frames", task_id="frames-0001", question="Who?", answer="Ada")
    assert isinstance(world, Task) and isinstance(bench, Task)
    assert not isinstance({"task_id": "x", "question": "q"}, Task)  # a dict is not a task
    converted = from_world_task(world)
    assert isinstance(converted, Task) and converted.meta["evidence"] == ["2+2=4"] and converted.answer == 4
