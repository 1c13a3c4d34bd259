"""The steering page's arithmetic, free of Streamlit so it is tested directly: rescoring logged runs
under a preference vector P with `lab.reward` (no model is re-run) and the re-pricing of their costs.

Why the logged features suffice: Eq. 2 needs per trajectory only its calls per tool, its outcome, its
cost and its latency, all stored; a new P changes only the weights, and a provider's prices change
only the cost column (`lab.report.api.load_report(pricing=...)` re-prices from the logged tokens).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lab.preference import OBJECTIVES
from lab.reward import feature_matrix, group_advantages, preference_rewards, preference_score


def feature_names(trajs: pd.DataFrame) -> list[str]:
    """Every tool any trajectory called, in first-seen order, then outcome, compute, latency."""
    tools: dict[str, None] = {}
    for text in trajs.tool_counts_json.dropna():
        tools.update(dict.fromkeys(json.loads(text)))
    return [*tools, *OBJECTIVES]


@dataclass(frozen=True)
class Features:
    """The logged trajectories of some runs as Eq. 2's feature matrix, parsed once per store state so a
    slider move is only arithmetic: M (B, n + 3) = [calls per tool, outcome, -cost, -latency], with
    each row's run, task and group as integer codes (the reward's grouping is fastest on integers)."""

    names: list[str]
    M: np.ndarray
    rows: pd.DataFrame  # run_id, task_id, sample_idx, train_step, group, outcome, cost_usd, latency_s
    run_codes: np.ndarray  # (B,) index into run_names
    run_names: list[str]
    task_codes: np.ndarray  # (B,)
    group_codes: np.ndarray  # (B,): one code per (run, group)

    @classmethod
    def of(cls, trajs: pd.DataFrame) -> Features:
        names = feature_names(trajs)
        tools = names[:-len(OBJECTIVES)]
        M = feature_matrix([json.loads(t or "{}") for t in trajs.tool_counts_json], trajs.outcome.to_numpy(float),
                           trajs.cost_usd.to_numpy(float), trajs.latency_s.to_numpy(float), tools)
        rows = trajs[["run_id", "task_id", "sample_idx", "train_step", "outcome", "cost_usd", "latency_s"]].reset_index(drop=True)
        rows["group"] = (trajs.group_id.fillna(trajs.task_id) + "@" + trajs.train_step.astype(str)).to_numpy()
        run_codes, run_names = pd.factorize(rows.run_id)
        return cls(names, M, rows, run_codes, list(run_names), pd.factorize(rows.task_id)[0],
                   pd.factorize(rows.run_id + "/" + rows.group)[0])

    def vector(self, P: dict[str, float]) -> np.ndarray:
        return np.array([P.get(n, 0.0) for n in self.names], dtype=float)


def ranking(features: Features, run_ids: Sequence[str], P: dict[str, float]) -> pd.DataFrame:
    """The preference score of each run under P on the tasks they all ran (paper Table 3), best first:
    each task's trajectories of all the runs are normalised together (`lab.reward.preference_score`)."""
    wanted = [features.run_names.index(r) for r in dict.fromkeys(run_ids) if r in features.run_names]
    mine = np.isin(features.run_codes, wanted)
    n_tasks = int(features.task_codes.max()) + 1 if len(features.task_codes) else 0
    runs_per_task = np.zeros(n_tasks, dtype=int)
    pairs = np.unique(np.stack([features.task_codes[mine], features.run_codes[mine]]), axis=1) if mine.any() \
        else np.zeros((2, 0), dtype=int)
    np.add.at(runs_per_task, pairs[0], 1)
    keep = mine & (runs_per_task[features.task_codes] == len(wanted))
    scores = preference_score(features.M[keep], features.vector(P), features.run_codes[keep].tolist(),
                              features.task_codes[keep]) if keep.any() else {}
    counts = np.bincount(features.run_codes[keep], minlength=len(features.run_names))
    shared = int((runs_per_task == len(wanted)).sum()) if wanted else 0
    table = pd.DataFrame([[r, scores.get(features.run_names.index(r), np.nan) if r in features.run_names else np.nan,
                           shared, int(counts[features.run_names.index(r)]) if r in features.run_names else 0]
                          for r in run_ids], columns=["run_id", "preference_score", "n_tasks", "n_trajectories"])
    table = table.sort_values("preference_score", ascending=False, na_position="last").reset_index(drop=True)
    table.insert(0, "rank", range(1, len(table) + 1))
    return table


def zero_ranking_reason(features: Features, table: pd.DataFrame, P: dict[str, float]) -> str | None:
    """Why every ranked system scores 0 (one line), or None when some score is not 0."""
    scores = table.preference_score.fillna(0.0)
    if table.empty or (scores != 0).any():
        return None
    if not any(v > 0 for v in P.values()):
        return "Every score is 0 because P is all zeros: give some entry a weight."
    if int(table.n_tasks.max()) == 0:
        return "Every score is 0 because these runs share no task: the score compares systems on the tasks they all ran."
    runs = features.rows.run_id.isin(table.run_id)
    if not (features.rows.outcome[runs] > 0).any():
        return "Every score is 0 because none of these runs solved a task: Eq. 2 gives an unsolved trajectory 0."
    return ("Every score is 0 because on each shared task the weighted features are equal across these runs "
            "(a constant column normalises to 0): weight outcome, cost or latency, or add another system.")


def group_rewards(features: Features, P: dict[str, float]) -> pd.DataFrame:
    """Each trajectory's Eq. 2 reward and GRPO advantage under P within its group of one run (the task's
    samples, or the logged GRPO group), and whether it wins its group. Runs with one sample per task have
    constant columns, so every reward is 0 there; the page says so."""
    codes = features.group_codes
    R = preference_rewards(features.M, features.vector(P), codes)
    A, keep = group_advantages(R, codes)
    best = np.full(int(codes.max()) + 1 if len(codes) else 0, -np.inf)
    np.maximum.at(best, codes, R)
    return features.rows.assign(reward=R, advantage=A, kept=keep, winner=(R == best[codes]) & (R > 0))


def reward_summary(rewards: pd.DataFrame) -> pd.DataFrame:
    """Per run: mean reward, groups won, groups kept by the homogeneity filter, groups in all."""
    per_group = rewards.groupby(["run_id", "group"]).agg(won=("winner", "any"), kept=("kept", "any"))
    summary = per_group.groupby("run_id").agg(groups=("won", "size"), groups_won=("won", "sum"),
                                              groups_kept=("kept", "sum"))
    summary["mean_reward"] = rewards.groupby("run_id").reward.mean()
    return summary.reset_index()


def parse_vector(text: str | None, names: Sequence[str]) -> dict[str, float]:
    """`name=value,...` from the URL, clipped to [0, 1]; unknown names and bad numbers are ignored,
    so a stale link still opens. A link names every nonzero entry, so the rest are 0; without one the
    vector is the paper's default (outcome and compute 1)."""
    if not text:
        return {n: (1.0 if n in ("outcome", "compute") else 0.0) for n in names}
    values = dict.fromkeys(names, 0.0)
    for part in (text or "").split(","):
        key, _, raw = part.partition("=")
        if key in values:
            try:
                values[key] = min(1.0, max(0.0, float(raw)))
            except ValueError:
                continue
    return values


def vector_text(values: dict[str, float]) -> str:
    return ",".join(f"{k}={v:g}" for k, v in values.items() if v)
