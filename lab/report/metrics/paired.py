"""Paired deltas of a trained model against the model it started from, and how many tasks x samples
they need (`orchestra train evidence`).

Both models answer the same tasks with the same sample seeds (sample k of task t draws the same random
numbers under either model: `lab.rollout.policy.sampling_seed`), so a per-task difference is the
models' and not the tasks'. Pairing is by key, (task_id, sample_idx), never by row order: two runs whose
(task, sample) sets differ are refused unless the caller asks for their intersection (`intersect`), and a
task's samples are averaged before the bootstrap resamples tasks (as everywhere in `lab.report.metrics`).

Per instruction, trained - start of:

- **accuracy**: the mean over tasks of the solved share;
- **cost**: the ratio of cost per task, trained / start - 1 (a percentage change; `paired_cost_saving`
  with the runs swapped, so its bootstrap is the same);
- **latency**: seconds per task;
- **U**: the learning curve's absolute utility (`lab.report.metrics.curve.utility`), each rollout under
  its own logged P, on one scale (c_ref, l_ref) the caller fixes once, from the start model's runs over
  every instruction (`fixed_scale`), never per instruction: a per-group scale would move U with the group.

**Power.** With d_tk the paired difference of sample k of task t, the mean over T tasks of K samples each
has variance (s2_between + s2_within / K) / T, so the 95% half-width is about
z * sqrt((s2_between + s2_within / K) / T), z = 1.96. `variance_components` estimates both terms from a
run (the within-task term from the spread of a task's samples, the between-task term from the spread of
the task means less the within term's share), `needed_size` inverts the formula. The cost ratio R is
linearised first (the delta method): d_tk = (cost_trained - R * cost_start) / mean cost_start, whose
mean's half-width is R's.
"""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.report.metrics.accuracy import N_RESAMPLES, bootstrap_means
from lab.report.metrics.curve import CurveScale, objective_weights, utility
from lab.report.metrics.preference import paired_cost_saving

#: A rollout's key in both runs.
PAIR_KEYS = ["task_id", "sample_idx"]
#: The measures of `paired_deltas`, in order; cost is a relative change, the others differences.
MEASURES = ("accuracy", "cost", "latency", "U")
#: Columns of `paired_deltas`. start / trained: accuracy as a share, cost in US cents per task, latency in
#: seconds per task, U per task; delta: trained - start (cost: trained / start - 1).
DELTA_COLUMNS = ["measure", "start", "trained", "delta", "ci_low", "ci_high", "half_width", "n_tasks", "samples"]
#: Columns of `power_table`.
POWER_COLUMNS = ["measure", "s2_between", "s2_within", "half_width", "target", "reached", "needed_tasks",
                 "needed_samples"]
_VALUES = {"outcome": "accuracy", "cost_usd": "cost", "latency_s": "latency"}


def paired_rows(trajs: pd.DataFrame, start: str, trained: str, intersect: bool = False,
                same_preference: bool = True) -> pd.DataFrame:
    """One row per (task, sample) both runs ran, joined on the key: task_id, sample_idx and, per run
    (suffix `_start` / `_trained`), outcome, cost_usd, latency_s, preference_json.

    Refused (one line): a run without rollouts, a (task, sample) logged twice in one run, different
    (task, sample) sets unless `intersect` (then the shared ones, at least one), and, with
    `same_preference`, a pair whose two rollouts were shown different P (a U delta needs one instruction)."""
    columns = [*PAIR_KEYS, "outcome", "cost_usd", "latency_s", "preference_json"]
    runs = {}
    for role, run_id in (("start", start), ("trained", trained)):
        rows = trajs.loc[trajs.run_id == run_id, columns]
        if rows.empty:
            raise LabInputError(f"run {run_id} ({role}) has no trajectories to pair")
        twice = rows[rows.duplicated(PAIR_KEYS)]
        if not twice.empty:
            task, sample = twice.iloc[0][PAIR_KEYS]
            raise LabInputError(f"run {run_id} logs task {task} sample {sample} twice: its rollouts cannot be paired")
        runs[role] = rows
    keys = {role: set(zip(rows.task_id, rows.sample_idx)) for role, rows in runs.items()}
    if keys["start"] != keys["trained"]:
        only_start, only_trained = len(keys["start"] - keys["trained"]), len(keys["trained"] - keys["start"])
        if not intersect:
            raise LabInputError(f"runs {start} and {trained} ran different (task, sample) sets ({only_start} only in "
                                f"the start's, {only_trained} only in the trained's): run both on the same tasks and "
                                "samples, or compare their shared ones explicitly (intersect=True)")
        if not keys["start"] & keys["trained"]:
            raise LabInputError(f"runs {start} and {trained} share no (task, sample)")
    pairs = runs["start"].merge(runs["trained"], on=PAIR_KEYS, how="inner", suffixes=("_start", "_trained"),
                                validate="one_to_one")
    if same_preference:
        differ = [json.loads(a or "{}") != json.loads(b or "{}")
                  for a, b in zip(pairs.preference_json_start, pairs.preference_json_trained)]
        if any(differ):
            task = pairs.task_id[np.flatnonzero(differ)[0]]
            raise LabInputError(f"runs {start} and {trained} showed task {task} different preferences: a paired "
                                "delta compares the two models under one instruction")
    return pairs


