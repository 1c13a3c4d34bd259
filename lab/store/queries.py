"""Named queries over the store, each returning a pandas DataFrame: the one home for read SQL.

The CLI, the notebooks and the app call these instead of writing SQL, so a schema change is fixed
here once. Every call opens a read-only connection and closes it before returning (see
`lab.store.store` for why), so results are snapshots: call again to see newer rows.

Frames keep the table's column names (those of `lab.records`); an empty result still has them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd

from lab.errors import LabInputError
from lab.records import RunRecord
from lab.store.store import Store

_TRAJECTORY_ORDER = "run_id, task_id, sample_idx, train_step"


def runs_df(store: Store) -> pd.DataFrame:
    """All runs, newest first."""
    return store._read("SELECT * FROM runs ORDER BY started_at DESC, run_id")


def runs_summary_df(store: Store) -> pd.DataFrame:
    """Runs with their finished trajectories (cut ones excluded), accuracy (mean outcome over those; with
    a judge it follows the judge), accuracy_exact and accuracy_judge (the same over `exact_correct` and
    `judge_correct`: by the model-free grade and by the judge rule; NaN where not graded so, e.g. no
    judge), errors (trajectories with status `error`, included in accuracy as failures), cut (rollouts
    the budget stopped; a resume re-runs them), total cost of everything the run's rollouts spent, the
    judge's cost apart from it (`judge_cost_usd`), mean latency, and unjudged (trajectories with a
    criterion nobody judged: a null in `criteria_json`, e.g. tau2 NL assertions without a judge model;
    their outcome rests on the judged criteria alone)."""
    return store._read(
        "SELECT r.run_id, r.kind, r.name, r.orchestrator, r.benchmark, r.pricing, r.status, r.started_at, "
        "r.finished_at, count(t.task_id) FILTER (WHERE t.status <> 'cut') AS trajectories, "
        "avg(t.outcome) FILTER (WHERE t.status <> 'cut') AS accuracy, "
        "avg(CAST(t.exact_correct AS DOUBLE)) FILTER (WHERE t.status <> 'cut') AS accuracy_exact, "
        "avg(CAST(t.judge_correct AS DOUBLE)) FILTER (WHERE t.status <> 'cut') AS accuracy_judge, "
        "count(t.task_id) FILTER (WHERE t.status = 'error') AS errors, "
        "count(t.task_id) FILTER (WHERE t.status = 'cut') AS cut, "
        "coalesce(sum(t.cost_usd), 0) AS cost_usd, coalesce(sum(t.judge_cost_usd), 0) AS judge_cost_usd, "
        "avg(t.latency_s) FILTER (WHERE t.status <> 'cut') AS latency_s, "
        "count(t.task_id) FILTER (WHERE t.status <> 'cut' AND t.criteria_json LIKE '%: null%') AS unjudged "
        "FROM runs r LEFT JOIN trajectories t USING (run_id) GROUP BY ALL ORDER BY r.started_at DESC, r.run_id"
    )


def run(store: Store, run_id: str) -> RunRecord:
    """One run as a record; an unknown id is bad input (it usually came from the command line)."""
    return store.run_record(run_id)


def run_status(store: Store, run_id: str) -> str | None:
    """The run's status (`running`, `finished`, `failed`, ...), or None when the store has no such run."""
    frame = store._read("SELECT status FROM runs WHERE run_id = ?", [run_id])
    return None if frame.empty else str(frame.status.iloc[0])


