"""The learning curve of a training run: an absolute utility per rollout, on one scale fixed per run.

Why not the Eq. 2 reward: it min-max normalises cost and latency within a group, so the same rollout
scores differently beside other rollouts, and two points of a curve (other groups, other steps) are not
on one scale. The curve's utility divides cost and latency by references fixed once per training run
instead, so a point moves only when the policy's rollouts do:

    U = w_o * solved - w_c * cost / c_ref - w_l * latency / l_ref

with (w_o, w_c, w_l) the rollout's P weights for outcome, compute and latency (tool weights are left
out: they reward calls, not results), and c_ref, l_ref the mean cost and latency per task of the
step-0 evaluation over every instruction (`fixed_scale`). U of a point is a mean over tasks (a task's
samples averaged first, as everywhere in `lab.report.metrics`), with a percentile bootstrap interval
over tasks.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.report.metrics.accuracy import N_RESAMPLES, bootstrap_means

#: The P entries U reads, in the order of `utility`'s weights.
OBJECTIVE_WEIGHTS = ("outcome", "compute", "latency")
#: The scale when the step-0 evaluation spent nothing or took no time (a policy that never made a valid
#: call): one cent and one second, so U is still defined; `CurveScale.basis` says it was used.
FALLBACK_COST_USD = 0.01
FALLBACK_LATENCY_S = 1.0
#: Columns of `learning_curve`.
CURVE_COLUMNS = ["step", "instruction", "accuracy", "cost", "latency", "U", "ci_low", "ci_high", "accuracy_low",
                 "accuracy_high", "n_tasks", "run_id"]


@dataclass(frozen=True)
class CurveScale:
    """The references that put every point of one training run's curve on one scale."""

    c_ref: float  # USD per task
    l_ref: float  # seconds per task
    basis: str    # how they were fixed, for the reader

    def as_dict(self) -> dict[str, float | str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> CurveScale:
        return cls(c_ref=float(values["c_ref"]), l_ref=float(values["l_ref"]), basis=str(values.get("basis", "")))


def check_scale(c_ref: float, l_ref: float) -> None:
    """U divides by both references: each must be a positive number (0, negative or NaN is refused)."""
    for name, value in (("c_ref", c_ref), ("l_ref", l_ref)):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if isinstance(value, bool) or not (number > 0 and np.isfinite(number)):
            raise LabInputError(f"learning curve: {name} must be a positive number (the scale of U), got {value!r}")


def utility(solved: object, cost_usd: object, latency_s: object, weights: object, c_ref: float,
            l_ref: float) -> np.ndarray:
    """U per rollout. `solved`, `cost_usd`, `latency_s`: (N,); `weights`: (N, 3) or (3,), the columns
    w_o, w_c, w_l. Pure numpy: the same numbers for the same rollouts, whichever others are scored.

    >>> utility([1, 0], [0.02, 0.0], [10.0, 5.0], [1.0, 1.0, 0.5], c_ref=0.01, l_ref=10.0).tolist()
    [-1.5, -0.25]
    """
    check_scale(c_ref, l_ref)
    solved_, cost, latency = (np.asarray(x, dtype=float) for x in (solved, cost_usd, latency_s))
    w = np.broadcast_to(np.asarray(weights, dtype=float), (len(solved_), 3))   # (N, 3)
    return w[:, 0] * solved_ - w[:, 1] * cost / c_ref - w[:, 2] * latency / l_ref


def objective_weights(preference_json: pd.Series) -> np.ndarray:
    """(N, 3): each rollout's logged P weights for outcome, compute and latency (0 where P has none)."""
    parsed = [json.loads(text or "{}") for text in preference_json]
    return np.array([[float(p.get(name, 0.0)) for name in OBJECTIVE_WEIGHTS] for p in parsed], dtype=float).reshape(
        len(parsed), 3)


def fixed_scale(trajs: pd.DataFrame, basis: str = "step 0") -> CurveScale:
    """c_ref and l_ref from one evaluation point's trajectories (every instruction's run): the mean cost
    and latency per task, a task's samples averaged first and every (run, task) weighing alike. A mean
    that is not positive falls back to `FALLBACK_COST_USD` / `FALLBACK_LATENCY_S`, said in `basis`."""
    if trajs.empty:
        raise LabInputError(f"learning curve: no {basis} rollouts to fix the scale of U from")
    tasks = trajs.groupby(["run_id", "task_id"]).agg(cost=("cost_usd", "mean"), latency=("latency_s", "mean"))
    cost, latency = float(tasks.cost.mean()), float(tasks.latency.mean())
    notes = [f"mean per task of the {basis} evaluation ({len(tasks)} run x task)"]
    if not cost > 0:
        cost = FALLBACK_COST_USD
        notes.append(f"it spent nothing, so c_ref = ${FALLBACK_COST_USD}")
    if not latency > 0:
        latency = FALLBACK_LATENCY_S
        notes.append(f"it took no time, so l_ref = {FALLBACK_LATENCY_S} s")
    return CurveScale(c_ref=cost, l_ref=latency, basis="; ".join(notes))


def learning_curve(trajs: pd.DataFrame, points: pd.DataFrame, scale: CurveScale, n_resamples: int = N_RESAMPLES,
                   seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """One row per evaluation point: `points` has run_id, step, instruction (one eval run each); `trajs`
    their trajectories. Columns (`CURVE_COLUMNS`): step, instruction, accuracy (mean over tasks of the
    solved share), cost (US cents per task), latency (seconds per task), U with its bootstrap interval
    over tasks (ci_low, ci_high), accuracy's (accuracy_low, accuracy_high), n_tasks and the run's id. A
    point without trajectories yet is left out."""
    rows = []
    for point in points.itertuples():
        mine = trajs[trajs.run_id == point.run_id]
        if mine.empty:
            continue
        u = utility(mine.outcome, mine.cost_usd, mine.latency_s, objective_weights(mine.preference_json),
                    scale.c_ref, scale.l_ref)
        tasks = (mine.assign(U=u).groupby("task_id")
                 .agg(solved=("outcome", "mean"), cost=("cost_usd", "mean"), latency=("latency_s", "mean"),
                      U=("U", "mean")))
        values = tasks.U.to_numpy(float)   # (T,)
        quantiles = [(1 - level) / 2, (1 + level) / 2]
        low, high = np.quantile(bootstrap_means(values, n_resamples, seed), quantiles)
        acc_low, acc_high = np.quantile(bootstrap_means(tasks.solved.to_numpy(float), n_resamples, seed), quantiles)
        rows.append([int(point.step), str(point.instruction), float(tasks.solved.mean()),
                     100.0 * float(tasks.cost.mean()), float(tasks.latency.mean()), float(values.mean()),
                     float(low), float(high), float(acc_low), float(acc_high), len(tasks), point.run_id])
    curve = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    return curve.sort_values(["step", "instruction"], kind="stable").reset_index(drop=True)
