"""`run_eval`: concurrent, resumable, budget-guarded evaluation that logs every trajectory.

Shape of a run: workers pull (task, sample) pairs from a queue, run the shared rollout engine, and hand
finished rollouts to the store's batched `TrajectoryWriter` (one transaction per batch, not per
trajectory; the trainer writes through the same store API). Resuming is by key: the run id is a hash of the command, and
pairs already in the store are skipped, so re-running after Ctrl-C or SIGKILL finishes only the missing
ones and never duplicates one.

What is written: every rollout that produced a result, including failures (status `error`, with the
error text, counted by `orchestra runs` and the report). Not written: rollouts whose orchestrator
endpoint was unavailable (an outage says nothing about the orchestrator), and rollouts the `--judge`
model gave no verdict on (unreachable, failed, or no single verdict tag: no grade is not a wrong
answer); a resume retries both and the command exits 1 naming them. Rollouts cut by `--budget-usd` are
written with status `cut`, never as wrong answers, and a resume re-runs them.

With `--judge TOOL` (`lab.eval.judged`) every rollout carries two grades, by exact match and by the judge
rule, and the judge's calls are steps of their own whose cost is kept apart from the rollout's.

This module schedules and resumes; the rest has a module of its own: what a run runs on
(`lab.eval.sources`), what is refused before any work (`lab.eval.checks`), spending and start rate
(`lab.eval.budget`: the cap holds to within one turn per rollout in flight), what a run counts
(`lab.eval.summary`) and the judge (`lab.eval.judged`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from lab.benchmarks.source import benchmark_label
from lab.benchmarks.tau2_user import with_llm_user
from lab.eval.budget import Budget, RateLimiter
from lab.eval.checks import checked_toolkit, llm_tool_spec, with_search_depth
from lab.eval.config import EvalConfig
from lab.eval.judged import judged, settle_unanswered
from lab.eval.sources import EvalSource, load_source, rollout_config_for, rollout_tools
from lab.eval.summary import RunSummary
from lab.policies import make_policy
from lab.preference import task_preferences
from lab.records import RunRecord, git_sha, utcnow
from lab.report.metrics import SIMULATED_SUFFIX
from lab.rollout import RolloutRequest, RolloutResult, run_rollout
from lab.rollout.policy import Policy
from lab.store import Store, queries
from lab.store.writer import TrajectoryWriter
from lab.task import Task
from lab.toolkit import build_tools
from lab.tools.base import Tool
from lab.tools.openai_llm import OpenAIChatTool
from lab.toolspec import Toolkit


def run_eval(config: EvalConfig, store: Store, console: Console | None = None, policy: Policy | None = None,
             toolkit: Toolkit | None = None) -> list[RunSummary]:
    """Synchronous entry point (the CLI and notebooks); see `run_eval_async`.

    Inside a running event loop (a Jupyter kernel runs one) `asyncio.run` is refused, so the evaluation
    then gets a loop of its own on a worker thread, and this call still blocks until it is done."""
    coroutine = run_eval_async(config, store, console, policy, toolkit)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="run_eval") as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def run_eval_async(config: EvalConfig, store: Store, console: Console | None = None,
                         policy: Policy | None = None, toolkit: Toolkit | None = None) -> list[RunSummary]:
    """Run every (preference, max_turns) variant of `config` as its own resumable run.

    `policy` replaces the one `config.orchestrator` names (the trainer evaluates its live model so);
    the config still names it, for the run id and the record. `toolkit` is what `checked_toolkit(config)`
    returned, for a caller that checks before it opens the store (`orchestra eval`); None: checked here."""
    console = console or Console(stderr=True)
    toolkit = toolkit or checked_toolkit(config, console)  # before the tasks load: a misspelt tool name costs nothing
    source = load_source(config)
    source.function_calling = config.orchestrator.startswith("openai:")  # tool names as a function-calling API
    toolkit = with_search_depth(config, toolkit)
    tools = build_tools(toolkit)
    if config.user != "scripted":
        source.user = with_llm_user(source.user, tools[config.user])
    # privileged scripts (oracle, best-route) probe plans with the model-free grader: a judge grades only
    # the rollouts that are stored, so every judge call is one a report counts
    model_free = source.grader
    if config.judge:
        source.grader = judged(source.grader, tools[config.judge], config.judge_prompt or "lab")
    tools_for = rollout_tools(config, source, tools)
    policy = policy or make_policy(config.orchestrator, pricing=config.pricing, tools=tools, grader=model_free,
                                   task_tools=source.tools_for, temperature=config.temperature, top_p=config.top_p,
                                   max_new_tokens=config.max_new_tokens,
                                   latency_per_token_s=config.orchestrator_latency_per_token_s,
                                   tokenizer=config.orchestrator_tokenizer, provider=config.orchestrator_provider,
                                   family=config.orchestrator_family,
                                   best_route=_route_training(config, source, toolkit))
    store.write_tasks(list(source.records))
    summaries = []
    budget = Budget(config.budget_usd)
    try:
        for preference, max_turns in config.variants():
            summary = await _run_variant(config, store, source, toolkit, tools_for, policy, preference, max_turns,
                                         budget, console, endpoint_tools(tools))
            summaries.append(summary)
            if summary.stopped_by_budget:
                break
    finally:
        close = getattr(policy, "aclose", None)
        if close:
            await close()
    return summaries


def _route_training(config: EvalConfig, source: EvalSource, toolkit: Toolkit) -> dict[str, Any] | None:
    """What `scripted:best-route` measures its routes on: the train split's tasks of the families evaluated."""
    if config.orchestrator != "scripted:best-route":
        return None
    families = {getattr(task, "family", None) for task in source.tasks}
    train = load_source(config.model_copy(update={"split": "train", "tasks": [], "limit": None}))
    return {"train_tasks": [t for t in train.tasks if getattr(t, "family", None) in families],
            "features": toolkit.feature_names, "config": rollout_config_for(config, max(config.max_turns))}


