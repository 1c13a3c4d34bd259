"""`RunSummary`: what `orchestra eval` prints per run, counted as rollouts finish.

What counts: every rollout that produced a result, including failures (status `error`). Not counted
as results: rollouts whose orchestrator endpoint was unavailable and rollouts the `--judge` model gave
no verdict on; both are named in `errors`, never written, and a resume retries them. Rollouts cut by
`--budget-usd` are counted apart (`cut`) and are no result for accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lab.rollout import RolloutResult


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
    #: Endpoints (a slot's model, the judge, the user) that failed every call of the run, one line each: the
    #: run is then `failed`, whatever its callers fell back to.
    failed_endpoints: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        """Over finished rollouts: cut ones are no result (and unavailable ones were never written)."""
        done = self.trajectories - self.cut
        return self.solved / done if done > 0 else None

    def count(self, result: RolloutResult) -> bool:
        """Add a finished rollout; False for an outage or a missing verdict, which are not written."""
        traj = result.trajectory
        if result.judge_failed:
            self.judge_failed += 1
            if len(self.errors) < 5:
                self.errors.append(f"{traj.task_id}#{traj.sample_idx}: no verdict: {result.judge_failed}")
            return False
        if result.unavailable or traj.status == "error":
            self.unavailable += bool(result.unavailable)
            self.failed += traj.status == "error"
            if len(self.errors) < 5:
                self.errors.append(f"{traj.task_id}#{traj.sample_idx}: {traj.error}")
            if result.unavailable:
                return False
        self.trajectories += 1
        self.cut += traj.status == "cut"
        self.solved += traj.outcome
        self.cost_usd += traj.cost_usd
        self.judge_cost_usd += traj.judge_cost_usd
        self.latency_s += traj.latency_s
        return True

    def stats(self) -> str:
        """The progress bar's live figures: accuracy and cost so far ("" before the first result)."""
        acc = self.accuracy
        judge = f"  judge ${self.judge_cost_usd:.4f}" if self.judge else ""
        return f"acc {acc:.3f}  cost ${self.cost_usd:.4f}{judge}" if acc is not None else ""
