"""Accuracy, cost and latency per run, and paired tests between runs (paper §4, Table 3's accuracy).

Definitions: `lab.report.metrics` (the task is the unit; seeds per run or pair).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: Bootstrap / permutation draws (enough for a stable 95% interval and p-values down to ~5e-4).
N_RESAMPLES = 2000


# ---------------------------------------------------------------- per task, accuracy, cost


def per_task(trajs: pd.DataFrame) -> pd.DataFrame:
    """One row per (run_id, task_id): mean outcome, grade by exact match and by judge (NaN where a sample
    has none), cost, judge cost and latency over its samples, and their count."""
    trajs = trajs.assign(**{column: _grade(trajs, column) for column in ("exact_correct", "judge_correct")},
                         judge_cost_usd=trajs.judge_cost_usd if "judge_cost_usd" in trajs else 0.0)
    grouped = trajs.groupby(["run_id", "task_id"], sort=False)
    out = grouped.agg(accuracy=("outcome", "mean"), accuracy_exact=("exact_correct", _mean_if_all),
                      accuracy_judge=("judge_correct", _mean_if_all), cost_usd=("cost_usd", "mean"),
                      judge_cost_usd=("judge_cost_usd", "mean"), latency_s=("latency_s", "mean"),
                      n_samples=("outcome", "size"))
    return out.reset_index()


def _grade(trajs: pd.DataFrame, column: str) -> pd.Series:
    """A nullable boolean grade column as floats (1, 0, NaN); all NaN when the frame lacks it."""
    if column not in trajs:
        return pd.Series(np.nan, index=trajs.index, dtype=float)
    return trajs[column].map({True: 1.0, False: 0.0}).astype(float)


def _mean_if_all(values: pd.Series) -> float:
    """Mean of a task's samples, NaN unless every sample was graded so (no half-graded tasks)."""
    return float(values.mean()) if values.notna().all() and len(values) else np.nan


def bootstrap_means(values: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Means of `n_resamples` resamples (with replacement) of `values` (T,); shape (n_resamples,)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_resamples, len(values)))   # (B, T)
    return values[idx].mean(axis=1)


