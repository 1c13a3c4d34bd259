"""The Playground: one orchestrator, one task (or a question typed against the offline world) and one
instruction, played live and watched round by round.

Why it sits beside `run_eval` and not in the app: a playground rollout must be the rollout an evaluation
would run (the same source, toolkit, prices, protocol, policy settings and grader), so it is built from an
`EvalConfig` - the newest evaluation of the chosen orchestrator in the store is the template, which is
how the demo's trained model is played with the settings it was trained and evaluated under. What it
adds is watching (`Play.state` fills while the rollout runs, read from another thread), cancelling
(`Play.cancel`) and storing the finished rollouts as a run of kind `playground`: visible in Rollouts and
to notebooks, kept out of evaluation tables, never half-written (a cancelled or unreachable rollout
stores nothing).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rich.console import Console

from lab.errors import LabInputError
from lab.eval.checks import checked_toolkit
from lab.eval.config import EvalConfig
from lab.eval.sources import load_source, rollout_config_for, rollout_tools
from lab.policies import make_policy
from lab.preference import Preference
from lab.records import RunRecord, TaskRecord, git_sha, utcnow
from lab.rollout import RolloutRequest, RolloutResult, run_rollout
from lab.rollout.running import RolloutState
from lab.store import Store
from lab.task import Task
from lab.tools.base import ToolContext

#: A run's name in the store: `orchestra runs` and the Runs page tell playground rollouts apart by kind.
RUN_NAME = "playground"
#: EvalConfig fields a template's evaluation sets that a playground run chooses for itself.
_CHOSEN_HERE = ("preferences", "preference_instruction", "limit", "samples", "run_name", "train_run_id",
                "train_step", "concurrency", "rate_limit", "budget_usd", "split")


@dataclass(frozen=True)
class TypedQuestion:
    """A question a user typed: a task with no reference. The world's search indexes answer it for real;
    a simulated model says it only knows the world's own tasks. Graded by nobody."""

    question: str
    split: str = "test"
    domain: str = ""
    answer: Any = None
    answer_type: str = "exact"
    choices: list[str] = field(default_factory=list)
    family: str = "frames"

    @property
    def task_id(self) -> str:
        return "typed-" + hashlib.sha256(self.question.encode()).hexdigest()[:8]


async def _not_graded(task: Task, answer: str | None, context: ToolContext) -> float:
    return 0.0


def template_config(config_json: str | dict[str, Any], orchestrator: str, **changes: Any) -> EvalConfig:
    """An evaluation config for a playground run: what a logged evaluation ran with (its benchmark,
    toolkit, prices, protocol and policy settings), for `orchestrator`, with `changes` (EvalConfig fields)
    applied; one line naming the field when a change is bad input."""
    raw = json.loads(config_json) if isinstance(config_json, str) else dict(config_json)
    kept = {k: v for k, v in raw.items() if k in EvalConfig.model_fields and k not in _CHOSEN_HERE}
    return EvalConfig.build(**{**kept, "orchestrator": orchestrator, "split": raw.get("split", "test"), **changes})


class Playground:
    """What a playground rollout runs on, loaded once: the benchmark's tasks, the toolkit's tools and the
    grader. The policy is made per play (it is cheap once its model is loaded, which is cached per process)."""

    def __init__(self, config: EvalConfig) -> None:
        """Every task of the config's split is offered; the tasks the config names (those its evaluation ran,
        in a template) come first, so the first task offered is one the orchestrator was evaluated on."""
        self.config = config.model_copy(update={"tasks": [], "limit": None})
        self.toolkit = checked_toolkit(self.config, Console(stderr=True, quiet=True))
        self.source = load_source(self.config)
        self.tools_for = rollout_tools(self.config, self.source, _tools(self.toolkit))
        first = {task_id: i for i, task_id in enumerate(config.tasks)}
        ordered = sorted(self.source.tasks, key=lambda t: first.get(t.task_id, len(first)))
        self.tasks: dict[str, Task] = {t.task_id: t for t in ordered}
        self.features = self.toolkit.feature_names
        self.models = self.toolkit.feature_models()

    def task(self, task_id: str | None = None, question: str | None = None) -> Task:
        """A task of the benchmark by id, or a typed question (rounds against the offline world's documents)."""
        if question is not None:
            if not question.strip():
                raise LabInputError("playground: the typed question is empty")
            return TypedQuestion(question.strip())
        if task_id not in self.tasks:
            raise LabInputError(f"playground: unknown task '{task_id}' in {self.config.benchmark} "
                                f"(split {self.config.split})")
        return self.tasks[task_id]

    def preference(self, text: str, instruction: str | None) -> Preference:
        """P from `name=value,...` (a model's name weighs every slot it fills), with its instruction."""
        parsed = Preference.parse(text, list(self.features), self.models)
        return parsed.model_copy(update={"instruction": instruction.strip() if instruction else None})

    def start(self, orchestrator: str, task: Task, preference: Preference, sample_idx: int = 0, seed: int = 0,
              max_turns: int = 20, temperature: float | None = None) -> Play:
        """Start one rollout on a thread of its own; returns at once with the play to watch."""
        config = self.config.model_copy(update={
            "orchestrator": orchestrator, "max_turns": [max_turns],
            **({} if temperature is None else {"temperature": temperature})})
        policy = make_policy(orchestrator, pricing=config.pricing, temperature=config.temperature,
                             top_p=config.top_p, max_new_tokens=config.max_new_tokens,
                             latency_per_token_s=config.orchestrator_latency_per_token_s,
                             provider=config.orchestrator_provider, family=config.orchestrator_family)
        typed = isinstance(task, TypedQuestion)
        request = RolloutRequest(run_id=_run_id(config, task, preference, sample_idx, seed), task=task,
                                 sample_idx=sample_idx, group_id=task.task_id, preference=preference.as_dict(),
                                 preference_instruction=preference.instruction, seed=seed,
                                 benchmark=self.source.benchmark)
        grader = _not_graded if typed else self.source.grader
        play = Play(config=config, request=request, preference=preference, graded=not typed,
                    toolkit_json=self.toolkit.model_dump_json(), records=self.source.records)
        limits = rollout_config_for(config, max_turns)
        play.thread = threading.Thread(target=play.run_to_end, daemon=True, name=f"playground-{request.run_id}",
                                       args=(policy, self.tools_for(task), grader, limits))
        play.thread.start()
        return play


