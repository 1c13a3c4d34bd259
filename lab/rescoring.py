"""Re-derive rewards and costs of a logged run: the pure scoring layer applied to stored rows.

Why this exists beside `lab.reward`: the reward is pure numpy; this module is the glue that reads a
run's logged features from the store, applies the reward under another preference vector (or the step
costs under another price table) and writes a *new* scoring. Nothing logged is modified.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.preference import Preference
from lab.pricing import PriceTable
from lab.records import ScoreRecord, ScoringRecord
from lab.reward import STD_THRESHOLD, rescore
from lab.store import Store, queries


@dataclass
class RescoreResult:
    """A stored scoring and the numbers a user compares against the logged ones."""

    scoring: ScoringRecord
    scores: list[ScoreRecord]
    logged_reward_mean: float | None
    groups: list[str]

    def summary(self) -> dict[str, Any]:
        rewards = np.array([s.reward for s in self.scores], dtype=float)
        return {
            "scoring_id": self.scoring.scoring_id,
            "run_id": self.scoring.run_id,
            "preference": json.loads(self.scoring.preference_json),
            "trajectories": len(self.scores),
            "groups": len(set(self.groups)),
            "groups_kept": len({g for g, s in zip(self.groups, self.scores) if s.keep}),
            "reward_mean": float(rewards.mean()) if len(rewards) else None,
            "reward_mean_logged": self.logged_reward_mean,
            "solved": int(sum(1 for s in self.scores if s.reward > 0)),
        }


def feature_tools(toolkit_tools: Sequence[str], tool_counts_json: Iterable[str]) -> list[str]:
    """Reward columns of logged trajectories: the toolkit's tools in order, then any other tool a
    trajectory counted (benchmark tools such as tau2 domain functions), sorted."""
    names = list(dict.fromkeys(toolkit_tools))
    counted: set[str] = set()
    for text in set(tool_counts_json):
        counted.update(json.loads(text or "{}"))
    return names + sorted(counted - set(names))


def rescore_run(
    store: Store, run_id: str, preference: str | dict[str, float], std_threshold: float = STD_THRESHOLD
) -> RescoreResult:
    """Score every trajectory of a run under `preference` and store it as a new scoring."""
    run = queries.run(store, run_id)
    trajs = queries.trajectories_df(store, [run_id])
    if trajs.empty:
        raise LabInputError(f"run '{run_id}' has no trajectories to rescore")
    toolkit_tools = [t["name"] for t in json.loads(run.toolkit_json or "{}").get("tools", [])]
    tools = feature_tools(toolkit_tools, trajs.tool_counts_json.fillna("{}"))
    pref = Preference.parse(preference, tools) if isinstance(preference, str) else Preference.from_dict(preference, tools)
    groups = _group_labels(trajs)
    rewards, advantages, keep = rescore(
        [json.loads(c) for c in trajs.tool_counts_json], trajs.outcome.to_numpy(float), trajs.cost_usd.to_numpy(float),
        trajs.latency_s.to_numpy(float), tools, pref, groups, std_threshold=std_threshold,
    )
    scoring = ScoringRecord(
        scoring_id=f"{run_id}:score-{uuid.uuid4().hex[:8]}", run_id=run_id,
        preference_json=json.dumps(pref.as_dict()), note=f"std_threshold={std_threshold}",
    )
    scores = [
        ScoreRecord(scoring_id=scoring.scoring_id, run_id=run_id, task_id=row.task_id, sample_idx=int(row.sample_idx),
                    train_step=int(row.train_step), reward=float(r), advantage=float(a), keep=bool(k))
        for row, r, a, k in zip(trajs.itertuples(), rewards, advantages, keep)
    ]
    store.write_scoring(scoring, scores)
    logged = trajs.reward.dropna()
    return RescoreResult(scoring, scores, float(logged.mean()) if len(logged) else None, groups)


def _group_labels(trajs: pd.DataFrame) -> list[str]:
    """GRPO groups: the logged group id, else all samples of one task at one training step."""
    return [
        g if g else f"{t}@{s}"
        for g, t, s in zip(trajs.group_id.fillna(""), trajs.task_id, trajs.train_step)
    ]


def orchestrator_model(orchestrator: str) -> str | None:
    """The priced model behind a run's orchestrator: `openai:<model>@<url>` -> model; None for local and
    scripted orchestrators, which cost nothing per token."""
    if not orchestrator.startswith("openai:"):
        return None
    return orchestrator.removeprefix("openai:").partition("@")[0] or None


def with_orchestrator_steps(steps: pd.DataFrame, trajs: pd.DataFrame, orchestrator: str) -> pd.DataFrame:
    """Steps plus one row per trajectory for the orchestrator's own tokens and cost, so repricing covers
    what the orchestrator model cost too (the engine logs it on the trajectory, not as a step)."""
    model = orchestrator_model(orchestrator)
    if model is None or trajs.empty:
        return steps
    key = ["run_id", "task_id", "sample_idx", "train_step"]
    tool_cost = steps.groupby(key).cost_usd.sum().rename("tool_cost") if len(steps) else pd.Series(dtype=float, name="tool_cost")
    own = trajs[key + ["input_tokens", "output_tokens", "cost_usd"]].join(tool_cost, on=key)
    own = own.assign(cost_usd=(own.cost_usd - own.tool_cost.fillna(0.0)).clip(lower=0.0), model=model,
                     tool_name="(orchestrator)", kind="orchestrator").drop(columns="tool_cost")
    return pd.concat([steps, own], ignore_index=True)


def step_costs_under(steps: pd.DataFrame, table: PriceTable) -> np.ndarray:
    """Each step's cost under `table`, from its logged tokens; steps without a model keep their cost.

    Every model must have a price in the new table: a silent zero would make a run look cheaper than
    it is, so missing prices are a user error listing the models.
    """
    models = steps.model.fillna("") if len(steps) else pd.Series(dtype=str)
    missing = sorted(m for m in models.unique() if m and not table.has(m))
    if missing:
        raise LabInputError(f"pricing '{table.name}' has no price for model(s) {', '.join(missing)}")
    new = steps.cost_usd.to_numpy(float).copy()                         # (S,)
    for model in models[models != ""].unique():
        mask = (models == model).to_numpy()
        new[mask] = table.price(model).cost(steps.input_tokens.to_numpy()[mask], steps.output_tokens.to_numpy()[mask])
    return new


def reprice_steps(steps: pd.DataFrame, table: PriceTable) -> pd.DataFrame:
    """Per-model calls, tokens, logged cost and cost under `table` (see `step_costs_under`)."""
    columns = ["model", "calls", "input_tokens", "output_tokens", "old_cost_usd", "new_cost_usd", "priced_by"]
    if steps.empty:
        return pd.DataFrame(columns=columns)
    steps = steps.assign(model=steps.model.fillna(""), new_cost_usd=step_costs_under(steps, table))
    rows = []
    for model, group in steps.groupby("model", sort=True):
        by = table.price(model).provider if model else "(no model: unchanged)"
        rows.append([model or "(tools without a model)", len(group), int(group.input_tokens.sum()),
                     int(group.output_tokens.sum()), float(group.cost_usd.sum()), float(group.new_cost_usd.sum()), by])
    return pd.DataFrame(rows, columns=columns)
