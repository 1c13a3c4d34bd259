"""Report metrics over logged runs: pure functions from DataFrames to DataFrames (paper §4, Tables 3-4, 15, Figs. 3-6).

Nothing here reads the store or draws: `lab.report.api` loads the frames, these functions compute, and
`lab.report.figures` / `lab.report.tables` present. Inputs are the store's own frames
(`queries.trajectories_df`, `queries.tool_calls_df`) plus two small frames that `api` derives from the
runs' JSON columns: *tools* (run_id, tool_name, model, input_per_mtok, output_per_mtok, simulated) and
*run info* (run_id, orchestrator, max_turns, curve).

Definitions used throughout:

- **Task, not trajectory, is the unit.** Samples of one task are averaged first (`per_task`), so a task
  run 8 times weighs as much as one run once; bootstrap resamples tasks.
- **Accuracy** = mean over tasks of the per-task mean outcome (with `--judge`, the judge rule's grade).
  Accuracy by exact match / by judge likewise over `exact_correct` / `judge_correct`. **Cost / latency
  per task** likewise; costs are reported in US cents, as the paper does. A judge's cost is its own
  column, never part of the orchestrator's cost.
- Paired statistics use only the tasks both runs ran.
- Every random procedure takes a `seed` and draws from a fresh generator per run or pair, so numbers do
  not depend on which other runs are in the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.reward import feature_matrix, preference_rewards, preference_score

#: Bootstrap / permutation draws (enough for a stable 95% interval and p-values down to ~5e-4).
N_RESAMPLES = 2000
#: Suffix that marks simulated tools (`sim:*`) in tables and legends.
SIMULATED_SUFFIX = " (simulated)"
#: Model families for delegation bias (paper Fig. 3): id prefix -> family.
FAMILIES = (("gpt-5", "gpt-5"), ("qwen", "qwen"), ("llama", "llama"), ("claude", "claude"))


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
    return pd.DataFrame(rows, columns=["run_id", "n_tasks", "n_trajectories", "n_errors", "accuracy", "ci_low", "ci_high",
                                       "accuracy_exact", "accuracy_judge"])


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


# ---------------------------------------------------------------- tool calls and delegation bias


#: Orchestrators that read the grader: reports must never show them as baselines.
PRIVILEGED = {"scripted:oracle": "privileged upper bound"}


def orchestrator_label(orchestrator: str) -> str:
    """Display name of an orchestrator: the oracle says it is a privileged upper bound.

    >>> orchestrator_label("scripted:oracle"), orchestrator_label("scripted:cheapest-first")
    ('scripted:oracle (privileged upper bound)', 'scripted:cheapest-first')
    """
    note = PRIVILEGED.get(orchestrator)
    return f"{orchestrator} ({note})" if note else orchestrator


def tool_label(name: str) -> str:
    """Display name of a tool: `sim:*` tools carry " (simulated)" so no one mistakes them for real calls.

    >>> tool_label("sim:gpt-5"), tool_label("local_search")
    ('sim:gpt-5 (simulated)', 'local_search')
    """
    return f"{name}{SIMULATED_SUFFIX}" if name.startswith("sim:") else name


def tool_call_table(tool_calls: pd.DataFrame, trajs: pd.DataFrame, run_ids: Sequence[str],
                    tools: pd.DataFrame | None = None) -> pd.DataFrame:
    """Calls per tool per task (paper Table 15) and each tool's share of the run's calls (Fig. 4).

    calls_per_task averages over tasks of the per-task mean over samples, counting 0 for trajectories
    that did not call the tool. share = the tool's calls / all tool calls of the run (sums to 1).
    `tools` (the report's tools frame) names the model behind a paper-toolkit slot in its label.
    Columns: run_id, tool_name, tool_label, simulated, calls, calls_per_task, share.
    """
    behind = {} if tools is None else {
        (r.run_id, r.tool_name): (r.model, bool(r.simulated)) for r in tools.itertuples() if r.model}
    columns = ["run_id", "tool_name", "tool_label", "simulated", "calls", "calls_per_task", "share"]
    key = ["run_id", "task_id", "sample_idx", "train_step"]
    rows = []
    for run_id in run_ids:
        calls = tool_calls[tool_calls.run_id == run_id]
        keys = trajs.loc[trajs.run_id == run_id, key]
        if calls.empty or keys.empty:
            continue
        wide = calls.pivot_table(index=key, columns="tool_name", values="n_calls", aggfunc="sum", fill_value=0)
        wide = keys.set_index(key).join(wide).fillna(0)                         # (trajectories, tools)
        per_task_calls = wide.groupby(level="task_id", sort=False).mean().mean()
        totals = wide.sum()
        for tool in totals.index:
            model, simulated = behind.get((run_id, tool), (None, tool.startswith("sim:")))
            label = tool_label(tool) if tool.startswith("sim:") or model is None else (
                f"{tool} ({model}{', simulated' if simulated else ''})")
            rows.append([run_id, tool, label, simulated, int(totals[tool]),
                         float(per_task_calls[tool]), float(totals[tool] / totals.sum())])
    return pd.DataFrame(rows, columns=columns)


def model_family(identifier: str | None) -> str | None:
    """Family of a model or orchestrator id: `gpt-5`, `qwen`, `llama`, `claude`, or None when unknown.

    The id is reduced to its model part first: the policy kind before ':' (`openai:`, `scripted:`, `hf:`,
    `sim:`), an endpoint after '@' and any path or organisation before the last '/' are dropped, so
    `openai:gpt-5@http://...`, `scripted:gpt-5-prompted`, `sim:gpt-5-mini` and `openai/gpt-5` are all
    the gpt-5 family, and `hf:/ckpt/Qwen3-8B` is qwen. The family is the first matching id prefix.

    >>> model_family("openai:gpt-5@http://localhost:8000/v1"), model_family("sim:qwen3-32b"), model_family("scripted:cheapest-first")
    ('gpt-5', 'qwen', None)
    """
    if not identifier:
        return None
    name = identifier.strip().lower().split("@")[0]
    name = name.split(":", 1)[1] if ":" in name else name
    name = name.rstrip("/").split("/")[-1]
    return next((family for prefix, family in FAMILIES if name.startswith(prefix)), None)


def delegation_bias(tool_calls: pd.DataFrame, tools: pd.DataFrame, run_info: pd.DataFrame,
                    run_ids: Sequence[str]) -> pd.DataFrame:
    """Delegation-bias indices per run (paper Fig. 3), over *model calls*: calls to toolkit tools with a model.

    strongest_share: share of model calls that went to the run's strongest model, defined as the model
    tool(s) with the highest output price per token in the run's toolkit (ties all count). own_family_share:
    share of model calls to tools whose model is in the orchestrator's own family (`model_family` of the
    run's orchestrator string); NaN when that family is unknown (e.g. `scripted:cheapest-first`).
    Both are NaN for a run with no model calls.
    """
    columns = ["run_id", "model_calls", "strongest", "strongest_calls", "strongest_share",
               "orchestrator_family", "own_family_calls", "own_family_share"]
    orchestrators = run_info.set_index("run_id").orchestrator
    rows = []
    for run_id in run_ids:
        kit = tools[(tools.run_id == run_id) & tools.model.notna()]
        calls = tool_calls[tool_calls.run_id == run_id].groupby("tool_name").n_calls.sum()
        model_calls = calls.reindex(kit.tool_name).fillna(0)                   # calls per model tool
        total = float(model_calls.sum())
        top = kit.output_per_mtok.max() if len(kit) else np.nan
        strongest = kit.tool_name[kit.output_per_mtok == top].tolist()
        family = model_family(orchestrators.get(run_id, ""))
        own = kit.tool_name[kit.model.map(model_family) == family].tolist() if family else []
        strong_calls = float(model_calls[strongest].sum())
        own_calls = float(model_calls[own].sum()) if family else np.nan
        rows.append([run_id, int(total), ", ".join(strongest), int(strong_calls), strong_calls / total if total else np.nan,
                     family, own_calls, own_calls / total if total and family else np.nan])
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------- preference score


def shared_tasks(trajs: pd.DataFrame, run_ids: Sequence[str]) -> list[str]:
    """Task ids that every one of `run_ids` ran, in first-seen order."""
    sets = [set(trajs.task_id[trajs.run_id == r]) for r in run_ids]
    common = set.intersection(*sets) if sets else set()
    return [t for t in dict.fromkeys(trajs.task_id) if t in common]


def preference_scores(trajs: pd.DataFrame, run_ids: Sequence[str], tools: Sequence[str], P: np.ndarray) -> pd.DataFrame:
    """Preference-aware score per run (paper Table 3) via `lab.reward.preference_score`, on shared tasks.

    `tools` fixes the feature columns (every tool any compared run used) and P has len(tools) + 3
    entries. All trajectories of all runs on a task are normalised together, so scores compare the runs
    of one report only. Columns: run_id, preference_score, n_tasks, n_trajectories.
    """
    columns = ["run_id", "preference_score", "n_tasks", "n_trajectories"]
    tasks = shared_tasks(trajs, run_ids)
    rows = trajs[trajs.run_id.isin(list(run_ids)) & trajs.task_id.isin(tasks)]
    if rows.empty:
        return pd.DataFrame([[r, np.nan, 0, 0] for r in run_ids], columns=columns)
    M = feature_matrix(list(rows.tool_counts_json.map(_json_counts)), rows.outcome.to_numpy(float),
                       rows.cost_usd.to_numpy(float), rows.latency_s.to_numpy(float), list(tools))  # (B, n + 3)
    scores = preference_score(M, P, list(rows.run_id), list(rows.task_id))
    counts = rows.run_id.value_counts()
    return pd.DataFrame([[r, scores.get(r, np.nan), len(tasks), int(counts.get(r, 0))] for r in run_ids], columns=columns)


def paired_preference_scores(trajs: pd.DataFrame, run_a: str, run_b: str, tools: Sequence[str],
                             n_resamples: int = N_RESAMPLES, seed: int = 0, level: float = 0.95) -> dict[str, float]:
    """Preference score of two runs on their shared tasks, each trajectory under its own logged P (e.g. the
    held-out pair its task was shown), with a paired bootstrap over tasks of the difference A - B.

    Per task, both runs' trajectories are normalised together (Eq. 2 with the task as the group, as in
    `preference_scores`); a run's task score is the mean reward of its trajectories on that task."""
    tasks = shared_tasks(trajs, [run_a, run_b])
    rows = trajs[trajs.run_id.isin([run_a, run_b]) & trajs.task_id.isin(tasks)]
    if rows.empty:
        raise LabInputError(f"runs {run_a} and {run_b} share no task")
    names = [*tools, "outcome", "compute", "latency"]
    P = np.array([[json.loads(p).get(n, 0.0) for n in names] for p in rows.preference_json], dtype=float)   # (B, n + 3)
    M = feature_matrix([{k: v for k, v in _json_counts(c).items() if k in tools} for c in rows.tool_counts_json],
                       rows.outcome.to_numpy(float), rows.cost_usd.to_numpy(float), rows.latency_s.to_numpy(float), list(tools))
    rewards = preference_rewards(M, P, list(rows.task_id))
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
    return {"cost_a": float(a.mean()), "cost_b": float(b.mean()), "saving": float(1 - a.sum() / b.sum()) if b.sum() else float("nan"),
            "ci_low": float(lo), "ci_high": float(hi), "n_tasks": len(a)}


