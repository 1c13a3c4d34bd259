"""`Task`: what every task is to the code that runs, grades and stores it, wherever it came from.

Why a protocol and not a base class: the offline world's `WorldTask` (`lab.world.task`) and a
benchmark's `BenchmarkTask` (`lab.benchmarks.base`) are separate pydantic models made by separate
code, and a new benchmark may bring a third. Each already has these fields; the harness, graders
and rollouts read only these, so any of them runs without conversion. Fields a family adds
(`family` and `evidence` of world tasks, `benchmark` of benchmark tasks) are read with `getattr`
by the few places that know that family.

This module imports nothing from the lab, so every layer can name the type.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Task(Protocol):
    """One question (or conversation) with its reference answer; read-only to its consumers."""

    @property
    def task_id(self) -> str:
        """Unique within its benchmark, e.g. `frames-0042`, `retail-17`."""

    @property
    def split(self) -> str:
        """`train` or `test`."""

    @property
    def domain(self) -> str:
        """Domain or category (`retail`, `physics`, `simple_python`), "" when the benchmark has none."""

    @property
    def question(self) -> str:
        """What the solver is asked (a conversation's: the simulated user's instruction)."""

    @property
    def answer(self) -> Any:
        """The reference: text, a number, a letter, golden actions or possible function calls."""

    @property
    def answer_type(self) -> str:
        """How a grader compares a prediction with `answer` (`exact`, `numeric`, `actions`...)."""

    @property
    def choices(self) -> list[str]:
        """Options of a multiple-choice question; empty otherwise."""

    @property
    def meta(self) -> dict[str, Any]:
        """Everything else its loader read."""
