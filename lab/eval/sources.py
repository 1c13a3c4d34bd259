"""What an evaluation runs on: the benchmark's tasks (cut by `--tasks` / `--limit`), their grader,
each task's tools and simulated user, and the rollout limits of a run.

The benchmark is looked up in the registry (`lab.benchmarks.source`): each benchmark module says how
its tasks load and are graded, which tools they bring and who plays their user, so nothing here
knows one benchmark from another. See each module for how it grades (`lab.benchmarks.world`,
`frames`, `hle`, `tau2`, `toolscale`, `bfcl`).
"""

from __future__ import annotations

from collections.abc import Callable

from lab.benchmarks import EvalSource, find_source, resolve
from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.rollout import RolloutConfig
from lab.task import Task
from lab.tools.base import Tool


def load_source(config: EvalConfig) -> EvalSource:
    """The benchmark `config` names, opened for a run, with only the tasks `--tasks` and `--limit` keep."""
    benchmark, qualifier = resolve(config.benchmark)
    source = benchmark.open(qualifier, config.benchmark_path, config.split)
    tasks = source.tasks
    if config.tasks:
        wanted = set(config.tasks)
        unknown = wanted - {t.task_id for t in tasks}
        if unknown:
            raise LabInputError(f"--tasks: unknown task id(s) {', '.join(sorted(unknown)[:5])} in {config.benchmark}")
        tasks = [t for t in tasks if t.task_id in wanted]
    if config.limit:
        tasks = tasks[: config.limit]
    if not tasks:
        raise LabInputError(f"--benchmark {config.benchmark}: no tasks in split '{config.split}'")
    source.tasks = tasks
    keep = {t.task_id for t in tasks}
    source.records = [r for r in source.records if r.task_id in keep]
    return source


def rollout_tools(config: EvalConfig, source: EvalSource, tools: dict[str, Tool]) -> Callable[[Task], dict[str, Tool]]:
    """The tools a task's rollout may call: the toolkit's and the task's; under the released tau2 agent, the
    task's and `call_expert`, whose slots are the toolkit's LLM tools for the released experts (checked here,
    before any rollout)."""
    if config.tau2_agent == "released":
        from lab.benchmarks.tau2_experts import expert_tools, released_tools

        experts = expert_tools(tools, config.toolkit)
        return lambda task: released_tools(task, source.tools_for(task), experts)
    return lambda task: {**tools, **source.tools_for(task)}


def rollout_config_for(config: EvalConfig, max_turns: int) -> RolloutConfig:
    """The rollout limits and protocol of one run, with the benchmark's document rules under the round
    protocol (`BenchmarkSource.documents`: FRAMES keeps the released evaluation's)."""
    rules = find_source(config.benchmark).documents
    context_tokens = (config.context_tokens if rules.context_tokens is None
                      else min(config.context_tokens, rules.context_tokens))
    return RolloutConfig(max_turns=max_turns, observation_chars=config.observation_chars, protocol=config.protocol,
                         catalog=config.catalog, tau2_agent=config.tau2_agent, context_tokens=context_tokens,
                         document_chars=rules.document_chars, document_suffix=rules.document_suffix,
                         withdraw_search_after_documents=rules.withdraw_search_after_documents,
                         expert_protocol=config.expert_protocol, expert_variant=rules.expert_variant,
                         calls_per_round=config.calls_per_round or rules.calls_per_round,
                         run_programs=rules.run_programs if config.run_programs is None else config.run_programs,
                         tool_timeout_s=config.tool_timeout_s, expert_timeout_s=config.expert_timeout_s)
