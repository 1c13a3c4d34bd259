"""Preference scores of runs (paper Table 3) and paired preference and cost comparisons.

The features, groups and scores are `lab.scoring`'s, so the report, `orchestra rescore --across` and the
dashboard's steering page give the same numbers. Definitions: `lab.report.metrics`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from lab import scoring
from lab.errors import LabInputError
from lab.report.metrics.accuracy import N_RESAMPLES, bootstrap_means
from lab.scoring import FeatureFrame, feature_names, shared_tasks


def preference_scores(trajs: pd.DataFrame, run_ids: Sequence[str], tools: Sequence[str], P: np.ndarray) -> pd.DataFrame:
    """Preference-aware score per run (paper Table 3) on shared tasks, `lab.scoring.preference_scores`.

    `tools` fixes the feature columns (every tool any compared run used) and P has len(tools) + 3
    entries. All trajectories of all runs on a task are normalised together, so scores compare the runs
    of one report only. Columns: run_id, preference_score, n_tasks, n_trajectories.
    """
    frame = FeatureFrame.of(trajs[trajs.run_id.isin(list(run_ids))], tools)
    return scoring.preference_scores(frame, run_ids, dict(zip(feature_names(tools), np.asarray(P, dtype=float))))


def paired_preference_scores(trajs: pd.DataFrame, run_a: str, run_b: str, tools: Sequence[str],
                             n_resamples: int = N_RESAMPLES, seed: int = 0, level: float = 0.95) -> dict[str, float]:
    """Preference score of two runs on their shared tasks, each trajectory under its own logged P (e.g. the
    held-out pair its task was shown), with a paired bootstrap over tasks of the difference A - B.

    Per task, both runs' trajectories are normalised together (Eq. 2 with the task as the group, as in
    `preference_scores`); a run's task score is the mean reward of its trajectories on that task. Only
    `tools` and the three objectives are weighed, whatever else a logged P names."""
    tasks = shared_tasks(trajs, [run_a, run_b])
    rows = trajs[trajs.run_id.isin([run_a, run_b]) & trajs.task_id.isin(tasks)]
    if rows.empty:
        raise LabInputError(f"runs {run_a} and {run_b} share no task")
    names = feature_names(tools)
    frame = FeatureFrame.of(rows, tools)
    P = [{n: w for n, w in json.loads(p).items() if n in names} for p in rows.preference_json]   # one P per row
    rewards = scoring.task_rewards(frame, P)                                                            # (B,)
    per_task = pd.DataFrame({"run_id": rows.run_id.to_numpy(), "task_id": rows.task_id.to_numpy(), "r": rewards}) \
        .groupby(["task_id", "run_id"]).r.mean().unstack()                                                   # (T, 2)
    d = (per_task[run_a] - per_task[run_b]).to_numpy(float)
    lo, hi = np.quantile(bootstrap_means(d, n_resamples, seed), [(1 - level) / 2, (1 + level) / 2])
    return {"score_a": float(per_task[run_a].mean()), "score_b": float(per_task[run_b].mean()), "diff": float(d.mean()),
            "ci_low": float(lo), "ci_high": float(hi), "n_tasks": len(d)}


def paired_cost_saving(trajs: pd.DataFrame, run_a: str, run_b: str, n_resamples: int = N_RESAMPLES, seed: int = 0,
                       level: float = 0.95) -> dict[str, float]:
    """How much less run A spends per task than run B on their shared tasks: saving = 1 - cost_A / cost_B
    (total over tasks), with a paired bootstrap over tasks."""
    tasks = shared_tasks(trajs, [run_a, run_b])
    rows = trajs[trajs.run_id.isin([run_a, run_b]) & trajs.task_id.isin(tasks)]
    if rows.empty:
        raise LabInputError(f"runs {run_a} and {run_b} share no task")
    cost = rows.groupby(["task_id", "run_id"]).cost_usd.mean().unstack()                                        # (T, 2)
    a, b = cost[run_a].to_numpy(float), cost[run_b].to_numpy(float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(a), size=(n_resamples, len(a)))
    with np.errstate(divide="ignore", invalid="ignore"):
        savings = 1 - a[picks].sum(axis=1) / b[picks].sum(axis=1)
    lo, hi = np.nanquantile(savings, [(1 - level) / 2, (1 + level) / 2])
    return {"cost_a": float(a.mean()), "cost_b": float(b.mean()),
            "saving": float(1 - a.sum() / b.sum()) if b.sum() else float("nan"),
            "ci_low": float(lo), "ci_high": float(hi), "n_tasks": len(a)}
