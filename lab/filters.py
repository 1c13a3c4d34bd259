"""The paper's trajectory-level training filters: format consistency and invalid output (§3.3).

Why filter at all: GRPO turns every kept trajectory into a gradient. A trajectory with a malformed tool
call rewards or punishes text the environment never executed as intended, and one without a valid final
answer has an outcome that says nothing about the routing that led to it; both add noise, so the paper
drops them before the update. The third filter, homogeneity (groups whose reward std is below 0.1), acts
on groups rather than single trajectories and lives with the advantages in `lab.reward.group_advantages`.

A trajectory failing several filters is counted once, under the first that fails, in the order
`format`, `invalid`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from lab.errors import LabInputError
from lab.records import StepRecord, TrajectoryRecord

#: Identifies one rollout across the trajectory and step tables.
TrajectoryKey = tuple[str, str, int, int]

#: Filter reasons, in the order they are checked.
REASONS = ("format", "invalid")


class FilterReport(BaseModel):
    """What survived the filters and why the rest did not."""

    kept: list[TrajectoryRecord] = Field(description="Trajectories that pass every filter, in input order.")
    dropped: dict[str, int] = Field(description="Count of dropped trajectories per reason (every reason listed).")
    dropped_keys: dict[str, list[TrajectoryKey]] = Field(
        description="Keys (run_id, task_id, sample_idx, train_step) of dropped trajectories per reason."
    )

    @property
    def total(self) -> int:
        return len(self.kept) + sum(self.dropped.values())


def trajectory_key(record: TrajectoryRecord | StepRecord) -> TrajectoryKey:
    """(run_id, task_id, sample_idx, train_step): the columns a step shares with its trajectory."""
    return (record.run_id, record.task_id, record.sample_idx, record.train_step)


def steps_by_trajectory(steps: Iterable[StepRecord]) -> dict[TrajectoryKey, list[StepRecord]]:
    """Group step records by the trajectory they belong to, keeping their order."""
    grouped: dict[TrajectoryKey, list[StepRecord]] = {}
    for step in steps:
        grouped.setdefault(trajectory_key(step), []).append(step)
    return grouped


def format_consistent(traj: TrajectoryRecord, steps: Sequence[StepRecord] | None = None) -> bool:
    """True when every tool call of the trajectory parsed and validated.

    The rollout sets `format_ok`; the steps, when given, are checked too, because a logged
    `format_error` step is the evidence and a rescoring run may only have the step table to go on.
    """
    if not traj.format_ok:
        return False
    key = trajectory_key(traj)
    for step in steps or ():
        if trajectory_key(step) != key:
            raise LabInputError(
                f"step {trajectory_key(step)} turn {step.turn} does not belong to trajectory {key}"
            )
        if step.kind == "format_error":
            return False
    return True


def has_valid_output(traj: TrajectoryRecord) -> bool:
    """True when the trajectory ended in a valid, non-blank final answer."""
    return traj.valid_output and traj.final_answer is not None and traj.final_answer.strip() != ""


def apply_filters(
    trajs: Iterable[TrajectoryRecord],
    steps_by_key: dict[TrajectoryKey, list[StepRecord]] | None = None,
) -> FilterReport:
    """Keep trajectories that pass the format-consistency and invalid-output filters.

    `steps_by_key` maps `trajectory_key(...)` to that trajectory's steps (see `steps_by_trajectory`);
    trajectories without an entry are judged on their own flags.
    """
    kept: list[TrajectoryRecord] = []
    dropped_keys: dict[str, list[TrajectoryKey]] = {reason: [] for reason in REASONS}
    for traj in trajs:
        key = trajectory_key(traj)
        steps = (steps_by_key or {}).get(key)
        if not format_consistent(traj, steps):
            dropped_keys["format"].append(key)
        elif not has_valid_output(traj):
            dropped_keys["invalid"].append(key)
        else:
            kept.append(traj)
    return FilterReport(
        kept=kept,
        dropped={reason: len(keys) for reason, keys in dropped_keys.items()},
        dropped_keys=dropped_keys,
    )
