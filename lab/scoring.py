"""The one Eq. 2 feature frame: trajectories -> features, groups, rewards and the preference ranking.

Every consumer of logged or in-memory rollouts builds its features here: the dashboard's steering page
(`app.steering_logic`), `orchestra rescore` (`lab.rescoring`), the report (`lab.report.metrics`) and the
trainer (`trainer.scoring`, `trainer.sft`). The arithmetic is `lab.reward`'s (pure numpy); this module
fixes what the arithmetic is applied to, so the four give the same reward to the same rollout.

    frame = FeatureFrame.of(queries.trajectories_df(store, runs), toolkit_tools)
    frame.names                     # [tools..., "outcome", "compute", "latency"], the columns of frame.M
    R, A, keep = frame.grpo(P)      # Eq. 2 within each GRPO group, Eq. 3 advantages, homogeneity filter
    preference_ranking(frame, runs, P)   # paper Table 3, best first

**Column order.** The toolkit's reward features in the toolkit's order, then every other tool some
trajectory counted (benchmark tools such as tau2's domain functions), sorted by name, then outcome,
compute (-cost) and latency (-latency). Why: a `lab.preference.Preference` is bound to the toolkit's
order and the trainer's P runs over `environment.features` in that order, so column i of M and entry i
of P name the same feature without a lookup; sorting the extra tools makes the columns independent of
which trajectory a query happens to return first (a first-seen order changed when a run joined the
selection). The order never changes a reward (each column is normalised on its own and P is matched by
name), only how columns are listed, e.g. the steering page's sliders.

**Group label.** A trajectory's GRPO group is its logged `group_id` when it has one (the harness logs the
task id, the trainer `step:example`), else `task_id@train_step`: the samples of one task at one step.
Why: the logged id is the group the rollouts were drawn as, and the fallback is the paper's group
(rollouts of one task under one P) for rows logged without an id. A group never spans runs: in a frame
of several runs, rows are grouped by (run, label).

**Preference score** (paper Table 3): on the tasks every compared run ran, each task's trajectories of
all those runs are normalised together (Eq. 2 with the task as the group); a run's score is the mean
reward of its trajectories (`lab.reward.preference_score`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.preference import OBJECTIVES, Preference
from lab.reward import STD_THRESHOLD, RewardScale, feature_matrix, grpo_scores, preference_rewards, preference_score

__all__ = [
    "TRAJECTORY_KEY",
    "FeatureFrame",
    "feature_names",
    "feature_tools",
    "group_label",
    "preference_ranking",
    "preference_scores",
    "shared_rows",
    "shared_tasks",
    "task_rewards",
]

#: The columns that identify one trajectory in the store's frames (trajectories, steps, tool calls).
TRAJECTORY_KEY = ["run_id", "task_id", "sample_idx", "train_step"]

#: A preference as a consumer holds it: by name, bound to the frame's tools, or as a vector over
#: `FeatureFrame.names` ((K,) for all rows, (B, K) one per row, or one mapping per row).
PreferenceLike = Mapping[str, float] | Preference | np.ndarray | Sequence[Mapping[str, float]]


def tool_counts(text: str | None) -> dict[str, int]:
    """A trajectory's logged `tool_counts_json` as {tool: calls}; NULL or empty is no call."""
    return json.loads(text or "{}")


def feature_tools(toolkit_tools: Iterable[str], counts: Iterable[str | Mapping[str, int] | None]) -> list[str]:
    """The tool columns (see the module docstring): the toolkit's tools in order, then any other tool a
    trajectory counted, sorted. `counts` are logged `tool_counts_json` texts or parsed dicts.

    >>> feature_tools(["web", "gpt-5"], ['{"zeta": 1}', {"web": 2, "alpha": 1}])
    ['web', 'gpt-5', 'alpha', 'zeta']
    """
    names = list(dict.fromkeys(toolkit_tools))
    counted: set[str] = set()
    for row in counts:
        counted.update(row if isinstance(row, Mapping) else tool_counts(row))
    return names + sorted(counted - set(names))


def feature_names(tools: Sequence[str]) -> list[str]:
    """Every column of M by name: the tools, then outcome, compute, latency."""
    return [*tools, *OBJECTIVES]


def group_label(group_id: str | None, task_id: str, train_step: int) -> str:
    """A trajectory's GRPO group (see the module docstring).

    >>> group_label("3:ex-7", "t1", 3), group_label("", "t1", 0)
    ('3:ex-7', 't1@0')
    """
    return group_id if group_id else f"{task_id}@{train_step}"


