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

Budget: each rollout runs under an allowance reserved against the cap and stops at the end of the
turn that reaches it, so the total can pass the cap by at most the cost of one turn (up to
`max_calls_per_turn` tool calls plus the orchestrator's own tokens) for each rollout in flight, plus its
judge call. The judge's cost counts against the cap: it is money the command spends.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.judged import judged, settle_unanswered
from lab.eval.sources import EvalSource, load_source
from lab.policies import make_policy
from lab.preference import task_preferences
from lab.records import RunRecord, utcnow
from lab.report.metrics import SIMULATED_SUFFIX
from lab.rollout import RolloutConfig, RolloutRequest, RolloutResult, run_rollout
from lab.rollout.policy import Policy
from lab.rollout.rounds import check_catalog
from lab.store import Store, queries
from lab.store.writer import TrajectoryWriter
from lab.toolkit import build_tools, load_toolkit, with_retrieval_top_k
from lab.toolspec import Toolkit

#: Documents per `search` in the released evaluations (evaluation/eval_frames.py, eval_hle.py: "topk").
RELEASED_TOP_K = {"frames": 150, "hle": 50}


@dataclass
class RunSummary:
    """What `orchestra eval` prints per run."""

    run_id: str
    preference: str | None
    max_turns: int
    #: The judge tool's name, marked "(simulated)" when it is a simulated model; None without `--judge`.
    judge: str | None = None
    trajectories: int = 0
    solved: float = 0.0
    cost_usd: float = 0.0
    #: What the judge model cost (never part of `cost_usd`); 0 without `--judge`.
    judge_cost_usd: float = 0.0
    latency_s: float = 0.0
    skipped_done: int = 0
    failed: int = 0
    unavailable: int = 0
    #: Rollouts the judge gave no verdict on: not written, like outages.
    judge_failed: int = 0
    cut: int = 0
    stopped_by_budget: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        """Over finished rollouts: cut ones are no result (and unavailable ones were never written)."""
        done = self.trajectories - self.cut
        return self.solved / done if done > 0 else None


def run_eval(config: EvalConfig, store: Store, console: Console | None = None, policy: Policy | None = None) -> list[RunSummary]:
    """Synchronous entry point (the CLI and notebooks); see `run_eval_async`.

    Inside a running event loop (a Jupyter kernel runs one) `asyncio.run` is refused, so the evaluation
    then gets a loop of its own on a worker thread, and this call still blocks until it is done."""
    coroutine = run_eval_async(config, store, console, policy)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="run_eval") as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def run_eval_async(config: EvalConfig, store: Store, console: Console | None = None,
                         policy: Policy | None = None) -> list[RunSummary]:
    """Run every (preference, max_turns) variant of `config` as its own resumable run.

    `policy` replaces the one `config.orchestrator` names (the trainer evaluates its live model so);
    the config still names it, for the run id and the record."""
    console = console or Console(stderr=True)
    toolkit = load_toolkit(config.toolkit, pricing=config.pricing, console=console)
    check_before_work(config, toolkit)  # before the tasks load: a misspelt tool name costs nothing
    source = load_source(config)
    toolkit = with_search_depth(config, toolkit)
    tools = build_tools(toolkit)
    if config.user != "scripted":
        source.user = _llm_user(source.user, tools[config.user])
    # privileged scripts (oracle, best-route) probe plans with the model-free grader: a judge grades only
    # the rollouts that are stored, so every judge call is one a report counts
    model_free = source.grader
    if config.judge:
        source.grader = judged(source.grader, tools[config.judge])
    tools_for = rollout_tools(config, source, tools)
    policy = policy or make_policy(config.orchestrator, pricing=config.pricing, tools=tools, grader=model_free, task_tools=source.tools_for,
                         temperature=config.temperature, top_p=config.top_p, max_new_tokens=config.max_new_tokens,
                         latency_per_token_s=config.orchestrator_latency_per_token_s, best_route=_route_training(config, source, toolkit))
    store.write_tasks([task_record for task_record in source.records])
    summaries = []
    budget = _Budget(config.budget_usd)
    try:
        for preference, max_turns in config.variants():
            summary = await _run_variant(config, store, source, toolkit, tools_for, policy, preference, max_turns, budget, console)
            summaries.append(summary)
            if summary.stopped_by_budget:
                break
    finally:
        close = getattr(policy, "aclose", None)
        if close:
            await close()
    return summaries


