"""Scoring one generation batch: Eq. 2 rewards per group, Eq. 3 advantages, and the three filters.

A thin adapter over `lab.scoring.FeatureFrame` (nothing is reimplemented: the columns, the group label
and the arithmetic are the ones `orchestra rescore`, the report and the app use): rows are gathered from every
rank first, because Eq. 2 normalises within a whole group and a group may span ranks. Filters, in the
order they are checked (paper §3.3):

- `format`: a malformed tool call (`lab.filters.format_consistent`);
- `invalid`: no valid final answer (`lab.filters.has_valid_output`);
- `homogeneous`: the row's group reward std (over rows passing the first two) is below the threshold.

`estimator="rft"` (rejection-sampling fine-tuning, a fair baseline at equal rollouts, not GRPO): the same
rewards, but each group keeps only its best solved rollout (highest R, the first among ties) with advantage
1 and drops the rest (`not best`), so the update imitates the best of each group the way the warm start
imitates scripted routes.

Rows failing `format` or `invalid` take no part in their group's min-max or std, and get R = 0, A = 0;
homogeneous rows keep their R and get A = 0. No filtered row carries gradient (the trainer zeroes its
loss mask). Each group uses its example's P over the toolkit's full feature list: features outside the
example's tool subset are 0 for every row, a constant column, which Eq. 2 maps to 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lab.filters import has_valid_output
from lab.records import TrajectoryRecord
from lab.reward import STD_THRESHOLD, RewardScale
from lab.scoring import FeatureFrame, feature_names, group_label, tool_counts


@dataclass(frozen=True)
class RowFeatures:
    """What the reward needs of one rollout (small, so it crosses ranks cheaply)."""

    group_id: str
    tool_counts: dict[str, int]
    outcome: float
    cost_usd: float
    latency_s: float
    format_ok: bool
    valid_output: bool
    preference: tuple[float, ...]   # P over `lab.scoring.feature_names(features)`

    @classmethod
    def of(cls, trajectory: TrajectoryRecord, features: list[str],
           preference: dict[str, float], format_ok: bool) -> RowFeatures:
        """A rollout's features: its calls of the toolkit's `features` (the only columns P weighs), its GRPO
        group (`lab.scoring.group_label`) and P in column order (every name must be given)."""
        counts = {k: v for k, v in tool_counts(trajectory.tool_counts_json).items() if k in features}
        weights = tuple(preference[name] for name in feature_names(features))
        group = group_label(trajectory.group_id, trajectory.task_id, trajectory.train_step)
        return cls(group_id=group, tool_counts=counts, outcome=float(trajectory.outcome),
                   cost_usd=trajectory.cost_usd, latency_s=trajectory.latency_s, format_ok=format_ok,
                   valid_output=has_valid_output(trajectory), preference=weights)


@dataclass(frozen=True)
class GroupScores:
    rewards: np.ndarray       # (B,) Eq. 2
    advantages: np.ndarray    # (B,) Eq. 3, 0 where filtered
    keep: np.ndarray          # (B,) bool: the row carries gradient
    reasons: list[str | None]  # filter reason per row, None when kept
    passed: np.ndarray        # (B,) bool: passed the format and invalid-output filters


def best_of_group(rows: list[RowFeatures], rewards: np.ndarray, passed: np.ndarray) -> np.ndarray:
    """(B,) bool: each group's best solved row among those that passed the filters (highest reward, the first
    among ties); a group without a solved row keeps none."""
    best: dict[str, int] = {}
    for i, row in enumerate(rows):
        if passed[i] and row.outcome == 1.0 and (row.group_id not in best or rewards[i] > rewards[best[row.group_id]]):
            best[row.group_id] = i
    keep = np.zeros(len(rows), dtype=bool)
    keep[list(best.values())] = True
    return keep


def score_rows(rows: list[RowFeatures], features: list[str], std_threshold: float = STD_THRESHOLD,
               filter_format: bool = True, filter_invalid: bool = True,
               scale: RewardScale | None = None, estimator: str = "grpo") -> GroupScores:
    """Rewards, advantages, keep mask and filter reasons of a whole generation batch; `scale`: cost and
    latency on one scale for the run (`lab.reward.RewardScale`) instead of min-max within the group;
    `estimator`: `grpo` (Eq. 3) or `rft` (each group's best solved row, advantage 1)."""
    fails_format = np.array([filter_format and not r.format_ok for r in rows], dtype=bool)
    fails_invalid = np.array([filter_invalid and not r.valid_output for r in rows], dtype=bool) & ~fails_format
    passed = ~(fails_format | fails_invalid)
    # an outcome without a valid answer is 0 by construction; kept only when that filter is off
    frame = FeatureFrame.from_counts([r.tool_counts for r in rows], [r.outcome for r in rows],
                                     [r.cost_usd for r in rows],
                                     [r.latency_s for r in rows], features,
                                     pd.DataFrame({"group": [r.group_id for r in rows]}))
    # (B, n + 3): each row its example's P
    P = np.array([r.preference for r in rows], dtype=float).reshape(len(rows), -1)
    R, A, keep = frame.grpo(P, std_threshold, passed, scale)
    if estimator == "rft":
        keep = best_of_group(rows, R, passed)
        A = keep.astype(float)
    dropped = "not best" if estimator == "rft" else "homogeneous"
    reasons: list[str | None] = []
    for i in range(len(rows)):
        reasons.append("format" if fails_format[i] else "invalid" if fails_invalid[i]
                       else None if keep[i] else dropped)
    return GroupScores(rewards=R, advantages=A, keep=keep, reasons=reasons, passed=passed)

