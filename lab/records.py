"""Pydantic records that mirror the DuckDB tables column for column (see `lab.store.schema`).

Why records and tables share one shape: the harness, the trainer, the notebooks and the app all read
and write the same rows, and a field added here without a migration fails loudly in tests.
Do not reorder fields: tables and records must list the same columns in the same order (a test checks).
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def git_sha() -> str:
    """Short commit of the lab checkout that produced a run (`RunRecord.git_sha`), or '' outside git."""
    try:
        here = Path(__file__).resolve().parent
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True,
                              timeout=5)
        return done.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


RunKind = Literal["eval", "train", "synth", "playground"]
RunStatus = Literal["running", "finished", "failed", "interrupted"]
#: How a rollout ended: an answer; no answer within the turn or wall-clock limit; an error (policy or
#: grader); or cut by the run's budget before it could finish (not a result: resumes re-run it).
TrajectoryStatus = Literal["answered", "no_answer", "error", "cut"]
#: Why a training rollout was left out of the gradient (paper §3.3): a malformed tool call (`format`), no
#: valid final answer (`invalid`), or a group whose rewards barely differ (`homogeneous`, std < 0.1).
FilterReason = Literal["format", "invalid", "homogeneous"]


class RunRecord(BaseModel):
    """One evaluation, training or synthesis run."""

    run_id: str = Field(description="Unique id, e.g. `eval-20261130-0642-3f9a`.")
    kind: RunKind = Field(description="eval, train, synth or playground (a rollout played live in the dashboard).")
    name: str = Field("", description="Human name given with --run-name.")
    config_json: str = Field("{}", description="The full run config as JSON, to rebuild the run.")
    toolkit_json: str = Field("{}", description="The toolkit (specs with prices) the run used.")
    pricing: str = Field("default", description="Pricing the costs were computed with.")
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    status: RunStatus = "running"
    git_sha: str = Field("", description="Commit of the lab that produced the run.")
    orchestrator: str = Field("", description="Orchestrator policy, e.g. `scripted:cheapest-first`.")
    benchmark: str = Field("", description="Benchmark the run evaluated or trained on.")


class RunShardRecord(BaseModel):
    """One shard's part of a run that several processes or machines share (`orchestra eval --shard i/N`, the
    ranks of a training's periodic evaluation): the run is finished when every one of its N shards is."""

    run_id: str
    shard: int = Field(description="1-based index of this shard among `shards`.")
    shards: int = Field(description="How many shards the run's tasks x samples are split into.")
    status: RunStatus = "running"
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None


class TaskRecord(BaseModel):
    """One benchmark task as the lab saw it."""

    benchmark: str
    task_id: str
    split: str = "test"
    domain: str = ""
    question: str = ""
    answer_json: str = Field("null", description="Reference answer (or golden actions) as JSON.")
    meta_json: str = Field("{}", description="Anything else the loader read (difficulty, sources...).")


class TrajectoryRecord(BaseModel):
    """One rollout of one task: its outcome, totals and training signals."""

    run_id: str
    task_id: str
    sample_idx: int = 0
    train_step: int = Field(0, description="Training step; 0 for evaluation runs.")
    group_id: str = Field("", description="Rollouts of one task under one P form a GRPO group.")
    preference_json: str = Field("{}", description="P as {name: weight}.")
    outcome: float = Field(0.0, description="1 if solved, else 0 (graded).")
    final_answer: str | None = None
    n_turns: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    format_ok: bool = Field(True, description="Every tool call parsed and validated.")
    valid_output: bool = Field(True, description="The trajectory ended in a valid final answer.")
    reward: float | None = None
    advantage: float | None = None
    error: str | None = None
    benchmark: str = ""
    tool_counts_json: str = Field("{}", description="Executed calls per reward feature (tool, or paper-toolkit slot).")
    created_at: datetime = Field(default_factory=utcnow)
    status: TrajectoryStatus = Field("answered",
                                     description="answered, no_answer, error or cut (see TrajectoryStatus).")
    filter_reason: FilterReason | None = Field(
        None, description="Training rollouts: NULL when the row took part in the update, else why it did not.")
    criteria_json: str | None = Field(
        None, description='Per-criterion verdicts of graders that judge several things, e.g. tau2 '
                          '{"db": true, "communicate": true, "actions": false, "nl": null} (null = not judged).')
    exact_correct: bool | None = Field(
        None, description="The model-free grade (exact match, numeric tolerance, choice letter; tau2 and BFCL checks "
                          "without their judge): NULL for cut rollouts and for judged runs logged before schema v6.")
    judge_correct: bool | None = Field(
        None, description="Runs with --judge: the grade under the judge rule (exact match first, then the judge "
                          "model; lab.judge); the outcome follows it. NULL without a judge.")
    judge_cost_usd: float = Field(
        0.0, description="What the judge model's calls cost (steps of kind `judge`); never part of cost_usd.")


