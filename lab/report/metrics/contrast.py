"""Instruction following, measured: how differently a model acts under two instructions that weigh
different things, and how much training changed that difference (`orchestra train evidence`).

Why a contrast and not U: U charges cost against a fixed reference, so a model that got cheaper under
*every* instruction gains U under a cost-saving one whatever it does with the instruction. What the paper
claims is that a preference-aware orchestrator acts on what each instruction asks. So for a pair of
instructions, `baseline` (accuracy-only: "money is no object") and `asking` (cost-saving: "keep the bill
low"), one model's **contrast** is the paired log ratio

    contrast = mean over tasks of  ln cost(baseline, t, k) - ln cost(asking, t, k)

sample k of task t under either instruction drawing the same random numbers (the rollout seed), samples
of a task averaged before tasks. It is 0 for a model that ignores the instruction, > 0 for one that
spends less when asked to, and blind to a saving made under both. The claim of RL is
trained contrast - start contrast > 0, with a paired bootstrap over tasks (the same resampled tasks for
both models and all four runs). The same holds for latency under a speed pair (`column="latency_s"`).

Beside it, what the asking instruction gave up: the accuracy difference asking - baseline per model,
and the share of calls each tool (or slot) took, asking - baseline (`tool_share_contrast`).

A rollout that spent nothing counts as `FLOOR[column]`, so its log is finite; one rollout's floor moves
a task's log ratio but never flips a model that spends under both instructions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.preference import HELD_OUT
from lab.report.metrics.accuracy import N_RESAMPLES
from lab.report.metrics.paired import instruction_kind

#: The least value a rollout's cost (USD) or latency (s) counts as in a log ratio: a thousandth of a cent,
#: a millisecond.
FLOOR = {"cost_usd": 1e-5, "latency_s": 1e-3}
#: Columns of `instruction_contrast`: one row per measure. start / trained: each model's contrast (the log
#: ratio, or accuracy asking - baseline), delta: trained - start; each with its 95% CI.
CONTRAST_COLUMNS = ["measure", "start", "start_low", "start_high", "trained", "trained_low", "trained_high",
                    "delta", "ci_low", "ci_high", "n_tasks", "samples"]
_KEYS = ["task_id", "sample_idx"]


@dataclass(frozen=True)
class InstructionRuns:
    """One model's two runs of a pair: under the baseline instruction and under the one asking for less."""

    baseline: str
    asking: str


def _paired_by_key(trajs: pd.DataFrame, runs: dict[str, str]) -> pd.DataFrame:
    """(task, sample) rows holding `column` of every run in `runs` (role -> run id), joined on the key;
    refused in one line when a run is empty, logs a key twice, or the runs' keys differ."""
    frames, keys = {}, {}
    for role, run_id in runs.items():
        rows = trajs[trajs.run_id == run_id]
        if rows.empty:
            raise LabInputError(f"run {run_id} ({role}) has no trajectories to contrast")
        if rows.duplicated(_KEYS).any():
            raise LabInputError(f"run {run_id} ({role}) logs a (task, sample) twice: its rollouts cannot be paired")
        frames[role], keys[role] = rows.set_index(_KEYS), set(zip(rows.task_id, rows.sample_idx))
    first = next(iter(runs))
    for role in runs:
        if keys[role] != keys[first]:
            raise LabInputError(f"runs {runs[first]} ({first}) and {runs[role]} ({role}) ran different (task, sample) "
                                "sets: a contrast compares every run on the same tasks and samples")
    return pd.concat({role: frame for role, frame in frames.items()}, axis=1)


def _interval(per_task: np.ndarray, picks: np.ndarray, level: float) -> tuple[float, float, float]:
    """The mean of (T,) per-task values and its percentile interval over the resampled tasks `picks` (B, T)."""
    low, high = np.quantile(per_task[picks].mean(axis=1), [(1 - level) / 2, (1 + level) / 2])
    return float(per_task.mean()), float(low), float(high)


