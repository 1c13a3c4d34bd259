"""The steering page's arithmetic, free of Streamlit so it is tested directly: rewards of logged runs
under a preference vector P (no model is re-run), why a ranking is all zeros, and P in the URL.

Why the logged features suffice: Eq. 2 needs per trajectory only its calls per tool, its outcome, its
cost and its latency, all stored; a new P changes only the weights, and a provider's prices change
only the cost column (`lab.report.api.load_report(pricing=...)` re-prices from the logged tokens).
The features, groups and the ranking are `lab.scoring`'s, the ones `orchestra rescore`, the report and
the trainer use.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lab.scoring import FeatureFrame


def zero_ranking_reason(features: FeatureFrame, table: pd.DataFrame, P: dict[str, float]) -> str | None:
    """Why every ranked system scores 0 (one line), or None when some score is not 0."""
    scores = table.preference_score.fillna(0.0)
    if table.empty or (scores != 0).any():
        return None
    if not any(v > 0 for v in P.values()):
        return "Every score is 0 because P is all zeros: give some entry a weight."
    if int(table.n_tasks.max()) == 0:
        return ("Every score is 0 because these runs share no task: the score compares systems on the tasks "
                "they all ran.")
    runs = features.rows.run_id.isin(table.run_id)
    if not (features.rows.outcome[runs] > 0).any():
        return "Every score is 0 because none of these runs solved a task: Eq. 2 gives an unsolved trajectory 0."
    return ("Every score is 0 because on each shared task the weighted features are equal across these runs "
            "(a constant column normalises to 0): weight outcome, cost or latency, or add another system.")


def group_rewards(features: FeatureFrame, P: dict[str, float]) -> pd.DataFrame:
    """Each trajectory's Eq. 2 reward and GRPO advantage under P within its group of one run (the task's
    samples, or the logged GRPO group), and whether it wins its group. Runs with one sample per task have
    constant columns, so every reward is 0 there; the page says so."""
    codes = features.group_codes
    R, A, keep = features.grpo(P)
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