def _json_counts(text: str) -> dict[str, int]:
    return json.loads(text or "{}")


# ---------------------------------------------------------------- Pareto frontier and its area


def pareto_points(accuracy: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """Runs as (cost cents per task, accuracy) points with `on_frontier`: True when no other run is at
    least as cheap and at least as accurate while strictly better in one of the two."""
    points = accuracy[["run_id", "accuracy"]].merge(costs[["run_id", "cost_cents_per_task"]], on="run_id")
    c, a = points.cost_cents_per_task.to_numpy(float), points.accuracy.to_numpy(float)
    ok = np.isfinite(c) & np.isfinite(a)
    # dominated[i, j]: point j dominates point i.   (N, N)
    dominated = (c[None, :] <= c[:, None]) & (a[None, :] >= a[:, None]) & ((c[None, :] < c[:, None]) | (a[None, :] > a[:, None]))
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


def router_table(accuracy: pd.DataFrame, bias: pd.DataFrame, weak: str | None = None, strong: str | None = None) -> pd.DataFrame:
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
    key = ["run_id", "task_id", "sample_idx", "train_step"]
    delta = (step_costs.new_cost_usd - step_costs.cost_usd).groupby([step_costs[k] for k in key]).sum().rename("delta")
    joined = trajs.join(delta, on=key)
    joined = joined.assign(new_cost_usd=joined.cost_usd + joined.delta.fillna(0.0))
    logged = cost_latency_table(joined, run_ids)
    new = cost_latency_table(joined.assign(cost_usd=joined.new_cost_usd), run_ids)
    return pd.DataFrame({
        "run_id": list(run_ids), "pricing": pricing,
        "logged_cents_per_task": logged.cost_cents_per_task, "repriced_cents_per_task": new.cost_cents_per_task,
        "logged_total_usd": logged.total_cost_usd, "repriced_total_usd": new.total_cost_usd,
        "change_pct": 100 * (new.total_cost_usd / logged.total_cost_usd.where(logged.total_cost_usd > 0) - 1),
    })
