"""A whole benchmark in one module: three sums, graded by exact match, registered as `arith`.

It is what adding a benchmark takes: tasks for a qualifier, a grader, the tools a task brings (none)
and its user (none, the default), in one `BenchmarkSource`, registered on import. Importing this
module before `orchestra.cli.main()` makes `orchestra eval --benchmark arith` run it.
"""

from __future__ import annotations

from pathlib import Path

from lab.benchmarks import BenchmarkSource, BenchmarkTask, EvalSource, register
from lab.graders import exact_match
from lab.tools.base import ToolContext

SUMS = [(2, 3), (40, 2), (7, 8)]


def load(qualifier: str, path: str | Path | None, split: str | None, limit: int | None) -> list[BenchmarkTask]:
    """The sums as tasks; `arith:N` keeps the first N."""
    tasks = [BenchmarkTask(benchmark="arith", task_id=f"arith-{i}", question=f"What is {a} + {b}?", answer=str(a + b))
             for i, (a, b) in enumerate(SUMS)]
    return tasks[: int(qualifier or len(tasks))][:limit]


def open_sums(qualifier: str, path: str | None, split: str | None) -> EvalSource:
    tasks = load(qualifier, path, split, None)

    async def grader(task: BenchmarkTask, answer: str | None, context: ToolContext) -> float:
        return float(exact_match(answer or "", task.answer).correct)

    return EvalSource("arith", tasks, grader, [t.to_record() for t in tasks])


SOURCE = register(BenchmarkSource(name="arith", usage="arith[:N]", description="three sums; arith:N for the first N",
                                  load=load, open=open_sums, qualified=True, rounds=True))