def _route_training(config: EvalConfig, source: EvalSource, toolkit: Any) -> dict[str, Any] | None:
    """What `scripted:best-route` measures its routes on: the train split's tasks of the families evaluated."""
    if config.orchestrator != "scripted:best-route":
        return None
    families = {getattr(task, "family", None) for task in source.tasks}
    train = load_source(config.model_copy(update={"split": "train", "tasks": [], "limit": None}))
    return {"train_tasks": [t for t in train.tasks if getattr(t, "family", None) in families],
            "features": toolkit.feature_names, "config": rollout_config_for(config, max(config.max_turns))}


def rollout_tools(config: EvalConfig, source: EvalSource, tools: dict[str, Any]) -> Callable[[Any], dict[str, Any]]:
    """The tools a task's rollout may call: the toolkit's and the task's; under the released tau2 agent, the
    task's and `call_expert`, whose slots are the toolkit's LLM tools for the released experts (checked here,
    before any rollout)."""
    if config.tau2_agent == "released":
        from lab.benchmarks.tau2_experts import expert_tools, released_tools

        experts = expert_tools(tools, config.toolkit)
        return lambda task: released_tools(task, source.tools_for(task), experts)
    return lambda task: {**tools, **source.tools_for(task)}


def check_round_toolkit(toolkit: Any, catalog: str | None) -> None:
    """Refuse, before any rollout, a toolkit the round protocol cannot end a task with."""
    if not any(spec.name == "answer" for spec in toolkit.tools):
        raise LabInputError(f"--protocol rounds: toolkit '{toolkit.name}' has no `answer` tool, and only `answer` ends a "
                            "task under the round protocol (use a slot toolkit: paper, paper-small)")
    if catalog:
        check_catalog(catalog, list(toolkit.tools))


def rollout_config_for(config: EvalConfig, max_turns: int) -> RolloutConfig:
    """The rollout limits and protocol of one run. FRAMES under the round protocol keeps the released
    evaluation's rules: 4,000 characters per document and no ` ...` after it, `search` withdrawn once a
    document exists, a 24,000-token context (HLE's are the defaults: 1,200 characters and ` ...`)."""
    frames = config.benchmark.split(":")[0] == "frames"
    return RolloutConfig(max_turns=max_turns, observation_chars=config.observation_chars, protocol=config.protocol,
                         catalog=config.catalog, tau2_agent=config.tau2_agent,
                         context_tokens=min(config.context_tokens, 24000) if frames else config.context_tokens,
                         document_chars=4000 if frames else 1200, document_suffix="" if frames else " ...",
                         withdraw_search_after_documents=frames)


def retrieval_top_k_for(config: EvalConfig) -> int | None:
    """Documents each `search` retrieves: `--retrieval-top-k`, else under the round protocol the released
    depth of the benchmark (FRAMES 150, HLE 50), else None (the toolkit's own `top_k`)."""
    if config.retrieval_top_k is not None:
        return config.retrieval_top_k
    return RELEASED_TOP_K.get(config.benchmark.split(":")[0]) if config.protocol == "rounds" else None


def with_search_depth(config: EvalConfig, toolkit: Toolkit) -> Toolkit:
    """The toolkit whose `search` tools retrieve `retrieval_top_k_for(config)` documents; an explicit
    `--retrieval-top-k` on a toolkit without such a tool is refused, a released default skips it."""
    top_k = retrieval_top_k_for(config)
    deeper = with_retrieval_top_k(toolkit, top_k) if top_k is not None else None
    if deeper is None and config.retrieval_top_k is not None:
        raise LabInputError(f"--retrieval-top-k {config.retrieval_top_k}: toolkit '{toolkit.name}' has no `search` tool "
                            "retrieving from a local index (backend.retriever.kind: local_search; e.g. --toolkit paper)")
    return deeper or toolkit