def resolve_run_id(store: Store, ref: str) -> str:
    """The run id a user means by `ref`: a run id; else the newest run named `ref`; else the one run whose
    id starts with `ref`. Names let commands be written before their hash ids exist (the README's
    `orchestra report cascade trained` on the demo store) and keep meaning the latest result when a
    run is redone under a new id (a retrained model, an edited toolkit). Unknown or ambiguous is bad input."""
    frame = store._read(
        "SELECT run_id, name FROM runs WHERE run_id = $ref OR name = $ref OR starts_with(run_id, $ref) "
        "ORDER BY started_at DESC, run_id", {"ref": ref})
    for matches in (frame[frame.run_id == ref], frame[frame.name == ref]):
        if len(matches):
            return str(matches.run_id.iloc[0])
    if len(frame) == 1:
        return str(frame.run_id.iloc[0])
    if len(frame) > 1:
        raise LabInputError(f"run {ref!r} in {store.path} is ambiguous: {len(frame)} run ids start with it "
                            f"({', '.join(frame.run_id.head(5))}{', ...' if len(frame) > 5 else ''})")
    raise LabInputError(f"unknown run {ref!r} in {store.path} (neither a run id, a run name nor an id prefix; "
                        "see `orchestra runs`)")


def linked_evals_df(store: Store, train_run_id: str) -> pd.DataFrame:
    """The evaluation runs a training run made of its own policy (`kind='eval'` runs whose config names
    it), one row each with `train_step` and the columns of `runs_summary_df`, by step."""
    linked = store._read(
        "SELECT run_id, CAST(json_extract(config_json, '$.train_step') AS INTEGER) AS train_step FROM runs "
        "WHERE json_extract_string(config_json, '$.train_run_id') = ?", [train_run_id])
    return (linked.merge(runs_summary_df(store), on="run_id")
            .sort_values(["train_step", "run_id"], kind="stable").reset_index(drop=True))


def trajectories_df(store: Store, run_ids: Sequence[str] | None = None, include_cut: bool = False) -> pd.DataFrame:
    """Trajectories of the given runs (all runs when `run_ids` is None), in key order.

    Rollouts cut by a budget (status `cut`) are no result, so they are left out unless `include_cut`
    (e.g. to add up what a run has spent)."""
    cut = "" if include_cut else " AND status <> 'cut'"
    return store._read(
        f"SELECT * FROM trajectories WHERE ($run_ids IS NULL OR list_contains($run_ids, run_id)){cut} "
        f"ORDER BY {_TRAJECTORY_ORDER}",
        {"run_ids": None if run_ids is None else list(run_ids)},
    )


def steps_df(store: Store, run_id: str, task_id: str | None = None, sample_idx: int | None = None) -> pd.DataFrame:
    """Steps of one run, optionally narrowed to one task and one sample, in the order they ran."""
    return store._read(
        "SELECT * FROM steps WHERE run_id = $run_id "
        "AND ($task_id IS NULL OR task_id = $task_id) "
        "AND ($sample_idx IS NULL OR sample_idx = $sample_idx) "
        f"ORDER BY {_TRAJECTORY_ORDER}, turn, call_idx",
        {"run_id": run_id, "task_id": task_id, "sample_idx": sample_idx},
    )


def search_steps(store: Store, run_id: str, text: str, limit: int = 200) -> pd.DataFrame:
    """Full-text search of one run: steps whose reasoning, arguments or observation contain `text`
    (any letter case), and final answers that do (as kind `final_answer`), in trajectory order.

    Columns: task_id, sample_idx, turn, kind, tool_name, where (the field that matched), snippet (the
    text around the first match)."""
    frame = store._read(
        "WITH hits AS ("
        " SELECT task_id, sample_idx, train_step, turn, call_idx, kind, tool_name, "
        "  CASE WHEN observation ILIKE $like THEN 'observation' WHEN reasoning ILIKE $like THEN 'reasoning' "
        "   ELSE 'arguments' END AS \"where\", "
        "  CASE WHEN observation ILIKE $like THEN observation WHEN reasoning ILIKE $like THEN reasoning "
        "   ELSE arguments_json END AS body "
        " FROM steps WHERE run_id = $run_id AND (observation ILIKE $like OR reasoning ILIKE $like "
        "  OR arguments_json ILIKE $like) "
        " UNION ALL SELECT task_id, sample_idx, train_step, 1000000 AS turn, 0 AS call_idx, 'final_answer' AS kind, "
        "  NULL AS tool_name, 'final_answer' AS \"where\", final_answer AS body "
        " FROM trajectories WHERE run_id = $run_id AND final_answer ILIKE $like) "
        "SELECT * FROM hits ORDER BY task_id, sample_idx, train_step, turn, call_idx LIMIT $limit",
        {"run_id": run_id, "like": f"%{_escape_like(text)}%", "limit": limit},
    )
    lowered = text.lower()
    frame["snippet"] = [_snippet(body or "", lowered) for body in frame.pop("body")]
    return frame


