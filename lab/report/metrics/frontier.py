"""The cost-accuracy Pareto frontier and its area, router metrics (PGR, CPT), turn-budget curves and
re-priced costs (paper Figs. 5-6, Table 4).

Definitions: `lab.report.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lab.report.metrics.accuracy import cost_latency_table
from lab.scoring import TRAJECTORY_KEY

# ---------------------------------------------------------------- Pareto frontier and its area


def pareto_points(accuracy: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """Runs as (cost cents per task, accuracy) points with `on_frontier`: True when no other run is at
    least as cheap and at least as accurate while strictly better in one of the two."""
    points = accuracy[["run_id", "accuracy"]].merge(costs[["run_id", "cost_cents_per_task"]], on="run_id")
    c, a = points.cost_cents_per_task.to_numpy(float), points.accuracy.to_numpy(float)
    ok = np.isfinite(c) & np.isfinite(a)
    # dominated[i, j]: point j dominates point i.   (N, N)
    dominated = ((c[None, :] <= c[:, None]) & (a[None, :] >= a[:, None])
                 & ((c[None, :] < c[:, None]) | (a[None, :] > a[:, None])))
    dominated &= ok[None, :]
    return points.assign(on_frontier=ok & ~dominated.any(axis=1))


def frontier_auc(points: pd.DataFrame, cost_range_cents: tuple[float, float] | None = None,
                 cost_floor_cents: float = 1e-4) -> pd.DataFrame:
    """Normalised area under the cost-accuracy Pareto frontier, one row.

    Definition: let f(c) = the best accuracy of any run costing at most c cents per task (a step
    function that only rises). With x = log10(cost) and [x_min, x_max] the log costs of the cheapest
    and the dearest compared run, AUC = (1 / (x_max - x_min)) * integral of f over [x_min, x_max]: the
    mean best accuracy reachable across the budget range, in [0, 1]. Log cost because runs differ by
    orders of magnitude. f is 0 below the cheapest run. With the default range the dearest run counts
    only from the right end, so it adds nothing unless some run is cheaper; pass a common
    `cost_range_cents` (lo, hi) to compare the frontiers of different run sets on one budget range.
    When the range has zero width, AUC = f there. Costs below `cost_floor_cents` (e.g. free runs) are
    raised to it so the log is defined.
    Columns: auc, cost_min_cents, cost_max_cents, n_runs, n_frontier.
    """
    columns = ["auc", "cost_min_cents", "cost_max_cents", "n_runs", "n_frontier"]
    valid = points[np.isfinite(points.cost_cents_per_task) & np.isfinite(points.accuracy)]
    if valid.empty:
        return pd.DataFrame([[np.nan, np.nan, np.nan, 0, 0]], columns=columns)
    cost = np.maximum(valid.cost_cents_per_task.to_numpy(float), cost_floor_cents)
    order = np.argsort(cost, kind="stable")
    x, best = np.log10(cost[order]), np.maximum.accumulate(valid.accuracy.to_numpy(float)[order])  # f at each x
    lo, hi = cost_range_cents if cost_range_cents else (cost.min(), cost.max())
    x_lo, x_hi = np.log10(max(lo, cost_floor_cents)), np.log10(max(hi, cost_floor_cents))
    if x_hi <= x_lo:
        auc = float(_step_value(x, best, x_lo))
    else:
        # f is constant on [x_k, x_{k+1}); clip those pieces to the range and sum width * height.
        edges = np.clip(np.r_[x, np.inf], x_lo, x_hi)                      # (N + 1,)
        auc = float(np.sum(best * np.diff(edges)) / (x_hi - x_lo))
    n_frontier = int(valid.on_frontier.sum()) if "on_frontier" in valid else 0
    return pd.DataFrame([[auc, float(10 ** x_lo), float(10 ** x_hi), len(valid), n_frontier]], columns=columns)


def _step_value(x: np.ndarray, best: np.ndarray, at: float) -> float:
    """f(at) of the frontier step function: best accuracy among runs with log cost <= at (0 if none)."""
    k = np.searchsorted(x, at, side="right")
    return float(best[k - 1]) if k else 0.0


# ---------------------------------------------------------------- router metrics


def router_table(accuracy: pd.DataFrame, bias: pd.DataFrame, weak: str | None = None,
                 strong: str | None = None) -> pd.DataFrame:
    """Performance gap recovered (RouteLLM's PGR) against the share of model calls to the strongest model.

    PGR = (acc_run - acc_weak) / (acc_strong - acc_weak): 0 at the weak reference, 1 at the strong one.
    The references are the runs named `weak` / `strong`, by default the least / most accurate run in
    the report. NaN when the two references are equally accurate.
    Columns: run_id, accuracy, strongest_share, pgr, weak_run, strong_run.
    """
    frame = accuracy[["run_id", "accuracy"]].merge(bias[["run_id", "strongest_share"]], on="run_id", how="left")
    ranked = frame.dropna(subset=["accuracy"])
    if ranked.empty:
        return frame.assign(pgr=np.nan, weak_run=None, strong_run=None)
    weak = weak or ranked.run_id[ranked.accuracy.idxmin()]
    strong = strong or ranked.run_id[ranked.accuracy.idxmax()]
    acc = frame.set_index("run_id").accuracy
    gap = acc.get(strong, np.nan) - acc.get(weak, np.nan)
    pgr = (frame.accuracy - acc.get(weak, np.nan)) / gap if gap else np.nan
    return frame.assign(pgr=pgr, weak_run=weak, strong_run=strong)


def call_performance_threshold(router: pd.DataFrame, level: float = 0.5) -> float:
    """CPT(level): the smallest strongest-model share among runs with PGR >= level (NaN if none)."""
    hits = router[(router.pgr >= level - 1e-9) & router.strongest_share.notna()]   # 0.3/0.6 may land at 0.4999...
    return float(hits.strongest_share.min()) if len(hits) else np.nan


# ---------------------------------------------------------------- turn budgets and repricing


def turn_budget_curves(run_info: pd.DataFrame, accuracy: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """Accuracy and cost against max_turns for runs that differ only in their turn budget (paper Fig. 6).

    `run_info.curve` is a label shared by runs whose config is equal apart from max_turns; a curve needs
    two or more distinct budgets. Columns: curve, run_id, max_turns, accuracy, ci_low, ci_high,
    cost_cents_per_task; sorted by curve then max_turns.
    """
    columns = ["curve", "run_id", "max_turns", "accuracy", "ci_low", "ci_high", "cost_cents_per_task"]
    info = run_info.dropna(subset=["max_turns", "curve"])
    info = info[info.groupby("curve").max_turns.transform("nunique") >= 2]
    if info.empty:
        return pd.DataFrame(columns=columns)
    frame = (info[["curve", "run_id", "max_turns"]]
             .merge(accuracy[["run_id", "accuracy", "ci_low", "ci_high"]], on="run_id")
             .merge(costs[["run_id", "cost_cents_per_task"]], on="run_id"))
    frame["max_turns"] = frame.max_turns.astype(int)
    return frame.sort_values(["curve", "max_turns"], kind="stable").reset_index(drop=True)[columns]


def repriced_table(trajs: pd.DataFrame, step_costs: pd.DataFrame, run_ids: Sequence[str], pricing: str) -> pd.DataFrame:
    """Logged vs re-priced cost per task (cents) and in total (USD) per run (paper Table 4).

    `step_costs` holds run_id, task_id, sample_idx, train_step, cost_usd, new_cost_usd per step
    (`lab.report.api` prices them with `lab.repricing.reprice_steps`' rules: steps without a model keep
    their cost). A trajectory's new cost is its logged cost plus the change of its steps.
    """
    delta = ((step_costs.new_cost_usd - step_costs.cost_usd).groupby([step_costs[k] for k in TRAJECTORY_KEY])
             .sum().rename("delta"))
    joined = trajs.join(delta, on=TRAJECTORY_KEY)
    joined = joined.assign(new_cost_usd=joined.cost_usd + joined.delta.fillna(0.0))
    logged = cost_latency_table(joined, run_ids)
    new = cost_latency_table(joined.assign(cost_usd=joined.new_cost_usd), run_ids)
    return pd.DataFrame({
        "run_id": list(run_ids), "pricing": pricing,
        "logged_cents_per_task": logged.cost_cents_per_task, "repriced_cents_per_task": new.cost_cents_per_task,
        "logged_total_usd": logged.total_cost_usd, "repriced_total_usd": new.total_cost_usd,
        "change_pct": 100 * (new.total_cost_usd / logged.total_cost_usd.where(logged.total_cost_usd > 0) - 1),
    })
