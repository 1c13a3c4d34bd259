"""Which way a training run's updates pushed, per kind of instruction: the data behind "why did (or did
not) the instruction-following contrast move" (docs/training.md).

A policy-gradient update moves the policy along sum_i A_i grad log pi(tau_i) within each group, so what
it rewards is read from the logged rollouts alone: a group's **pull** on a quantity x is

    pull_x = mean over the group's rows of  A_i * (x_i - mean over the group of x)

negative on ln(cost) when the update favours the group's cheaper rollouts, positive on the outcome when
it favours its solved ones. Filtered rows carry A = 0 and pull nothing. For preference-aware RL to teach
an orchestrator to follow an instruction, the cost pull under a cost-saving P must be below the pull
under an accuracy-only P (where the reward ignores cost): when both pull the same way the update teaches
thrift (or extravagance) under every instruction, and the contrast cannot grow.

Groups are the unit: each kind's mean pull has a bootstrap interval over its groups. Groups that pulled
nothing (every row filtered, or a homogeneous group) count in `groups` but not in the means.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from lab.report.metrics.accuracy import N_RESAMPLES
from lab.report.metrics.contrast import FLOOR
from lab.report.metrics.paired import instruction_kind

#: Columns of `update_pull`: one row per kind of instruction (`instruction_kind`, or `other`).
PULL_COLUMNS = ["kind", "groups", "informative", "cost_pull", "cost_low", "cost_high", "outcome_pull",
                "outcome_low", "outcome_high"]


def _kind(preference_json: str) -> str:
    weights = json.loads(preference_json or "{}")
    return instruction_kind(weights) or "other"


def group_pulls(trajs: pd.DataFrame) -> pd.DataFrame:
    """Per GRPO group of a training run's trajectories (`queries.trajectories_df` of a train run): its kind
    of instruction, whether any row carried an advantage, and its pulls on ln(cost) and on the outcome."""
    rows = trajs[trajs.advantage.notna()].assign(
        log_cost=lambda f: np.log(f.cost_usd.clip(lower=FLOOR["cost_usd"])),
        kind=lambda f: f.preference_json.map(_kind))
    keys = ["train_step", "group_id"]
    centred = rows[["log_cost", "outcome"]] - rows.groupby(keys)[["log_cost", "outcome"]].transform("mean")
    pulls = rows[keys + ["kind"]].assign(cost=rows.advantage * centred.log_cost,
                                         outcome=rows.advantage * centred.outcome,
                                         informative=rows.advantage != 0)
    return pulls.groupby(keys).agg(kind=("kind", "first"), informative=("informative", "any"),
                                   cost_pull=("cost", "mean"), outcome_pull=("outcome", "mean")).reset_index()


def update_pull(trajs: pd.DataFrame, n_resamples: int = N_RESAMPLES, seed: int = 0,
                level: float = 0.95) -> pd.DataFrame:
    """Per kind of instruction: groups, the share that carried an advantage, and the mean pull of the
    informative ones on ln(cost) and on the outcome, each with a percentile bootstrap over groups."""
    groups = group_pulls(trajs)
    out = []
    for kind, mine in groups.groupby("kind", sort=True):
        informative = mine[mine.informative]
        row: list[object] = [kind, len(mine), float(mine.informative.mean())]
        for column in ("cost_pull", "outcome_pull"):
            values = informative[column].to_numpy(float)
            if len(values) == 0:
                row += [np.nan, np.nan, np.nan]
                continue
            picks = np.random.default_rng(seed).integers(0, len(values), size=(n_resamples, len(values)))
            low, high = np.quantile(values[picks].mean(axis=1), [(1 - level) / 2, (1 + level) / 2])
            row += [float(values.mean()), float(low), float(high)]
        out.append(row)
    return pd.DataFrame(out, columns=PULL_COLUMNS)