async def _run_variant(config, store, source: EvalSource, toolkit, tools_for, policy, preference, max_turns, budget, console) -> RunSummary:
    run_id = config.run_id(preference, max_turns, toolkit.model_dump_json())
    # each task's P and instruction (held-out pair, eval wording or template), picked by task id
    prefs = task_preferences(preference, toolkit.feature_names, config.preference_instruction, toolkit.feature_models())
    summary = RunSummary(run_id=run_id, preference=preference, max_turns=max_turns, judge=_judge_label(config, toolkit))
    done = store.completed_keys(run_id)
    pairs = [(task, s) for task in source.tasks for s in range(config.samples) if (task.task_id, s, 0) not in done]
    summary.skipped_done = len(source.tasks) * config.samples - len(pairs)
    if done:  # a resumed run's cap covers what it already spent, and its costs so far are known
        logged = queries.trajectories_df(store, [run_id], include_cut=True)
        logged = logged.cost_usd + logged.judge_cost_usd
        budget.spent += float(logged.sum())
        budget.largest = max(budget.largest, float(logged.max()))
    store.write_run(RunRecord(
        run_id=run_id, kind="eval", name=config.run_name, benchmark=config.benchmark, orchestrator=policy.name,
        # `variant` names this run's own (preference, max_turns) among the config's lists (read by reports);
        # `instruction` holds the per-task choices (`lab.preference.logged_instruction` reads them back).
        config_json=json.dumps({**config.model_dump(mode="json"),
                                "variant": {"preference": preference, "max_turns": max_turns, "instruction": prefs.log()}}),
        toolkit_json=toolkit.model_dump_json(), pricing=config.pricing,
        git_sha=git_sha(), started_at=utcnow(),
    ))
    rollout_config = rollout_config_for(config, max_turns)
    queue: asyncio.Queue = asyncio.Queue()
    for pair in pairs:
        queue.put_nowait(pair)
    limiter = _RateLimiter(config.rate_limit)

    async def worker(record) -> None:
        while not queue.empty() and not summary.stopped_by_budget:
            task, sample_idx = queue.get_nowait()
            allowance = await budget.acquire()
            if allowance == 0.0:
                summary.stopped_by_budget = True
                break
            await limiter.wait()
            request = RolloutRequest(
                run_id=run_id, task=task, sample_idx=sample_idx, group_id=f"{task.task_id}",
                preference=prefs.for_task(task.task_id).as_dict(), preference_instruction=prefs.for_task(task.task_id).instruction,
                seed=config.seed * 1_000_003 + sample_idx, benchmark=source.benchmark, user=source.user_for(task),
            )
            config_here = rollout_config if allowance is None else rollout_config.model_copy(update={"cost_cap_usd": allowance})
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
        writer = TrajectoryWriter(store, on_commit=lambda items: progress.update(bar, advance=len(items), stats=_stats(summary)))

        async def record(result: RolloutResult) -> None:
            if _count(result, summary):
                await writer.put(result.store_item())
            else:  # an outage or no verdict: counted and named, never written
                progress.update(bar, advance=1, stats=_stats(summary))

        workers = [asyncio.create_task(worker(record)) for _ in range(min(config.concurrency, max(1, len(pairs))))]
        try:
            # the writer only ends early by failing: then stop spending on rollouts nobody can store
            await _first_failure(workers, writer.task)
            # outages, missing verdicts and budget stops leave rollouts to run: the same command resumes them
            status = "interrupted" if summary.stopped_by_budget or summary.unavailable or summary.judge_failed else "finished"
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
                store.finish_run(run_id, status)
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


def _count(result: RolloutResult, summary: RunSummary) -> bool:
    """Add a finished rollout to the summary; False for an outage or a missing verdict, which are not
    written (module docstring)."""
    traj = result.trajectory
    if result.judge_failed:
        summary.judge_failed += 1
        if len(summary.errors) < 5:
            summary.errors.append(f"{traj.task_id}#{traj.sample_idx}: no verdict: {result.judge_failed}")
        return False
    if result.unavailable or traj.status == "error":
        summary.unavailable += bool(result.unavailable)
        summary.failed += traj.status == "error"
        if len(summary.errors) < 5:
            summary.errors.append(f"{traj.task_id}#{traj.sample_idx}: {traj.error}")
        if result.unavailable:
            return False
    summary.trajectories += 1
    summary.cut += traj.status == "cut"
    summary.solved += traj.outcome
    summary.cost_usd += traj.cost_usd
    summary.judge_cost_usd += traj.judge_cost_usd
    summary.latency_s += traj.latency_s
    return True