def _tools(toolkit: Any) -> dict[str, Any]:
    from lab.toolkit import build_tools

    return build_tools(toolkit)


def _run_id(config: EvalConfig, task: Task, preference: Preference, sample_idx: int, seed: int) -> str:
    """A new id per play (its start time is part of it): each press of Run is its own record."""
    identity = json.dumps([config.model_dump(mode="json"), task.task_id, preference.as_dict(), preference.instruction,
                           sample_idx, seed, utcnow().isoformat()], sort_keys=True, default=str)
    return f"{RUN_NAME}-{hashlib.sha256(identity.encode()).hexdigest()[:10]}"


@dataclass
class Play:
    """One live rollout: `state` fills round by round while `thread` runs it; `result` once it ended,
    `cancelled` when stopped, `failure` when it could not give a result (an endpoint that is down)."""

    config: EvalConfig
    request: RolloutRequest
    preference: Preference
    graded: bool
    toolkit_json: str = "{}"
    records: list[TaskRecord] = field(default_factory=list)
    started_at: datetime = field(default_factory=utcnow)
    state: RolloutState = field(default_factory=RolloutState)
    result: RolloutResult | None = None
    failure: str | None = None
    cancelled: bool = False
    thread: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def done(self) -> bool:
        return self.thread is not None and not self.thread.is_alive()

    def cancel(self) -> None:
        """Stop the rollout at its next await (a model call in flight over HTTP ends at once)."""
        self._stop.set()

    def run_to_end(self, policy: Any, tools: dict[str, Any], grader: Any, rollout_config: Any) -> None:
        try:
            asyncio.run(self._run(policy, tools, grader, rollout_config))
        except asyncio.CancelledError:
            self.cancelled = True
        except Exception as exc:  # shown on the page as one line; nothing is stored
            self.failure = f"{type(exc).__name__}: {exc}"

    async def _run(self, policy: Any, tools: dict[str, Any], grader: Any, rollout_config: Any) -> None:
        rollout = asyncio.ensure_future(run_rollout(policy, tools, self.request, grader, rollout_config,
                                                    state=self.state))
        try:
            while not rollout.done():
                if self._stop.is_set():
                    rollout.cancel()
                    self.cancelled = True
                    break
                await asyncio.wait({rollout}, timeout=0.05)
            if not self.cancelled:
                self.result = rollout.result()
                self.failure = self.result.unavailable or self.result.judge_failed
        finally:
            close = getattr(policy, "aclose", None)
            if close:
                await close()

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until the rollout ended (scripts and tests; the page polls `state` instead)."""
        if self.thread is not None:
            self.thread.join(timeout_s)


def store_plays(store: Store, plays: list[Play]) -> list[str]:
    """Write each finished play as a run of kind `playground` with its config, task and rollout; a play
    that was cancelled or gave no result is left out. The run's row goes last, already finished: a reader
    never sees a playground run without its rollout. Returns the run ids written."""
    written, commit = [], git_sha()
    for play in plays:
        if play.result is None or play.failure or play.cancelled:
            continue
        task = play.request.task
        config = play.config.model_copy(update={"tasks": [task.task_id], "run_name": RUN_NAME})
        if not play.graded:
            store.write_tasks([TaskRecord(task_id=task.task_id, benchmark=play.request.benchmark, split="typed",
                                          question=task.question)])
        else:  # the task's row, so Rollouts shows its question and reference beside the rollout
            store.write_tasks([r for r in play.records if r.task_id == task.task_id])
        store.write_trajectories([play.result.store_item()])
        variant = {"preference": ",".join(f"{k}={v:g}" for k, v in play.preference.as_dict().items() if v),
                   "max_turns": config.max_turns[0], "instruction": play.preference.instruction}
        store.write_run(RunRecord(
            run_id=play.request.run_id, kind="playground", name=RUN_NAME, benchmark=play.request.benchmark,
            orchestrator=config.orchestrator,
            config_json=json.dumps({**config.model_dump(mode="json"), "variant": variant,
                                    "playground": {"typed_question": None if play.graded else task.question}}),
            toolkit_json=play.toolkit_json, pricing=config.pricing, git_sha=commit, started_at=play.started_at,
            finished_at=utcnow(), status="finished"))
        written.append(play.request.run_id)
    return written