def accuracy_table(trajs: pd.DataFrame, run_ids: Sequence[str], n_resamples: int = N_RESAMPLES,
                   seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Accuracy per run with a percentile bootstrap interval over tasks.

    Columns: run_id, n_tasks, n_trajectories, n_errors, accuracy, ci_low, ci_high, accuracy_exact,
    accuracy_judge. `n_errors` counts trajectories whose rollout failed (status `error`: a policy or
    grader exception); they count as wrong answers in the accuracy and are listed so a failure is never
    silent. accuracy_exact / accuracy_judge: the mean over tasks of the grade by exact match / by the judge
    rule, NaN unless every task of the run has it (a run without `--judge` has no judge grade). A run
    without trajectories gets NaN; one task gives a zero-width interval.
    """
    tasks = per_task(trajs)
    errors = trajs.status == "error" if "status" in trajs else pd.Series(False, index=trajs.index)
    rows = []
    for run_id in run_ids:
        mine_tasks = tasks[tasks.run_id == run_id]
        acc = mine_tasks.accuracy.to_numpy(float)   # (T,)
        mine = trajs.run_id == run_id
        n_traj, n_err = int(mine.sum()), int((mine & errors).sum())
        if len(acc) == 0:
            rows.append([run_id, 0, n_traj, n_err, np.nan, np.nan, np.nan, np.nan, np.nan])
            continue
        lo, hi = np.quantile(bootstrap_means(acc, n_resamples, seed), [(1 - level) / 2, (1 + level) / 2])
        rows.append([run_id, len(acc), n_traj, n_err, float(acc.mean()), float(lo), float(hi),
                     _mean_if_all(mine_tasks.accuracy_exact), _mean_if_all(mine_tasks.accuracy_judge)])
    return pd.DataFrame(rows, columns=["run_id", "n_tasks", "n_trajectories", "n_errors", "accuracy", "ci_low",
                                       "ci_high", "accuracy_exact", "accuracy_judge"])


def cost_latency_table(trajs: pd.DataFrame, run_ids: Sequence[str]) -> pd.DataFrame:
    """Mean cost (cents) and latency (s) per task, and totals over every trajectory of each run; the
    judge's cost per task and in total in columns of their own (`judge_*`, 0 without a judge), never
    in `cost_*`: it is what grading cost, not what the orchestrator spent."""
    tasks = per_task(trajs)
    rows = []
    for run_id in run_ids:
        mine, all_mine = tasks[tasks.run_id == run_id], trajs[trajs.run_id == run_id]
        judge_total = float(all_mine.judge_cost_usd.sum()) if "judge_cost_usd" in all_mine else 0.0
        rows.append([run_id, len(mine), 100 * mine.cost_usd.mean(), mine.latency_s.mean(),
                     float(all_mine.cost_usd.sum()), float(all_mine.latency_s.sum()),
                     100 * mine.judge_cost_usd.mean(), judge_total])
    return pd.DataFrame(rows, columns=["run_id", "n_tasks", "cost_cents_per_task", "latency_s_per_task",
                                       "total_cost_usd", "total_latency_s", "judge_cents_per_task", "judge_total_usd"])


# ---------------------------------------------------------------- paired tests


def paired_comparisons(trajs: pd.DataFrame, run_ids: Sequence[str], n_resamples: int = N_RESAMPLES,
                       seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Every pair (A, B) of runs, A listed before B, compared on the tasks both ran.

    diff = mean over shared tasks of (acc_A - acc_B), positive when A is better. ci_low/ci_high: paired
    percentile bootstrap of that mean (tasks resampled, both runs together). p_value: two-sided paired
    sign-flip permutation test of mean diff = 0 (each task's difference negated with probability 1/2),
    p = (1 + #{|flipped mean| >= |observed|}) / (1 + n_resamples). McNemar's exact test (a_only, b_only
    = tasks only A / only B solved; binomial test on the discordant tasks) only when every shared task
    has one binary outcome per run; else those columns are NaN.
    """
    columns = ["run_a", "run_b", "n_shared", "acc_a", "acc_b", "diff", "ci_low", "ci_high", "p_value",
               "a_only", "b_only", "mcnemar_p"]
    by_run = {run: frame.set_index("task_id") for run, frame in per_task(trajs).groupby("run_id", sort=False)}
    empty = pd.DataFrame(columns=["accuracy", "n_samples"])
    rows = []
    for i, run_a in enumerate(run_ids):
        for run_b in run_ids[i + 1:]:
            a, b = by_run.get(run_a, empty), by_run.get(run_b, empty)
            shared = a.index.intersection(b.index, sort=False)
            if len(shared) == 0:
                rows.append([run_a, run_b, 0] + [np.nan] * (len(columns) - 3))
                continue
            a, b = a.loc[shared], b.loc[shared]
            d = a.accuracy.to_numpy(float) - b.accuracy.to_numpy(float)          # (T,)
            lo, hi = np.quantile(bootstrap_means(d, n_resamples, seed), [(1 - level) / 2, (1 + level) / 2])
            rows.append([run_a, run_b, len(d), float(a.accuracy.mean()), float(b.accuracy.mean()), float(d.mean()),
                         float(lo), float(hi), sign_flip_p(d, n_resamples, seed), *_mcnemar(a, b)])
    return pd.DataFrame(rows, columns=columns)


def ci_text(ci_low: float, ci_high: float) -> str:
    """An interval as tables print it: `[0.23, 0.53]`; "" without one."""
    return "" if pd.isna(ci_low) or pd.isna(ci_high) else f"[{ci_low:.2f}, {ci_high:.2f}]"


def with_verdicts(paired: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """`paired_comparisons`' table with runs by `names` and a verdict column after them (`ci_verdict`):
    what reports and the dashboard's Compare show."""
    out = paired.assign(run_a=paired.run_a.map(names), run_b=paired.run_b.map(names))
    out.insert(2, "verdict", [ci_verdict(lo, hi) for lo, hi in zip(out.ci_low, out.ci_high)])
    return out


def ci_verdict(ci_low: float, ci_high: float, a: str = "A", b: str = "B") -> str:
    """What a paired difference a - b with this 95% CI says: "A better", "B better" (by the names given),
    "not significant" (the interval includes 0), or "no shared task" (no interval)."""
    if pd.isna(ci_low) or pd.isna(ci_high):
        return "no shared task"
    if ci_low <= 0 <= ci_high:
        return "not significant"
    return f"{a} better" if ci_low > 0 else f"{b} better"


def sign_flip_p(d: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = 0) -> float:
    """Two-sided p-value of mean(d) = 0 under random sign flips of the paired differences d (T,)."""
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, len(d)))   # (B, T)
    observed = abs(d.mean())
    flipped = np.abs((signs * d).mean(axis=1))
    # The tolerance keeps floating-point noise from splitting ties (e.g. d all zero gives p = 1).
    return float((1 + np.count_nonzero(flipped >= observed - 1e-12)) / (1 + n_resamples))


def _mcnemar(a: pd.DataFrame, b: pd.DataFrame) -> list[float]:
    """[a_only, b_only, exact p] on binary single-sample outcomes; NaNs otherwise."""
    binary = a.accuracy.isin([0.0, 1.0]).all() and b.accuracy.isin([0.0, 1.0]).all()
    if not (binary and (a.n_samples == 1).all() and (b.n_samples == 1).all()):
        return [np.nan, np.nan, np.nan]
    from scipy.stats import binomtest  # scipy.stats takes ~1 s to import; only reports need it

    a_only = int(((a.accuracy == 1) & (b.accuracy == 0)).sum())
    b_only = int(((a.accuracy == 0) & (b.accuracy == 1)).sum())
    p = binomtest(a_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
    return [a_only, b_only, float(p)]
