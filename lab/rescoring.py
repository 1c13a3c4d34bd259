"""Re-derive rewards and costs of a logged run: the pure scoring layer applied to stored rows.

Why this exists beside `lab.reward`: the reward is pure numpy; this module is the glue that reads a
run's logged features from the store, applies the reward under another preference vector and writes a
*new* scoring. Nothing logged is modified.

Rescoring one run (`rescore_run`, `orchestra rescore RUN -p ...`) does what the trainer does with a
batch of rollouts, in this order:

1. Trajectory filters (paper §3.3, `lab.filters.apply_filters` on the run's trajectories and steps).
   `format`: `format_ok` is False or a step has kind `format_error`. `invalid`: no valid,
   non-blank final answer. A trajectory failing both counts once, under `format`. A dropped trajectory
   leaves its group before anything is computed: it takes no part in the group's min-max or std and is
   stored with reward 0, advantage 0, keep False.
2. Eq. 2 within each GRPO group (`lab.scoring.group_label`: the logged group id, else
   `task@train_step`) over the trajectories left, then A = (R - mean) / std with ddof=1
   (`lab.scoring.FeatureFrame.grpo`).
3. Homogeneity: a group whose reward std is below `std_threshold` (0.1, paper §3.3) is dropped
   (keep False, A 0). A group left with one trajectory has no sample std and is dropped too.

`RescoreResult.summary()` keys (each group is counted in exactly one of the four `groups_*` buckets
after `groups`):

    trajectories              logged trajectories of the run
    solved                    trajectories with outcome == 1, whatever their reward
    filtered_format           trajectories dropped by the format-consistency filter
    filtered_invalid   trajectories dropped by the invalid-output filter
    groups                    GRPO groups of the run
    groups_kept               groups with at least one kept trajectory (they give a gradient)
    groups_homogeneous        groups of >= 2 scored trajectories dropped because reward std < threshold
    groups_one_member         groups left with exactly one trajectory after the filters (dropped)
    groups_filtered_out       groups whose every trajectory was filtered
    reward_mean               mean reward of the trajectories that passed the filters
    reward_mean_logged        mean of the rewards logged with the run (None when none were logged)

A run whose every group has one member (one sample per task) is refused: Eq. 2 normalises within the
group of rollouts of one task, so every column is constant, every reward 0 and every group dropped.
Either re-run with several samples per task, or score it *across* other runs (`rescore_across`,
`--across`): the paper's preference-aware score (Table 3, `lab.reward.preference_score`), where each
task's trajectories from all the named runs are normalised together (Eq. 2 with the task as the group,
on the tasks every run ran; `lab.scoring.task_rewards`) and a run's score is the mean reward of its
trajectories. The training
filters do not apply there: an evaluation counts a trajectory without a valid answer as a failure
(reward 0) rather than dropping it, which would flatter the run that produced it.

Repricing lives in `lab.repricing`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lab.errors import LabInputError
from lab.filters import REASONS, apply_filters, steps_by_trajectory, trajectory_key
from lab.preference import Preference
from lab.records import ScoreRecord, ScoringRecord, StepRecord, TrajectoryRecord
from lab.reward import STD_THRESHOLD
from lab.scoring import FeatureFrame, task_rewards
from lab.store import Store, queries
from lab.toolspec import logged_features

# ---------------------------------------------------------------- one run, GRPO groups


@dataclass
class RescoreResult:
    """A stored scoring and the numbers a user compares against the logged ones."""

    scoring: ScoringRecord
    scores: list[ScoreRecord]
    logged_reward_mean: float | None
    groups: list[str]
    outcomes: list[float] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)
    filtered: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The counts defined in the module docstring."""
        passed = self.passed or [True] * len(self.scores)
        rewards = np.array([s.reward for s, p in zip(self.scores, passed) if p], dtype=float)
        members: dict[str, list[tuple[bool, bool]]] = {}
        for g, s, p in zip(self.groups, self.scores, passed):
            members.setdefault(g, []).append((p, s.keep))
        scored = {g: sum(p for p, _ in rows) for g, rows in members.items()}
        kept = {g for g, rows in members.items() if any(k for _, k in rows)}
        return {
            "scoring_id": self.scoring.scoring_id,
            "run_id": self.scoring.run_id,
            "preference": json.loads(self.scoring.preference_json),
            "trajectories": len(self.scores),
            "solved": int(sum(1 for o in self.outcomes if o == 1)),
            **{f"filtered_{reason}": int(self.filtered.get(reason, 0)) for reason in REASONS},
            "groups": len(members),
            "groups_kept": len(kept),
            "groups_homogeneous": sum(1 for g, n in scored.items() if n >= 2 and g not in kept),
            "groups_one_member": sum(1 for n in scored.values() if n == 1),
            "groups_filtered_out": sum(1 for n in scored.values() if n == 0),
            "reward_mean": float(rewards.mean()) if len(rewards) else None,
            "reward_mean_logged": self.logged_reward_mean,
        }