def _utilities(pairs: pd.DataFrame, scale: CurveScale) -> pd.DataFrame:
    """U of every paired rollout, both runs (columns U_start, U_trained), each under its own logged P."""
    out = {}
    for role in ("start", "trained"):
        out[f"U_{role}"] = utility(pairs[f"outcome_{role}"], pairs[f"cost_usd_{role}"], pairs[f"latency_s_{role}"],
                                   objective_weights(pairs[f"preference_json_{role}"]), scale.c_ref, scale.l_ref)
    return pairs.assign(**out)


def _per_task(pairs: pd.DataFrame) -> pd.DataFrame:
    """(T, 8): each task's mean accuracy, cost, latency and U under both runs, samples averaged first."""
    named = {f"{column}_{role}": f"{_VALUES.get(column, column)}_{role}" for column in (*_VALUES, "U")
             for role in ("start", "trained")}
    return pairs.rename(columns=named).groupby("task_id")[list(named.values())].mean()   # sorted, as paired_cost_saving


def paired_deltas(trajs: pd.DataFrame, start: str, trained: str, scale: CurveScale, n_resamples: int = N_RESAMPLES,
                  seed: int = 0, level: float = 0.95, intersect: bool = False) -> pd.DataFrame:
    """Trained - start of accuracy, cost (relative), latency and U on the same tasks and samples, each with
    a paired percentile bootstrap over tasks (`DELTA_COLUMNS`, one row per measure of `MEASURES`). Every
    measure resamples the same tasks (one seed), so the four intervals describe one set of resamples."""
    pairs = _utilities(paired_rows(trajs, start, trained, intersect), scale)
    tasks = _per_task(pairs)
    samples = pairs.groupby("task_id").size()
    n_samples = int(samples.iloc[0]) if samples.nunique() == 1 else float(samples.mean())
    quantiles = [(1 - level) / 2, (1 + level) / 2]
    rows = {}
    for measure in ("accuracy", "latency", "U"):
        a, b = tasks[f"{measure}_start"].to_numpy(float), tasks[f"{measure}_trained"].to_numpy(float)   # (T,)
        low, high = np.quantile(bootstrap_means(b - a, n_resamples, seed), quantiles)
        rows[measure] = [float(a.mean()), float(b.mean()), float((b - a).mean()), float(low), float(high)]
    costs = pd.concat([pd.DataFrame({"run_id": role, "task_id": tasks.index, "cost_usd": tasks[f"cost_{role}"]})
                       for role in ("start", "trained")], ignore_index=True)
    if tasks.cost_start.sum() > 0:
        saving = paired_cost_saving(costs, "trained", "start", n_resamples, seed, level)   # 1 - trained / start
        rows["cost"] = [100 * saving["cost_b"], 100 * saving["cost_a"], -saving["saving"], -saving["ci_high"],
                        -saving["ci_low"]]
    else:   # the start spent nothing: no ratio to take
        rows["cost"] = [0.0, 100 * float(tasks.cost_trained.mean()), np.nan, np.nan, np.nan]
    frame = pd.DataFrame([[m, *rows[m]] for m in MEASURES], columns=DELTA_COLUMNS[:6])
    return frame.assign(half_width=(frame.ci_high - frame.ci_low) / 2, n_tasks=len(tasks), samples=n_samples)