def endpoint_tools(tools: dict[str, Tool]) -> dict[str, OpenAIChatTool]:
    """The run's OpenAI-compatible model tools by role: each such tool of the toolkit (the judge and the user
    among them) and each slot model of its paper tools."""
    found: dict[str, OpenAIChatTool] = {}
    for name, tool in tools.items():
        if isinstance(tool, OpenAIChatTool):
            found[f"tool '{name}'"] = tool
        for slot, model in (getattr(tool, "models", None) or {}).items():
            if isinstance(model, OpenAIChatTool):
                found[f"slot '{slot}' of tool '{name}'"] = model
    return found


def _all_failed(endpoints: dict[str, OpenAIChatTool], before: dict[str, tuple[int, int]]) -> list[str]:
    """One line for each endpoint that was called since `before` and failed every time: a search slot whose
    query writer fails still searches (the problem itself, as released), so only this says it never worked."""
    lines = []
    for role, tool in endpoints.items():
        calls, failed = tool.calls - before[role][0], tool.failed_calls - before[role][1]
        if calls and failed == calls:
            lines.append(f"{role} ({tool.backend.model}): all {calls} calls failed; last: {tool.last_failure}")
    return lines


async def _run_variant(config: EvalConfig, store: Store, source: EvalSource, toolkit: Toolkit,
                       tools_for: Callable[[Task], dict[str, Tool]], policy: Policy, preference: str | None,
                       max_turns: int, budget: Budget, console: Console,
                       endpoints: dict[str, OpenAIChatTool]) -> RunSummary:
    """One run: resume what the store holds, then let workers take the missing (task, sample) pairs. A run in
    which some endpoint failed every call it was given ends `failed`, naming it (`RunSummary.failed_endpoints`)."""
    before = {role: (tool.calls, tool.failed_calls) for role, tool in endpoints.items()}
    run_id = config.run_id(preference, max_turns, toolkit.model_dump_json())
    # each task's P and instruction (held-out pair, eval wording or template), picked by task id
    prefs = task_preferences(preference, toolkit.feature_names, config.preference_instruction, toolkit.feature_models())
    summary = RunSummary(run_id=run_id, preference=preference, max_turns=max_turns, judge=_judge_label(config, toolkit))
    done = store.completed_keys(run_id)
    shard = config.shard_slice()
    mine = [(task, s) for task in source.tasks for s in range(config.samples)]
    if shard is not None:  # --shard i/N: pairs dealt round-robin, so slices differ in size by at most one
        mine = mine[shard[0] - 1::shard[1]]
    pairs = [(task, s) for task, s in mine if (task.task_id, s, 0) not in done]
    summary.skipped_done = len(mine) - len(pairs)
    if done:  # a resumed run's cap covers what it already spent, and its costs so far are known
        logged = queries.trajectories_df(store, [run_id], include_cut=True)
        logged = logged.cost_usd + logged.judge_cost_usd
        budget.resume(float(logged.sum()), float(logged.max()))
    store.write_run(RunRecord(
        run_id=run_id, kind="eval", name=config.run_name, benchmark=benchmark_label(config.benchmark),
        orchestrator=policy.name,
        # `variant` names this run's own (preference, max_turns) among the config's lists (read by reports);
        # `instruction` holds the per-task choices (`lab.preference.logged_instruction` reads them back).
        config_json=json.dumps({**config.model_dump(mode="json"),
                                "variant": {"preference": preference, "max_turns": max_turns,
                                            "instruction": prefs.log()}}),
        toolkit_json=toolkit.model_dump_json(), pricing=config.pricing,
        git_sha=git_sha(), started_at=utcnow(),
    ), shard=shard)
    rollout_config = rollout_config_for(config, max_turns)
    queue: asyncio.Queue = asyncio.Queue()
    for pair in pairs:
        queue.put_nowait(pair)
    limiter = RateLimiter(config.rate_limit)

    async def worker(record: Callable[[RolloutResult], Awaitable[None]]) -> None:
        while not queue.empty() and not summary.stopped_by_budget:
            task, sample_idx = queue.get_nowait()
            allowance = await budget.acquire()
            if allowance == 0.0:
                summary.stopped_by_budget = True
                break
            await limiter.wait()
            request = RolloutRequest(
                run_id=run_id, task=task, sample_idx=sample_idx, group_id=f"{task.task_id}",
                preference=prefs.for_task(task.task_id).as_dict(),
                preference_instruction=prefs.for_task(task.task_id).instruction,
                seed=config.seed * 1_000_003 + sample_idx, benchmark=source.benchmark, user=source.user_for(task),
            )
            config_here = (rollout_config if allowance is None
                           else rollout_config.model_copy(update={"cost_cap_usd": allowance}))
            cost = 0.0
            try:
                result = await run_rollout(policy, tools_for(task), request, source.grader, config_here)
                cost = result.trajectory.cost_usd + result.trajectory.judge_cost_usd
            finally:
                await budget.release(allowance, cost)
            if config.judge:
                settle_unanswered(result.trajectory)
            await record(result)

    progress = _progress(console)
    status = "failed"
    with progress:
        bar = progress.add_task(run_id, total=len(pairs), stats="")
        writer = TrajectoryWriter(store, on_commit=lambda items: progress.update(bar, advance=len(items),
                                                                                 stats=summary.stats()))

        async def record(result: RolloutResult) -> None:
            if summary.count(result):
                await writer.put(result.store_item())
            else:  # an outage or no verdict: counted and named, never written
                progress.update(bar, advance=1, stats=summary.stats())

        workers = [asyncio.create_task(worker(record)) for _ in range(min(config.concurrency, max(1, len(pairs))))]
        try:
            # the writer only ends early by failing: then stop spending on rollouts nobody can store
            await _first_failure(workers, writer.task)
            # outages, missing verdicts and budget stops leave rollouts to run: the same command resumes them
            status = ("interrupted" if summary.stopped_by_budget or summary.unavailable or summary.judge_failed
                      else "finished")
            summary.failed_endpoints = _all_failed(endpoints, before)
            if summary.failed_endpoints and status == "finished":
                status = "failed"
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "interrupted"
            raise
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            try:
                await writer.close()
            finally:
                store.finish_run(run_id, status, shard=shard)
    return summary


async def _first_failure(workers: list[asyncio.Task], writer: asyncio.Task) -> None:
    """Wait for every worker; raise at once if a worker or the writer fails."""
    pending = set(workers) | {writer}
    while pending - {writer}:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for finished in done:
            if finished.exception() is not None:
                raise finished.exception()
            if finished is writer:
                raise RuntimeError("the trajectory writer stopped before the workers")


def _judge_label(config: EvalConfig, toolkit: Toolkit) -> str | None:
    if not config.judge:
        return None
    return config.judge + (SIMULATED_SUFFIX if llm_tool_spec(toolkit, config.judge, "--judge").simulated else "")


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console, transient=False,
    )