def _per_task(trajs: pd.DataFrame, runs: InstructionRuns, model: str, column: str) -> pd.DataFrame:
    """One model's per-task contrast: rollouts paired by (task, sample) between its two runs, the log ratio
    of `column` (baseline over asking) and the accuracy difference (asking - baseline), samples averaged."""
    joined = _paired_by_key(trajs, {f"{model}, baseline": runs.baseline, f"{model}, asking": runs.asking})
    floor = FLOOR[column]
    per_rollout = pd.DataFrame({
        "ratio": (np.log(joined[(f"{model}, baseline", column)].clip(lower=floor))
                  - np.log(joined[(f"{model}, asking", column)].clip(lower=floor))),
        "accuracy": joined[(f"{model}, asking", "outcome")] - joined[(f"{model}, baseline", "outcome")],
    })
    grouped = per_rollout.groupby(level="task_id")
    return grouped.mean().assign(samples=grouped.size())


def instruction_contrast(trajs: pd.DataFrame, start: InstructionRuns, trained: InstructionRuns,
                         column: str = "cost_usd", n_resamples: int = N_RESAMPLES, seed: int = 0,
                         level: float = 0.95) -> pd.DataFrame:
    """Each model's contrast between its two instructions and trained - start (module docstring), as
    `CONTRAST_COLUMNS` rows: `log ratio` of `column` (baseline over asking) and `accuracy` (asking -
    baseline). A model's two runs must hold the same (task, sample) keys (its rollouts are paired by seed);
    the two models must answer the same tasks, and may differ in samples per task (a greedy baseline
    runs one), since each model's samples are averaged per task before the models are compared. One set
    of resampled tasks serves every interval; `samples` is the trained model's per task."""
    if column not in FLOOR:
        raise LabInputError(f"contrast column {column!r}: expected one of {', '.join(FLOOR)}")
    before, after = _per_task(trajs, start, "start", column), _per_task(trajs, trained, "trained", column)
    if set(before.index) != set(after.index):
        raise LabInputError(f"runs {start.baseline} (start) and {trained.baseline} (trained) answered different "
                            "tasks: a contrast compares both models on the same tasks")
    after = after.loc[before.index]
    n_tasks = len(before)
    picks = np.random.default_rng(seed).integers(0, n_tasks, size=(n_resamples, n_tasks))   # (B, T), shared
    rows = []
    for measure, name in (("ratio", f"log {column} ratio"), ("accuracy", "accuracy")):
        a, b = before[measure].to_numpy(float), after[measure].to_numpy(float)
        rows.append([name, *_interval(a, picks, level), *_interval(b, picks, level), *_interval(b - a, picks, level),
                     n_tasks, float(after.samples.mean())])
    return pd.DataFrame(rows, columns=CONTRAST_COLUMNS)


