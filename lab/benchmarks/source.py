"""A benchmark as one registered object: its tasks, tools, grader, simulated user and the facts runs read.

Shaped like Inspect AI's `Task` (dataset + solver + scorer + limits): a `BenchmarkSource` says how to
load the tasks a `--benchmark NAME[:QUALIFIER]` names (`load`), and how to open them for a run
(`open`: the tasks with their grader, the tools each task brings and its simulated user, as one
`EvalSource`). The facts the CLI, `EvalConfig` and the harness need about a benchmark (may it run
under the round protocol? how deep does its released `search` go? does a simulated judge know its
answers?) are fields here, so no code outside the benchmark's own module branches on its name.

Each benchmark module ends with `SOURCE = BenchmarkSource(...)`; `lab.benchmarks` registers the
built-in ones, and a new benchmark is one module that calls `register(SOURCE)`:

    SOURCE = register(BenchmarkSource(name="arith", usage="arith", description="sums",
                                      load=load_sums, open=open_sums, rounds=True))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from lab.benchmarks.base import BenchmarkTask
from lab.errors import LabInputError
from lab.graders import grade
from lab.records import TaskRecord
from lab.rollout.engine import Grader
from lab.task import Task
from lab.tools.base import Tool, ToolContext


class UserSimulator(Protocol):
    """The simulated user of a conversation task (`lab.benchmarks.tau2_user`): one session per rollout."""

    def session(self, task: Task) -> Any: ...


def no_tools(task: Task) -> dict[str, Tool]:
    """A task that brings no tools of its own (the toolkit's are all it gets)."""
    return {}


def no_user(task: Task) -> UserSimulator | None:
    """A task that is a question, not a conversation."""
    return None


@dataclass
class EvalSource:
    """What a run of one benchmark runs on: its tasks, their grader, the tools and user of each task."""

    benchmark: str
    tasks: list[Task]
    grader: Grader
    #: The store rows of `tasks` (same order), written before the first rollout.
    records: list[TaskRecord]
    #: The tools a task brings besides the toolkit's (a domain's functions, BFCL's recorded calls).
    task_tools: Callable[[Task], dict[str, Tool]] = no_tools
    #: The simulated user of a task that is a conversation (tau2), else None.
    user: Callable[[Task], UserSimulator | None] = no_user

    def tools_for(self, task: Task) -> dict[str, Tool]:
        return self.task_tools(task)

    def user_for(self, task: Task) -> UserSimulator | None:
        return self.user(task)


@dataclass(frozen=True)
class DocumentRules:
    """How the round protocol shows retrieved documents: the released evaluation differs per benchmark."""

    #: Cap on `--context-tokens`; None keeps the flag's value.
    context_tokens: int | None = None
    document_chars: int = 1200
    document_suffix: str = " ..."
    #: `search` is withdrawn once a document is in the context.
    withdraw_search_after_documents: bool = False


#: `(qualifier, path, split, limit, **options) -> tasks`, the library's `load_benchmark`.
Loader = Callable[..., list[Task]]
#: `(qualifier, path, split) -> EvalSource`, what `orchestra eval` runs.
Opener = Callable[[str, str | None, str | None], EvalSource]


@dataclass(frozen=True)
class BenchmarkSource:
    """One benchmark, registered under `name`; `--benchmark name[:qualifier]` selects it."""

    name: str
    #: How `--benchmark` names it, for the CLI's help: `tau2[:domain]`.
    usage: str
    #: One line for `list_benchmarks` (what the qualifier means, too).
    description: str
    load: Loader
    open: Opener
    #: Whether a qualifier after `name:` means something; `name:x` is an unknown name otherwise.
    qualified: bool = False
    #: Question answering: the round protocol (`--protocol rounds`) can run it.
    rounds: bool = False
    #: Documents per `search` in the released evaluation under rounds (its `--retrieval-top-k` default).
    released_top_k: int | None = None
    documents: DocumentRules = field(default_factory=DocumentRules)
    #: A simulated judge (`sim:`) knows its answers (only the offline world's).
    simulated_judge: bool = False
    #: `--tau2-agent released` runs its conversations.
    released_agent: bool = False
    #: Extra run-id identity of a qualifier (e.g. the version of a dataset built on first use).
    run_identity: Callable[[str], dict[str, str]] = field(default=lambda qualifier: {})


_REGISTRY: dict[str, BenchmarkSource] = {}


def register(source: BenchmarkSource) -> BenchmarkSource:
    """Make `source` selectable by `--benchmark`; a name can be registered once."""
    if source.name in _REGISTRY and _REGISTRY[source.name] is not source:
        raise ValueError(f"benchmark '{source.name}' is registered already")
    _REGISTRY[source.name] = source
    return source


def sources() -> list[BenchmarkSource]:
    """Every registered benchmark, in registration order (the order the CLI lists them in)."""
    return list(_REGISTRY.values())


def find_source(name: str) -> BenchmarkSource | None:
    """The benchmark a `--benchmark` value selects (by the part before `:`), or None."""
    return _REGISTRY.get(name.partition(":")[0])


def resolve(name: str) -> tuple[BenchmarkSource, str]:
    """`(source, qualifier)` of a full name such as `tau2:retail` (the base is case-insensitive), or
    one clear error naming the known benchmarks."""
    base, _, qualifier = name.strip().partition(":")
    source = _REGISTRY.get(base.lower())
    if source is None or (qualifier and not source.qualified):
        raise LabInputError(f"benchmark: unknown name '{name}' (choose from {', '.join(_REGISTRY)})")
    return source, qualifier


def graded_by_answer(benchmark: str, tasks: list[BenchmarkTask]) -> EvalSource:
    """Question answering with no tools of its own: graded by `lab.graders.grade` (exact match, numeric
    tolerance or multiple choice, by each task's `answer_type`)."""

    async def grader(task: Task, answer: str | None, context: ToolContext) -> float:
        return float(grade(task, answer, context).correct)

    return EvalSource(benchmark, list(tasks), grader, [t.to_record() for t in tasks])