def _escape_like(text: str) -> str:
    """`text` for a LIKE pattern with the default escape: % and _ match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _snippet(body: str, lowered: str, width: int = 80) -> str:
    at = body.lower().find(lowered)
    start = max(0, at - width)
    return (("..." if start else "") + body[start:at + len(lowered) + width]
            + ("..." if at + len(lowered) + width < len(body) else ""))


def tasks_df(store: Store, benchmark: str | None = None) -> pd.DataFrame:
    """Tasks of one benchmark (all when None)."""
    return store._read(
        "SELECT * FROM tasks WHERE $benchmark IS NULL OR benchmark = $benchmark ORDER BY benchmark, task_id",
        {"benchmark": benchmark},
    )


def scorings_df(store: Store, run_id: str) -> pd.DataFrame:
    """Re-scorings of one run, oldest first."""
    return store._read("SELECT * FROM scorings WHERE run_id = ? ORDER BY created_at, scoring_id", [run_id])


def scores_df(store: Store, scoring_id: str) -> pd.DataFrame:
    """Per-trajectory rewards and advantages under one scoring."""
    return store._read(
        f"SELECT * FROM scores WHERE scoring_id = ? ORDER BY {_TRAJECTORY_ORDER}", [scoring_id]
    )


def tool_calls_df(store: Store, run_ids: Sequence[str]) -> pd.DataFrame:
    """Calls per reward feature per trajectory: the trajectories' `tool_counts_json` (executed calls per
    tool, or per paper-toolkit slot; malformed calls are format errors and count for no tool), the very
    numbers the reward uses. Cut rollouts are left out.

    Columns: run_id, task_id, sample_idx, train_step, tool_name, n_calls. A trajectory that called no
    tool has no rows.
    """
    return store._read(  # the JSON is unnested in DuckDB: 4x faster than json.loads per row
        "SELECT run_id, task_id, sample_idx, train_step, j.key AS tool_name, CAST(j.value AS BIGINT) AS n_calls "
        "FROM trajectories, json_each(coalesce(tool_counts_json, '{}')) AS j "
        "WHERE list_contains(?, run_id) AND status <> 'cut' AND CAST(j.value AS BIGINT) <> 0 "
        f"ORDER BY {_TRAJECTORY_ORDER}, j.key",
        [list(run_ids)],
    )


def token_trajectories_df(store: Store, run_id: str, train_step: int | None = None) -> pd.DataFrame:
    """Token ids, masks and logprobs of one run (one training step when given), for the trainer and for
    replaying what it trained on: one row per rollout, or under the round protocol one per round, in order."""
    return store._read(
        "SELECT * FROM token_trajectories WHERE run_id = $run_id "
        "AND ($train_step IS NULL OR train_step = $train_step) "
        f"ORDER BY {_TRAJECTORY_ORDER}, round_idx",
        {"run_id": run_id, "train_step": train_step},
    )


def train_metrics_df(store: Store, run_id: str) -> pd.DataFrame:
    """One row per optimizer step of a training run: `step`, `created_at` and one column per slash-key
    metric (`reward/mean`, `filtered/homogeneous`, `tools/share/<feature>`...; see `trainer.metrics`)."""
    raw = store._read("SELECT step, created_at, metrics_json FROM train_metrics WHERE run_id = $run_id ORDER BY step",
                      {"run_id": run_id})
    metrics = pd.DataFrame([json.loads(text) for text in raw.metrics_json], index=raw.index)
    return pd.concat([raw[["step", "created_at"]], metrics], axis=1)
