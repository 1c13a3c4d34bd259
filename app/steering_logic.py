"""The steering page's arithmetic, free of Streamlit so it is tested directly: rescoring logged runs
under a preference vector P with `lab.reward` (no model is re-run) and the re-pricing of their costs.

Why the logged features suffice: Eq. 2 needs per trajectory only its calls per tool, its outcome, its
cost and its latency, all stored; a new P changes only the weights, and a provider's prices change
only the cost column (`lab.report.api.load_report(pricing=...)` re-prices from the logged tokens).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from lab.preference import OBJECTIVES
from lab.report import metrics
from lab.reward import rescore


def feature_names(trajs: pd.DataFrame) -> list[str]:
    """Every tool any trajectory called, in first-seen order, then outcome, compute, latency."""
    tools: dict[str, None] = {}
    for text in trajs.tool_counts_json.dropna():
        tools.update(dict.fromkeys(json.loads(text)))
    return [*tools, *OBJECTIVES]


def ranking(trajs: pd.DataFrame, run_ids: Sequence[str], P: dict[str, float]) -> pd.DataFrame:
    """The preference score of each run under P on the tasks they share (paper Table 3), best first."""
    names = feature_names(trajs[trajs.run_id.isin(list(run_ids))])
    tools = names[:-len(OBJECTIVES)]
    vector = np.array([P.get(n, 0.0) for n in names], dtype=float)
    scores = metrics.preference_scores(trajs, list(run_ids), tools, vector)
    scores = scores.sort_values("preference_score", ascending=False, na_position="last").reset_index(drop=True)
    scores.insert(0, "rank", range(1, len(scores) + 1))
    return scores


def group_rewards(trajs: pd.DataFrame, P: dict[str, float]) -> pd.DataFrame:
    """Each trajectory's Eq. 2 reward and GRPO advantage under P within its group of one run (the task's
    samples, or the logged GRPO group), and whether it wins its group. Runs with one sample per task have
    constant columns, so every reward is 0 there; the page says so."""
    frames = []
    for run_id, rows in trajs.groupby("run_id", sort=False):
        names = feature_names(rows)
        tools = names[:-len(OBJECTIVES)]
        groups = (rows.group_id.fillna(rows.task_id) + "@" + rows.train_step.astype(str)).tolist()
        R, A, keep = rescore([json.loads(t or "{}") for t in rows.tool_counts_json], rows.outcome.to_numpy(float),
                             rows.cost_usd.to_numpy(float), rows.latency_s.to_numpy(float), tools,
                             np.array([P.get(n, 0.0) for n in names], dtype=float), groups)
        frame = rows[["run_id", "task_id", "sample_idx", "train_step", "outcome", "cost_usd", "latency_s"]].copy()
        frame["group"], frame["reward"], frame["advantage"], frame["kept"] = groups, R, A, keep
        frame["winner"] = frame.reward.eq(frame.groupby("group").reward.transform("max")) & (frame.reward > 0)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


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