def rescore_run(
    store: Store, run_id: str, preference: str | dict[str, float], std_threshold: float = STD_THRESHOLD
) -> RescoreResult:
    """Score every trajectory of a run under `preference` (filters, Eq. 2, advantages; see the module
    docstring) and store it as a new scoring. A run whose groups all have one member is refused."""
    run = queries.run(store, run_id)
    trajs = queries.trajectories_df(store, [run_id])
    if trajs.empty:
        raise LabInputError(f"run '{run_id}' has no trajectories to rescore")
    features = {name: spec.get("model") for name, spec in logged_features(run.toolkit_json).items()}
    frame = FeatureFrame.of(trajs, features)                     # (B, n + 3) and the GRPO groups
    groups = list(frame.rows.group)
    if len(set(groups)) == len(groups):
        raise LabInputError(
            f"run '{run_id}' has one trajectory per GRPO group ({len(groups)} groups of one): Eq. 2 normalises each "
            "reward feature within the group of rollouts of one task, so a one-sample run has nothing to normalise "
            "against and every reward would be 0. Re-run with `orchestra eval --samples N` (N >= 2; hf: and "
            "openai: orchestrators also need --temperature > 0), or score it against other runs with "
            "--across RUN_B [--across RUN_C ...] (preference score, paper Table 3: each task normalised across "
            "the runs' trajectories)"
        )
    pref = _preference(preference, frame.tools, features)
    records = _records(trajs, TrajectoryRecord)
    report = apply_filters(records, steps_by_trajectory(_records(queries.steps_df(store, run_id), StepRecord)))
    dropped = {key for keys in report.dropped_keys.values() for key in keys}
    passed = [trajectory_key(t) not in dropped for t in records]
    rewards, advantages, keep = frame.grpo(pref, std_threshold, passed)
    scoring = ScoringRecord(
        scoring_id=f"{run_id}:score-{uuid.uuid4().hex[:8]}", run_id=run_id, preference_json=json.dumps(pref.as_dict()),
        note=f"std_threshold={std_threshold}; filtered " + ", ".join(f"{r}={n}" for r, n in report.dropped.items()),
    )
    scores = _score_records(scoring, trajs, rewards, advantages, keep)
    store.write_scoring(scoring, scores)
    logged = trajs.reward.dropna()
    return RescoreResult(scoring, scores, float(logged.mean()) if len(logged) else None, groups,
                         outcomes=trajs.outcome.astype(float).tolist(), passed=passed, filtered=dict(report.dropped))


# ---------------------------------------------------------------- several runs, per task (Table 3)


@dataclass
class AcrossResult:
    """One scoring per run from normalising each shared task across all the runs' trajectories."""

    preference: dict[str, float]
    run_ids: list[str]
    tasks: list[str]
    scorings: dict[str, ScoringRecord]
    scores: dict[str, list[ScoreRecord]]
    preference_scores: dict[str, float]
    solved: dict[str, int]

    def summary(self) -> dict[str, Any]:
        """Per run: preference score, trajectories and tasks scored, solved (outcome == 1), scoring id."""
        return {
            "preference": self.preference,
            "across": self.run_ids,
            "tasks": len(self.tasks),
            "runs": [
                {"run_id": r, "scoring_id": self.scorings[r].scoring_id, "preference_score": self.preference_scores[r],
                 "trajectories": len(self.scores[r]), "tasks": len({s.task_id for s in self.scores[r]}),
                 "solved": self.solved[r]}
                for r in self.run_ids
            ],
        }


