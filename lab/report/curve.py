"""`learning_curve_df(store, train_run_id)`: a training run's learning curve, read from the store.

The trainer evaluates its live policy on one fixed set of tasks x instructions at step 0, every
`lab_eval_steps` and after the last step (`trainer.curve`); each (step, instruction) is a `kind='eval'`
run linked to the train run (`train_run_id`, `train_step` in its config). This module finds those runs,
names each by its instruction, and computes every point with `lab.report.metrics.curve` on the run's
one scale (c_ref, l_ref), which the trainer stores in the train run's `config_json` under
`curve_scale` once the step-0 evaluation is done.

    curve = learning_curve_df(store, "cpu-tiny-1a2b3c4d5e")
    curve[curve.instruction == "Be accurate but keep the bill as low as you can."][["step", "U", "ci_low"]]
    curve.attrs["scale"]        # {"c_ref": ..., "l_ref": ..., "basis": ...}
    contrast_curve_df(store, "cpu-tiny-1a2b3c4d5e")   # instruction following per step, minus the first step's

The contrast curve comes first where a curve is shown (the Training page, the demo): U rises for any
cheaper policy, while the contrast moves only when the policy acts on what the instruction asks.
"""

from __future__ import annotations

import json

import pandas as pd

from lab.report.metrics.accuracy import N_RESAMPLES
from lab.report.metrics.contrast import CONTRAST_CURVE_COLUMNS, contrast_curve
from lab.report.metrics.curve import CURVE_COLUMNS, CurveScale, fixed_scale, learning_curve
from lab.store import Store, queries

__all__ = ["SCALE_KEY", "contrast_curve_df", "curve_points", "curve_scale", "instruction_label", "learning_curve_df"]

#: Where the trainer stores the scale in the train run's `config_json`.
SCALE_KEY = "curve_scale"


def instruction_label(config: dict) -> str:
    """What an evaluation run was told, as the train config lists it: a pair's wording (the run's
    `preference_instruction`), else its `--preference` value (a P string or `held-out`)."""
    variant = config.get("variant") or {}
    return str(config.get("preference_instruction") or variant.get("preference") or "default P")


def curve_points(store: Store, train_run_id: str) -> pd.DataFrame:
    """The finished evaluation runs of a training run as curve points: run_id, step, instruction. One still
    running (or cut short) is left out: a point over part of the tasks would move when the rest arrive."""
    linked = queries.linked_evals_df(store, train_run_id)
    linked = linked[linked.status == "finished"]
    if linked.empty:
        return pd.DataFrame(columns=["run_id", "step", "instruction"])
    configs = queries.runs_df(store).set_index("run_id").config_json.map(lambda text: json.loads(text or "{}"))
    return pd.DataFrame({"run_id": linked.run_id, "step": linked.train_step.astype(int),
                         "instruction": [instruction_label(configs[r]) for r in linked.run_id]})


def curve_scale(store: Store, train_run_id: str, points: pd.DataFrame | None = None) -> CurveScale | None:
    """The run's scale: the one stored with the train run; else (a run still in its step-0 evaluation, or
    logged before curves existed) the same rule on its earliest evaluated step; None when nothing is
    evaluated yet."""
    runs = queries.runs_df(store).set_index("run_id")
    if train_run_id in runs.index:
        stored = json.loads(runs.config_json[train_run_id] or "{}").get(SCALE_KEY)
        if stored:
            return CurveScale.from_dict(stored)
    points = curve_points(store, train_run_id) if points is None else points
    if points.empty:
        return None
    first = int(points.step.min())
    trajs = queries.trajectories_df(store, list(points.run_id[points.step == first]))
    return fixed_scale(trajs, basis=f"step {first}") if not trajs.empty else None


def learning_curve_df(store: Store, train_run_id: str, n_resamples: int = N_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """The curve of `train_run_id`: one row per (step, instruction) with step, instruction, accuracy,
    cost (cents per task), latency (seconds per task), U, ci_low, ci_high (95% bootstrap over tasks),
    n_tasks and run_id; `attrs["scale"]` holds the c_ref, l_ref and basis every point used. Empty
    (with those columns) while nothing is evaluated."""
    points = curve_points(store, train_run_id)
    scale = curve_scale(store, train_run_id, points)
    if scale is None:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    trajs = queries.trajectories_df(store, list(points.run_id))
    curve = learning_curve(trajs, points, scale, n_resamples=n_resamples, seed=seed)
    curve.attrs["scale"] = scale.as_dict()
    return curve


def contrast_curve_df(store: Store, train_run_id: str, n_resamples: int = N_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """Instruction following along `train_run_id` (`lab.report.metrics.contrast.contrast_curve`): per
    evaluated step and pair of instructions, the policy's contrast and that step minus the first
    evaluated step, with 95% CIs over the fixed tasks. Empty while fewer than two steps are evaluated or
    when the curve's instructions hold no pair."""
    points = curve_points(store, train_run_id)
    if points.empty:
        return pd.DataFrame(columns=CONTRAST_CURVE_COLUMNS)
    trajs = queries.trajectories_df(store, list(points.run_id))
    return contrast_curve(trajs, points, n_resamples=n_resamples, seed=seed)