def paired_saving(trajs: pd.DataFrame, run: str, baseline: str, n_resamples: int = N_RESAMPLES, seed: int = 0,
                  level: float = 0.95, column: str = "cost_usd") -> dict[str, float]:
    """`paired_cost_saving` (1 - cost of `run` / cost of `baseline`, e.g. one model under a cost-saving
    instruction against the same model under accuracy-only) once the two runs are checked to hold the
    same tasks and samples: `paired_cost_saving` alone would intersect their tasks silently. `column`
    `latency_s` gives the latency saving the same way (still under the keys `cost_a`, `cost_b`)."""
    paired_rows(trajs, baseline, run, same_preference=False)
    frame = trajs if column == "cost_usd" else trajs.drop(columns="cost_usd").rename(columns={column: "cost_usd"})
    return paired_cost_saving(frame, run, baseline, n_resamples, seed, level)


def paired_differences(trajs: pd.DataFrame, start: str, trained: str, scale: CurveScale,
                       intersect: bool = False) -> pd.DataFrame:
    """Per (task, sample): trained - start of accuracy, latency and U, and the cost ratio's linearised
    difference (cost_trained - R * cost_start) / mean cost_start, R the pooled ratio: what
    `variance_components` splits. Columns: task_id, sample_idx, accuracy, cost, latency, U."""
    pairs = _utilities(paired_rows(trajs, start, trained, intersect), scale)
    mean_start = float(pairs.cost_usd_start.mean())
    ratio = float(pairs.cost_usd_trained.mean()) / mean_start if mean_start > 0 else float("nan")
    return pd.DataFrame({
        "task_id": pairs.task_id, "sample_idx": pairs.sample_idx,
        "accuracy": pairs.outcome_trained - pairs.outcome_start,
        "cost": (pairs.cost_usd_trained - ratio * pairs.cost_usd_start) / mean_start if mean_start > 0 else np.nan,
        "latency": pairs.latency_s_trained - pairs.latency_s_start,
        "U": pairs.U_trained - pairs.U_start,
    })


def pooled_delta(differences: list[pd.DataFrame], column: str = "U", n_resamples: int = N_RESAMPLES, seed: int = 0,
                 level: float = 0.95) -> dict[str, float]:
    """The mean of one column of several instructions' `paired_differences` (the same tasks under each),
    with a bootstrap CI over tasks: a task's instructions and samples are resampled together, since a task
    hard under one instruction is hard under the others. Each instruction weighs the same in a task,
    whatever its number of samples. Keys: delta, ci_low, ci_high, n_tasks."""
    by_instruction = [frame.groupby("task_id")[column].mean() for frame in differences]   # samples first
    per_task = pd.concat(by_instruction).groupby(level=0).mean().to_numpy(float)
    low, high = np.quantile(bootstrap_means(per_task, n_resamples, seed), [(1 - level) / 2, (1 + level) / 2])
    return {"delta": float(per_task.mean()), "ci_low": float(low), "ci_high": float(high), "n_tasks": len(per_task)}


def variance_components(differences: pd.DataFrame, column: str) -> tuple[float, float]:
    """(s2_between, s2_within) of one column of `paired_differences`: s2_within pooled over the tasks'
    samples (NaN when no task has two, so that samples cannot be told from tasks), s2_between the
    variance of the task means less s2_within / K (K the harmonic mean of samples per task), at least 0.
    With s2_within NaN, s2_between is the whole variance of the task means."""
    grouped = differences.groupby("task_id")[column]
    means, counts = grouped.mean(), grouped.size()
    if len(means) < 2:
        raise LabInputError(f"{column}: variance needs at least 2 tasks, got {len(means)}")
    spread = float(((differences[column] - grouped.transform("mean")) ** 2).sum())
    dof = int((counts - 1).sum())
    within = spread / dof if dof else float("nan")
    harmonic = len(counts) / float((1.0 / counts).sum())
    of_means = float(means.var(ddof=1))
    between = of_means if math.isnan(within) else max(of_means - within / harmonic, 0.0)
    return between, within