def rescore_across(store: Store, run_ids: Sequence[str], preference: str | dict[str, float]) -> AcrossResult:
    """Preference score of each run (paper Table 3) on the tasks all of them ran, stored as one scoring
    per run (rewards normalised across the runs; advantages are not defined and stored as 0)."""
    run_ids = list(dict.fromkeys(run_ids))                      # a repeated id would compare a run with itself
    if len(run_ids) < 2:
        raise LabInputError("--across: name at least one run other than the one being rescored")
    records = [queries.run(store, r) for r in run_ids]          # unknown ids fail before any work
    trajs = queries.trajectories_df(store, run_ids)
    task_sets = {r: set(trajs.task_id[trajs.run_id == r]) for r in run_ids}
    for r, tasks in task_sets.items():
        if not tasks:
            raise LabInputError(f"run '{r}' has no trajectories to rescore")
    common = set.intersection(*task_sets.values())
    if not common:
        raise LabInputError(f"runs {', '.join(run_ids)} share no task, so there is nothing to normalise across")
    features = {name: spec.get("model") for rec in records for name, spec in logged_features(rec.toolkit_json).items()}
    # the tool columns of the shared tasks' trajectories: a tool counted only elsewhere is not in P
    frame = FeatureFrame.of(trajs[trajs.task_id.isin(common)].reset_index(drop=True), features)
    rows = frame.rows
    tasks = list(dict.fromkeys(rows.task_id))
    pref = _preference(preference, frame.tools, features)
    # Eq. 2 with the task as the group (`lab.scoring`'s preference score); a run's score is the mean of
    # its trajectories' rewards, so the per-row rewards stored below are what it averages
    rewards = task_rewards(frame, pref)                          # (B,)
    scorings, scores, solved, by_run = {}, {}, {}, {}
    for r in run_ids:
        mine = (rows.run_id == r).to_numpy()
        scorings[r] = ScoringRecord(
            scoring_id=f"{r}:score-{uuid.uuid4().hex[:8]}", run_id=r, preference_json=json.dumps(pref.as_dict()),
            note=f"preference score (Table 3) across runs {', '.join(run_ids)} on {len(tasks)} shared tasks; "
                 "advantage not defined (0)",
        )
        scores[r] = _score_records(scorings[r], rows[mine], rewards[mine], np.zeros(int(mine.sum())),
                                   np.ones(int(mine.sum()), dtype=bool))
        solved[r] = int((rows.outcome[mine] == 1).sum())
        by_run[r] = float(rewards[mine].mean())
    for r in run_ids:                                           # written only once everything computed
        store.write_scoring(scorings[r], scores[r])
    return AcrossResult({k: v for k, v in pref.as_dict().items() if v}, run_ids, tasks, scorings, scores,
                        by_run, solved)


def _preference(preference: str | dict[str, float], tools: list[str], models: dict[str, str | None]) -> Preference:
    if isinstance(preference, str):
        return Preference.parse(preference, tools, models)
    return Preference.from_dict(preference, tools, models=models)


def _score_records(scoring: ScoringRecord, trajs: pd.DataFrame, rewards: np.ndarray, advantages: np.ndarray,
                   keep: np.ndarray) -> list[ScoreRecord]:
    return [
        ScoreRecord(scoring_id=scoring.scoring_id, run_id=row.run_id, task_id=row.task_id,
                    sample_idx=int(row.sample_idx),
                    train_step=int(row.train_step), reward=float(r), advantage=float(a), keep=bool(k))
        for row, r, a, k in zip(trajs.itertuples(), rewards, advantages, keep)
    ]


def _records(frame: pd.DataFrame, cls: type) -> list[Any]:
    """Rows as records; pandas' NaN / NaT for SQL NULL become None."""
    return [cls(**{k: (None if _is_null(v) else v) for k, v in row.items()}) for row in frame.to_dict(orient="records")]


def _is_null(value: Any) -> bool:
    return value is None or (not isinstance(value, (list, dict, str)) and bool(pd.isna(value)))