class StepRecord(BaseModel):
    """One tool call (or final answer, or malformed output) within a trajectory."""

    run_id: str
    task_id: str
    sample_idx: int = 0
    train_step: int = 0
    turn: int = 0
    call_idx: int = Field(0, description="Index of the call within its turn (turns may hold several).")
    kind: Literal["tool", "answer", "format_error", "user", "judge"] = Field(
        "tool", description="A tool call, the final answer, a malformed output, a simulated user's reply (tau2), or "
                            "a call of the grader's judge model (after the last turn; not the orchestrator's cost).")
    reasoning: str = ""
    tool_name: str | None = None
    model: str | None = Field(None, description="Canonical model id behind an LLM tool, for repricing.")
    arguments_json: str = "{}"
    observation: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None
    started_at: datetime = Field(default_factory=utcnow)
    simulated: bool = False
    prompt: str = Field("", description="Round protocol: the round's user prompt (problem, environment context, "
                                        "instruction); empty under the conversation protocol.")


class ScoringRecord(BaseModel):
    """A re-scoring of a logged run under another preference vector (nothing is overwritten)."""

    scoring_id: str
    run_id: str
    preference_json: str
    created_at: datetime = Field(default_factory=utcnow)
    note: str = ""


class ScoreRecord(BaseModel):
    """One trajectory's reward and advantage under a scoring."""

    scoring_id: str
    run_id: str
    task_id: str
    sample_idx: int
    train_step: int
    reward: float
    advantage: float
    keep: bool


class TrainMetricsRecord(BaseModel):
    """One optimizer step of a training run; metric names are defined once in `trainer.metrics.METRICS`."""

    run_id: str
    step: int = Field(description="Optimizer step (1-based), the `train_step` of the rollouts it trained on.")
    created_at: datetime = Field(default_factory=utcnow)
    metrics_json: str = Field("{}", description="{slash-key metric name: value}, e.g. {\"reward/mean\": 0.4}.")


class TokenTrajectoryRecord(BaseModel):
    """Token ids of one trajectory, or of one round of it, as the trainer consumes them (keyed like
    `TrajectoryRecord`, plus `round_idx`).

    Why a separate record: token lists are large and only training reads them, so analysis queries
    over trajectories never pay for them. Why a round index: under the round protocol each round is its
    own (prompt, completion) training row, so a rollout has one record per round; a conversation rollout
    has one record for the whole conversation, at `round_idx` -1.
    """

    run_id: str
    task_id: str
    sample_idx: int = 0
    train_step: int = 0
    round_idx: int = Field(
        -1, description="Round protocol: the round (`steps.turn`) these tokens were sampled in; -1: a conversation."
    )
    prompt_ids: list[int] = Field(default_factory=list, description="Tokens of the rendered prompt.")
    completion_ids: list[int] = Field(
        default_factory=list, description="Tokens after the prompt: model output and tool observations."
    )
    mask: list[int] = Field(
        default_factory=list, description="Per completion token: 1 if the policy produced it (trained on), else 0."
    )
    logprobs: list[float] = Field(
        default_factory=list, description="Sampling log-probability per completion token (0 where mask is 0)."
    )
    valid: bool | None = Field(
        None, description="Round protocol: whether the round ran a valid call (False: a format error, dropped "
                          "from training or, with format_penalty, trained against itself); None for a conversation."
    )
