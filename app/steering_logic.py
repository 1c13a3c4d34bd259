"""The steering page's arithmetic, free of Streamlit so it is tested directly: rewards of logged runs
under a preference vector P (no model is re-run), why a ranking is all zeros, and P in the URL.

Why the logged features suffice: Eq. 2 needs per trajectory only its calls per tool, its outcome, its
cost and its latency, all stored; a new P changes only the weights, and a provider's prices change
only the cost column (`lab.report.api.load_report(pricing=...)` re-prices from the logged tokens).
The features, groups and the ranking are `lab.scoring`'s, the ones `orchestra rescore`, the report and
the trainer use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from lab.preference import PreferencePair, resolve_names
from lab.report.metrics import ci_text
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


def preset_values(pair: PreferencePair, names: Sequence[str], models: Mapping[str, str]) -> dict[str, float]:
    """The slider values a preset stands for: each weight on the entries it names, a model's name (`gpt-5`)
    on every slot that model fills (`answer-1`, `search-1`), a tool's on the tool; every other entry 0."""
    values = dict.fromkeys(names, 0.0)
    for key, weight in pair.weights.items():
        for name in resolve_names(key, list(names), models):
            values[name] = float(weight)
    return values


def presets_for(pairs: Sequence[PreferencePair], names: Sequence[str],
                models: Mapping[str, str]) -> list[PreferencePair]:
    """The presets whose every weight lands on an entry of these runs (a pair weighing a model no run offers
    would silently mean something else)."""
    return [p for p in pairs if all(resolve_names(k, list(names), models) for k in p.weights)]


def slider_label(name: str, models: Mapping[str, str]) -> str:
    """`answer-1 (gpt-5)`: the slot and the model behind it; a tool or an objective by its own name."""
    model = models.get(name)
    return f"{name} ({model})" if model and model != name else name


def _asked(runs: pd.DataFrame) -> pd.DataFrame:
    """The evaluation runs that name a preference or an instruction."""
    return runs[(runs.kind == "eval") & ((runs.preference.fillna("") != "") | (runs.instruction.fillna("") != ""))]


def behaviour_runs(runs: pd.DataFrame, orchestrator: str) -> pd.DataFrame:
    """The evaluation runs of one orchestrator that name a preference or an instruction, in the order they
    were run: the same model asked for different things, the rows of the behaviour panel."""
    asked = _asked(runs)
    return asked[asked.orchestrator == orchestrator].sort_values("started_at")


def steered_orchestrators(runs: pd.DataFrame) -> list[str]:
    """Orchestrators evaluated under two or more preferences, most-evaluated first: those whose behaviour
    under different instructions can be laid side by side (a trained `hf:` model first on a tie)."""
    counts = _asked(runs).groupby("orchestrator").size()
    counts = counts[counts >= 2]
    return sorted(counts.index, key=lambda o: (-counts[o], not str(o).startswith("hf:"), str(o)))


def behaviour_table(chosen: pd.DataFrame, accuracy: pd.DataFrame, costs: pd.DataFrame,
                    shares: pd.DataFrame) -> pd.DataFrame:
    """One row per run of `behaviour_runs`: what it was asked (P and the instruction) and what it did:
    accuracy with its 95% CI and task count, cents and seconds per task, and its two largest tool shares."""
    acc = accuracy.set_index("run_id")
    cost = costs.set_index("run_id")
    rows = []
    for run in chosen.itertuples():
        a = acc.loc[run.run_id] if run.run_id in acc.index else None
        c = cost.loc[run.run_id] if run.run_id in cost.index else None
        own = shares[shares.run_id == run.run_id].sort_values("share", ascending=False)
        rows.append({
            "run": run.name or run.run_id, "P": run.preference or "-",
            "instruction": run.instruction or ("held-out wordings of P" if run.preference else "-"),
            "turns": run.max_turns,
            "accuracy": None if a is None else float(a.accuracy),
            "95% CI": "" if a is None else ci_text(a.ci_low, a.ci_high),
            "tasks": None if a is None else int(a.n_tasks),
            "¢/task": None if c is None else float(c.cost_cents_per_task),
            "s/task": None if c is None else float(c.latency_s_per_task),
            "top tools": ", ".join(f"{r.tool_label} {r.share:.0%}" for r in own.head(2).itertuples()),
            "run_id": run.run_id,
        })
    return pd.DataFrame(rows)