@dataclass(frozen=True)
class FeatureFrame:
    """Trajectories as Eq. 2's raw feature matrix M with one row of keys each; parsed once, so a new P
    is only arithmetic (the steering page re-weighs it on every slider move)."""

    tools: list[str]
    M: np.ndarray              # (B, n + 3): [calls per tool, outcome, -cost_usd, -latency_s]
    rows: pd.DataFrame         # (B rows): run_id, task_id, sample_idx, train_step, outcome, cost_usd, latency_s, group
    group_codes: np.ndarray    # (B,) one integer per (run, group): the reward's grouping is fastest on integers
    task_codes: np.ndarray     # (B,) one integer per task, across runs (the preference score's grouping)

    @property
    def names(self) -> list[str]:
        return feature_names(self.tools)

    @classmethod
    def of(cls, trajs: pd.DataFrame, toolkit_tools: Iterable[str] = ()) -> FeatureFrame:
        """From the store's trajectories frame (`queries.trajectories_df`; columns it lacks default to
        "" / 0), with the tool columns of `feature_tools(toolkit_tools, ...)`."""
        counts = [tool_counts(text) for text in _column(trajs, "tool_counts_json", "{}")]
        keys = pd.DataFrame({k: _column(trajs, k, d) for k, d in zip(TRAJECTORY_KEY, ("", "", 0, 0))})
        keys["group"] = [group_label(g, t, s) for g, t, s in zip(_column(trajs, "group_id", ""),
                                                                 keys.task_id, keys.train_step)]
        return cls.from_counts(counts, trajs.outcome.to_numpy(float), trajs.cost_usd.to_numpy(float),
                               trajs.latency_s.to_numpy(float), feature_tools(toolkit_tools, counts), keys)

    @classmethod
    def from_counts(cls, counts: Sequence[Mapping[str, int]], outcomes: Sequence[float] | np.ndarray,
                    costs: Sequence[float] | np.ndarray, latencies: Sequence[float] | np.ndarray, tools: Sequence[str],
                    keys: pd.DataFrame | None = None) -> FeatureFrame:
        """From parsed rollouts (the trainer's, in memory), with exactly the tool columns `tools`.

        `keys` holds any of `TRAJECTORY_KEY` and `group` per row; a missing key is "" / 0, a missing
        group is `group_label` of the task and step."""
        M = feature_matrix(counts, outcomes, costs, latencies, list(tools))                  # (B, n + 3), validated
        keys = pd.DataFrame(index=range(len(M))) if keys is None else keys.reset_index(drop=True)
        rows = pd.DataFrame({k: keys[k] if k in keys else pd.Series([d] * len(M), dtype=object if d == "" else int)
                             for k, d in zip(TRAJECTORY_KEY, ("", "", 0, 0))})
        rows = rows.assign(outcome=M[:, -3], cost_usd=np.asarray(costs, dtype=float).reshape(-1),
                           latency_s=np.asarray(latencies, dtype=float).reshape(-1))
        rows["group"] = keys["group"] if "group" in keys else [
            group_label("", t, s) for t, s in zip(rows.task_id, rows.train_step)]
        return cls(list(tools), M, rows, pd.factorize(pd.MultiIndex.from_arrays([rows.run_id, rows.group]))[0],
                   pd.factorize(rows.task_id)[0])

    def take(self, index: Sequence[int] | np.ndarray, groups: Sequence[str] | None = None) -> FeatureFrame:
        """These rows (positions, repeats allowed); given `groups`, regrouped under those labels alone, so a
        group may then span runs (SFT's group of an example: every route any run took on its task)."""
        index = np.asarray(index, dtype=np.intp)
        rows = self.rows.iloc[index].reset_index(drop=True)
        if groups is None:
            codes = (pd.factorize(pd.MultiIndex.from_arrays([rows.run_id, rows.group]))[0] if len(rows)
                     else np.zeros(0, np.intp))
        else:
            rows["group"] = list(groups)
            codes = pd.factorize(rows.group)[0]
        return FeatureFrame(self.tools, self.M[index], rows, codes, pd.factorize(rows.task_id)[0])

    def vector(self, P: PreferenceLike) -> np.ndarray:
        """P over `names`: (K,), or (B, K) given one preference per row. Names P lacks weigh 0; a
        `Preference` must be bound to exactly these tools, so entry i and column i mean the same."""
        if isinstance(P, Preference):
            if list(P.tools) != self.tools:
                raise LabInputError(f"preference is bound to tools {list(P.tools)}; features use {self.tools}")
            return P.vector
        if isinstance(P, Mapping):
            return np.array([float(P.get(n, 0.0)) for n in self.names])
        if isinstance(P, Sequence) and not isinstance(P, str) and P and isinstance(P[0], Mapping):
            return np.array([[float(p.get(n, 0.0)) for n in self.names] for p in P]).reshape(len(P), -1)
        return np.asarray(P, dtype=float)

    def rewards(self, P: PreferenceLike, by: Literal["group", "task"] = "group") -> np.ndarray:
        """Eq. 2 rewards (B,) under P, normalised within each GRPO group of a run (`by="group"`) or within
        each task across all runs of the frame (`by="task"`, the preference score's grouping)."""
        return preference_rewards(self.M, self.vector(P), self.group_codes if by == "group" else self.task_codes)

    def grpo(self, P: PreferenceLike, std_threshold: float = STD_THRESHOLD,
             passed: Sequence[bool] | np.ndarray | None = None,
             scale: RewardScale | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(R, A, keep) within each GRPO group: Eq. 2, the Eq. 3 advantage and the homogeneity filter
        (`lab.reward.grpo_scores`); rows not `passed` (the trajectory filters) get 0, 0, False; `scale`:
        cost and latency on one scale for the run (`lab.reward.RewardScale`)."""
        return grpo_scores(self.M, self.vector(P), self.group_codes, std_threshold, passed, scale)


def _column(trajs: pd.DataFrame, name: str, default: Any) -> pd.Series:
    """A column with NULLs as `default`, or `default` on every row when the frame lacks it."""
    if name in trajs:
        return trajs[name].fillna(default).reset_index(drop=True)
    return pd.Series([default] * len(trajs), dtype=object if isinstance(default, str) else int)


# ---------------------------------------------------------------- preference score (Table 3)


def shared_tasks(trajs: pd.DataFrame, run_ids: Sequence[str]) -> list[str]:
    """Task ids that every one of `run_ids` ran, in first-seen order."""
    sets = [set(trajs.task_id[trajs.run_id == r]) for r in run_ids]
    common = set.intersection(*sets) if sets else set()
    return [t for t in dict.fromkeys(trajs.task_id) if t in common]


def shared_rows(frame: FeatureFrame, run_ids: Sequence[str]) -> FeatureFrame:
    """The rows of `run_ids` on the tasks all of them ran: the rows a preference score is taken over."""
    tasks = shared_tasks(frame.rows, run_ids)
    mine = frame.rows.run_id.isin(list(run_ids)) & frame.rows.task_id.isin(tasks)
    return frame.take(np.flatnonzero(mine.to_numpy()))


def task_rewards(frame: FeatureFrame, P: PreferenceLike) -> np.ndarray:
    """Eq. 2 rewards (B,) with the task as the group, across every run of `frame` (`shared_rows`):
    what a run's preference score averages."""
    return frame.rewards(P, by="task") if len(frame.rows) else np.zeros(0)


def preference_scores(frame: FeatureFrame, run_ids: Sequence[str], P: PreferenceLike) -> pd.DataFrame:
    """Preference score per run, in the order given (see the module docstring); NaN for every run when
    they share no task. Columns: run_id, preference_score, n_tasks, n_trajectories."""
    columns = ["run_id", "preference_score", "n_tasks", "n_trajectories"]
    shared = shared_rows(frame, run_ids)
    if not len(shared.rows):
        return pd.DataFrame([[r, np.nan, 0, 0] for r in run_ids], columns=columns)
    scores = preference_score(shared.M, frame.vector(P), list(shared.rows.run_id), shared.task_codes)
    counts = shared.rows.run_id.value_counts()
    n_tasks = shared.rows.task_id.nunique()
    return pd.DataFrame([[r, scores.get(r, np.nan), n_tasks, int(counts.get(r, 0))] for r in run_ids], columns=columns)


def preference_ranking(frame: FeatureFrame, run_ids: Sequence[str], P: PreferenceLike) -> pd.DataFrame:
    """`preference_scores` best first, with a 1-based `rank` column first (runs without a score last)."""
    table = preference_scores(frame, run_ids, P)
    table = table.sort_values("preference_score", ascending=False, na_position="last").reset_index(drop=True)
    table.insert(0, "rank", range(1, len(table) + 1))
    return table