def z_value(level: float = 0.95) -> float:
    """The two-sided normal quantile of `level` (1.96 at 0.95)."""
    return NormalDist().inv_cdf((1 + level) / 2)


def expected_half_width(between: float, within: float, tasks: int, samples: int, level: float = 0.95) -> float:
    """z * sqrt((s2_between + s2_within / K) / T): the half-width a mean over T tasks x K samples reaches.
    NaN within counts as 0 (it cannot be told from the between term, which then holds all of it)."""
    within = 0.0 if math.isnan(within) else within
    return z_value(level) * math.sqrt((between + within / samples) / tasks)


def needed_size(between: float, within: float, target: float, max_tasks: int, max_samples: int = 64,
                level: float = 0.95) -> tuple[int, int] | None:
    """Tasks x samples (T <= `max_tasks`, K <= `max_samples`) whose expected half-width is at most
    `target`: the fewest samples per task with which `max_tasks` tasks reach it, then the fewest tasks at
    that K. Tasks first, because only tasks narrow the between-task term and a between-task estimate of
    0 from a pilot is noise, not a licence for 20 tasks x 17 samples. None when even `max_tasks` x
    `max_samples` does not reach it (the between-task spread alone is too wide: only more tasks help)."""
    if target <= 0:
        raise LabInputError(f"target half-width must be positive, got {target}")
    if math.isnan(between):
        return None
    z2, within = z_value(level) ** 2, (0.0 if math.isnan(within) else within)
    for samples in range(1, max_samples + 1):
        tasks = max(2, math.ceil(z2 * (between + within / samples) / target ** 2 - 1e-9))
        if tasks <= max_tasks:
            return tasks, samples
    return None


def power_table(differences: pd.DataFrame, targets: dict[str, float], max_tasks: int, level: float = 0.95,
                max_samples: int = 64) -> pd.DataFrame:
    """Per measure with a target half-width: its variance components, the half-width this run's size
    gives by the formula, whether it reaches the target, and the size that would (`needed_size`;
    `POWER_COLUMNS`; NaN needed size when none within the limits does)."""
    counts = differences.groupby("task_id").size()
    tasks, samples = len(counts), int(round(len(counts) / float((1.0 / counts).sum())))
    rows = []
    for measure, target in targets.items():
        between, within = variance_components(differences, measure)
        width = expected_half_width(between, within, tasks, samples, level)
        size = needed_size(between, within, target, max_tasks, max_samples, level)
        rows.append([measure, between, within, width, target, width <= target,
                     *(size if size else (np.nan, np.nan))])
    return pd.DataFrame(rows, columns=POWER_COLUMNS)


def verdict(ci_low: float, ci_high: float, holds_at: float, fails_below: float) -> str:
    """A behaviour check on an interval: `holds` when the whole CI is at or above `holds_at`, `fails`
    when the whole CI is below `fails_below`, else `not shown` (the data cannot tell at this size)."""
    if ci_low >= holds_at:
        return "holds"
    if ci_high < fails_below:
        return "fails"
    return "not shown"


def instruction_kind(weights: dict[str, float]) -> str | None:
    """What a P asks for, for the behaviour checks: `accuracy-only` (outcome alone), `cost-saving` (outcome
    and compute, nothing else), `speed` (latency weighed more than compute, no tool weight);
    None for anything else (tool preferences, balanced P)."""
    named = {name: float(w) for name, w in weights.items() if float(w) != 0}
    objectives = {"outcome", "compute", "latency"}
    if set(named) - objectives or named.get("outcome", 0) <= 0:
        return None
    compute, latency = named.get("compute", 0.0), named.get("latency", 0.0)
    if not compute and not latency:
        return "accuracy-only"
    if compute and not latency:
        return "cost-saving"
    if latency > compute:
        return "speed"
    return None