def tool_share_contrast(calls: pd.DataFrame, trajs: pd.DataFrame, start: InstructionRuns, trained: InstructionRuns,
                        n_resamples: int = N_RESAMPLES, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Per tool (or slot): the share of a rollout's calls it took, asking - baseline, for each model and
    trained - start, with one bootstrap over tasks. `calls` is `queries.tool_calls_df` of the four runs; a
    rollout without calls has no shares and counts as 0 for every tool. Columns: tool_name and
    `CONTRAST_COLUMNS` without `measure`."""
    runs = {"start, baseline": start.baseline, "start, asking": start.asking,
            "trained, baseline": trained.baseline, "trained, asking": trained.asking}
    joined = _paired_by_key(trajs, runs)
    index = joined.index
    role_of = {run_id: role for role, run_id in runs.items()}
    mine = calls[calls.run_id.isin(role_of)].assign(role=lambda f: f.run_id.map(role_of))
    if mine.empty:   # no run called a tool: no shares to compare
        return pd.DataFrame(columns=["tool_name", *CONTRAST_COLUMNS[1:]])
    totals = mine.groupby(["role", *_KEYS]).n_calls.transform("sum")
    shares = mine.assign(share=mine.n_calls / totals).pivot_table(
        index=_KEYS, columns=["tool_name", "role"], values="share", aggfunc="sum", fill_value=0.0)
    n_tasks = index.get_level_values("task_id").nunique()
    picks = np.random.default_rng(seed).integers(0, n_tasks, size=(n_resamples, n_tasks))
    rows = []
    for tool in sorted(shares.columns.get_level_values("tool_name").unique()):
        by_role = shares[tool].reindex(index=index, columns=list(runs), fill_value=0.0).fillna(0.0)
        per_task = pd.DataFrame({model: by_role[f"{model}, asking"] - by_role[f"{model}, baseline"]
                                 for model in ("start", "trained")}).groupby(level="task_id").mean()
        a, b = per_task["start"].to_numpy(float), per_task["trained"].to_numpy(float)
        rows.append([tool, *_interval(a, picks, level), *_interval(b, picks, level), *_interval(b - a, picks, level),
                     n_tasks, len(index) / n_tasks])
    return pd.DataFrame(rows, columns=["tool_name", *CONTRAST_COLUMNS[1:]])


#: The pairs a learning curve contrasts, as (pair, baseline kind, asking kind, column); kinds are
#: `lab.report.metrics.paired.instruction_kind`'s.
CURVE_PAIRS = (("cost-saving vs accuracy-only", "accuracy-only", "cost-saving", "cost_usd"),
               ("speed vs accuracy-only", "accuracy-only", "speed", "latency_s"))
#: Columns of `contrast_curve`: per evaluated step and pair, `CONTRAST_COLUMNS` with "start" the first
#: evaluated step's contrast and "trained" this step's.
CONTRAST_CURVE_COLUMNS = ["step", "pair", *CONTRAST_COLUMNS]


def contrast_curve(trajs: pd.DataFrame, points: pd.DataFrame, n_resamples: int = N_RESAMPLES,
                   seed: int = 0) -> pd.DataFrame:
    """Instruction following along a training run: at each step the curve evaluated (`points`: run_id,
    step, instruction, one finished eval run each, its rollouts in `trajs`), the policy's contrast between
    an accuracy-only and a cost-saving instruction (and a speed one, where the curve has them), and that
    step's contrast minus the first evaluated step's, with one paired bootstrap over tasks
    (`instruction_contrast`; the first step stands for the start). An instruction's kind is read from the
    one P its rollouts logged (held-out pairs, a P per task, have none); among several of a kind the first
    by label. A step whose runs cannot be paired with the first step's (other tasks or samples, e.g. a run
    resumed with another `lab_eval_limit`) is left out and named in `attrs["skipped"]`, so a page shows
    the rest and says what is missing. Empty (with `CONTRAST_CURVE_COLUMNS`) when the curve lacks a pair,
    or has one step."""
    kinds: dict[str, str | None] = {}
    for point in points.sort_values("instruction", kind="stable").itertuples():
        logged = trajs.preference_json[trajs.run_id == point.run_id].unique()
        if point.instruction != HELD_OUT and len(logged) == 1:
            kinds.setdefault(point.instruction, instruction_kind(json.loads(logged[0] or "{}")))
    runs = {(int(p.step), p.instruction): p.run_id for p in points.itertuples()}
    keys = {run_id: set(zip(mine.task_id, mine.sample_idx)) for run_id, mine in trajs.groupby("run_id")}
    steps = sorted({step for step, _ in runs})
    rows, skipped = [], []
    for pair, baseline_kind, asking_kind, column in CURVE_PAIRS:
        baseline = next((label for label, kind in kinds.items() if kind == baseline_kind), None)
        asking = next((label for label, kind in kinds.items() if kind == asking_kind), None)
        if baseline is None or asking is None:
            continue
        evaluated = [step for step in steps if (step, baseline) in runs and (step, asking) in runs]
        pairable = []
        first_tasks = {task for task, _ in keys.get(runs[evaluated[0], baseline], set())} if evaluated else set()
        for step in evaluated:
            mine = [keys.get(runs[step, label], set()) for label in (baseline, asking)]
            if mine[0] and mine[0] == mine[1] and {task for task, _ in mine[0]} == first_tasks:
                pairable.append(step)
            else:
                skipped.append(f"{pair}, step {step}: its runs hold other tasks or samples than step {evaluated[0]}'s")
        if len(pairable) < 2 or pairable[0] != evaluated[0]:
            continue
        first_runs = InstructionRuns(runs[pairable[0], baseline], runs[pairable[0], asking])
        for step in pairable:
            now = InstructionRuns(runs[step, baseline], runs[step, asking])
            rows.append(instruction_contrast(trajs, first_runs, now, column=column, n_resamples=n_resamples,
                                             seed=seed).assign(step=step, pair=pair))
    frame = (pd.concat(rows, ignore_index=True)[CONTRAST_CURVE_COLUMNS] if rows
             else pd.DataFrame(columns=CONTRAST_CURVE_COLUMNS))
    frame.attrs["skipped"] = skipped
    return frame