def check_before_work(config: EvalConfig, toolkit: Toolkit) -> None:
    """Everything about `config` that can be refused without loading tasks, models or indexes, or opening
    a store: the LLM flags, the round protocol's toolkit and catalog, the retrieval depth, and every
    `--preference` against the toolkit's features. A refused command has then created nothing."""
    check_llm_flags(config, toolkit)
    if config.protocol == "rounds":
        check_round_toolkit(toolkit, config.catalog)
    with_search_depth(config, toolkit)
    for preference, _ in config.variants():
        task_preferences(preference, toolkit.feature_names, config.preference_instruction, toolkit.feature_models())


def check_llm_flags(config: EvalConfig, toolkit: Toolkit) -> None:
    """Refuse, before any work, a `--user` or `--judge` that is not an LLM tool of the toolkit, and a
    simulated judge outside the offline world (it knows no other benchmark's answers)."""
    if config.user != "scripted":
        llm_tool_spec(toolkit, config.user, "--user")
    if config.judge and llm_tool_spec(toolkit, config.judge, "--judge").simulated and not config.benchmark.startswith("world"):
        raise LabInputError(f"--judge {config.judge!r}: a simulated judge knows only the offline world's answers; "
                            f"judge {config.benchmark} with a real model tool (backend kind openai or local_llm)")


def llm_tool_spec(toolkit: Toolkit, name: str, flag: str) -> Any:
    """The spec of the LLM tool `name` of the toolkit, for a flag that names one (`--user`, `--judge`, `--llm`)."""
    spec = next((s for s in toolkit.tools if s.name == name), None)
    if spec is None or not spec.model:
        llms = ", ".join(s.name for s in toolkit.tools if s.model) or "none"
        raise LabInputError(f"{flag} {name!r}: not an LLM tool of toolkit '{toolkit.name}' (its LLM tools: {llms})")
    return spec


def _llm_user(scripted: Any, tool: Any) -> Any:
    """The LLM `tool` as the simulated user of every task that has one."""
    from lab.benchmarks.tau2_user import LLMUser

    simulator = LLMUser(tool)
    return lambda task: simulator if scripted is not None and scripted(task) is not None else None


class _Budget:
    """Stops before the total passes the cap, whatever the concurrency.

    Each rollout is granted an allowance (the engine stops it at the end of the turn that reaches it)
    and allowances in flight are reserved against the cap. Until one rollout has finished nothing is
    known about their cost, so the first runs alone; after that each is granted up to three times the
    largest rollout cost seen, and none starts when what is left cannot cover one such rollout.
    """

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        self.spent = 0.0
        self.reserved = 0.0
        self.in_flight = 0
        self.largest = 0.0
        self.changed = asyncio.Condition()

    async def acquire(self) -> float | None:
        """The allowance of the rollout about to start: None without a cap, 0.0 for "do not start"."""
        if self.cap is None:
            return None
        async with self.changed:
            while True:
                left = self.cap - self.spent - self.reserved
                known = self.largest > 0
                if left > 1e-12 and (left >= self.largest if known else self.in_flight == 0):
                    grant = min(left, 3 * self.largest) if known else left
                    self.reserved += grant
                    self.in_flight += 1
                    return grant
                if self.in_flight == 0:
                    return 0.0
                await self.changed.wait()

    async def release(self, allowance: float | None, cost: float) -> None:
        if allowance is None:
            return
        async with self.changed:
            self.reserved -= allowance
            self.in_flight -= 1
            self.spent += cost
            self.largest = max(self.largest, cost)
            self.changed.notify_all()


class _RateLimiter:
    """At most `rate` rollout starts per second across all workers."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.next_at = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            delay = self.next_at - now
            self.next_at = max(now, self.next_at) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console, transient=False,
    )


def _stats(summary: RunSummary) -> str:
    acc = summary.accuracy
    judge = f"  judge ${summary.judge_cost_usd:.4f}" if summary.judge else ""
    return f"acc {acc:.3f}  cost ${summary.cost_usd:.4f}{judge}" if acc is not None else ""


def git_sha() -> str:
    """Short commit of the lab checkout that produced a run (recorded on every run), or '' outside git."""
    try:
        here = Path(__file__).resolve().parent
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""

