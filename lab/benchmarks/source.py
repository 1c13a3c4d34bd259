"""A benchmark as one registered object: its tasks, tools, grader, simulated user and the facts runs read.

Shaped like Inspect AI's `Task` (dataset + solver + scorer + limits): a `BenchmarkSource` says how to
load the tasks a `--benchmark NAME[:QUALIFIER]` names (`load`), and how to open them for a run
(`open`: the tasks with their grader, the tools each task brings and its simulated user, as one
`EvalSource`). The facts the CLI, `EvalConfig` and the harness need about a benchmark (may it run
under the round protocol? how deep does its released `search` go? does a simulated judge know its
answers?) are fields here, so no code outside the benchmark's own module branches on its name.

Each benchmark module ends with `SOURCE = BenchmarkSource(...)`; `lab.benchmarks` registers the
built-in ones. A new benchmark is one module: given as a file (`orchestra eval --benchmark
path/to/arith.py[:qualifier]`, as Inspect AI runs a task file), it is loaded and its `SOURCE` registered,
with no lab file edited; imported by `lab.benchmarks` it becomes a built-in, selectable by name:

    SOURCE = register(BenchmarkSource(name="arith", usage="arith", description="sums",
                                      load=load_sums, open=open_sums, rounds=True))
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lab.benchmarks.base import BenchmarkTask
from lab.errors import LabInputError
from lab.graders import grade
from lab.records import TaskRecord
from lab.rollout.engine import Grader
from lab.task import Task
from lab.tools.base import Tool, ToolContext
from lab.tools.experts import Variant


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
    #: The orchestrator is behind a function-calling API (`openai:`), whose tool names cannot hold `.`: a
    #: benchmark whose functions have dotted names offers and grades them the API's way (BFCL). Set by the run.
    function_calling: bool = False

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
    #: Which released script's expert prompts and budgets apply (`lab.tools.experts`): eval_hle.py or eval_frames.py.
    expert_variant: Variant = "hle"
    #: Which calls of a round run: the first valid one (the released HLE and FRAMES evaluations) or each distinct
    #: valid tool (`distinct`).
    calls_per_round: str = "first"
    #: Under the released experts, whether `enhance_reasoning` programs run and join the context (released
    #: FRAMES: no, `RolloutConfig.run_programs`).
    run_programs: bool = True


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
    #: What the released retrieval server keeps of a search under rounds (`LocalSearch` `min_chars`, `min_score`).
    released_filters: dict[str, Any] = field(default_factory=dict)
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
    """The benchmark a `--benchmark` value selects (by the part before `:`), or None; a value naming a
    `.py` file loads that module and selects the `SOURCE` it defines."""
    base = name.strip().partition(":")[0]
    if base.endswith(".py"):
        return source_from_file(base)
    return _REGISTRY.get(base.lower())


def resolve(name: str) -> tuple[BenchmarkSource, str]:
    """`(source, qualifier)` of a full name such as `tau2:retail` (the base is case-insensitive) or
    `my_bench.py:hard`, or one clear error naming the known benchmarks."""
    qualifier = name.strip().partition(":")[2]
    source = find_source(name)
    if source is None or (qualifier and not source.qualified):
        raise LabInputError(f"benchmark: unknown name '{name}' (choose from {', '.join(_REGISTRY)}, "
                            "or a .py file defining SOURCE)")
    return source, qualifier


def benchmark_label(name: str) -> str:
    """How a `--benchmark` value is shown and stored (the run's `benchmark`, its id): the value itself, or
    for a module file the name its source registers plus the qualifier (`arith:2` for
    `benchmarks/arith.py:2`), so no path enters a run id or a table."""
    base, _, qualifier = name.partition(":")
    if not base.endswith(".py"):
        return name
    label = source_from_file(base).name
    return f"{label}:{qualifier}" if qualifier else label


_FILES: dict[Path, BenchmarkSource] = {}


def source_from_file(path_text: str) -> BenchmarkSource:
    """The `SOURCE` of a benchmark module given by its path, loaded once per process and registered: a
    benchmark kept outside the lab (as `inspect eval task.py` runs a task file) needs no lab file edited."""
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise LabInputError(f"--benchmark {path_text}: no such file")
    key = path.resolve()
    if key not in _FILES:
        name = f"orchestra_benchmark_{path.stem}_{hashlib.sha256(str(key).encode()).hexdigest()[:8]}"
        spec = importlib.util.spec_from_file_location(name, key)
        if spec is None or spec.loader is None:
            raise LabInputError(f"--benchmark {path_text}: not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pydantic models look their module up while it runs
        spec.loader.exec_module(module)
        source = getattr(module, "SOURCE", None)
        if not isinstance(source, BenchmarkSource):
            raise LabInputError(f"--benchmark {path_text}: the module defines no SOURCE = BenchmarkSource(...)")
        _FILES[key] = register(source)
    return _FILES[key]


def graded_by_answer(benchmark: str, tasks: list[BenchmarkTask]) -> EvalSource:
    """Question answering with no tools of its own: graded by `lab.graders.grade` (exact match, numeric
    tolerance or multiple choice, by each task's `answer_type`)."""

    async def grader(task: Task, answer: str | None, context: ToolContext) -> float:
        return float(grade(task, answer, context).correct)

    return EvalSource(benchmark, list(tasks), grader, [t.to_record() for t in tasks])

