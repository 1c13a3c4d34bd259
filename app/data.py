"""What the app reads, cached per store file state: the only module of the app that touches the store.

Why this shape: DuckDB locks across processes, so a connection held by the app (say in
`st.cache_resource`) would stop a training run from writing. Every read here opens the store's
short-lived read-only connection (`Store(read_only=True)`, which also retries while a writer holds
the lock) and closes it; results are cached with `st.cache_data` under the file's modification
time, so a page re-renders from memory until a run writes, and then reads afresh. A `ttl` bounds the
cache for a writer whose mtime granularity hides a change.

Every loader takes the path and the stamp as its first two arguments: the stamp is never used in the
body, it only keys the cache (so it must not start with an underscore: Streamlit leaves such
arguments out of the key).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import streamlit as st

from lab.report import metrics
from lab.report.api import repriced_step_costs, run_info_frame, tools_frame
from lab.report.curve import contrast_curve_df, learning_curve_df
from lab.report.figures import run_colors, tool_colors
from lab.report.metrics.tools import PRIVILEGED
from lab.scoring import FeatureFrame
from lab.store import Store, queries
from lab.store.spool import spool_dir
from lab.store.store import resolve_db_path
from lab.toolspec import logged_features

TTL_S = 30
#: Bootstrap resamples for the app's intervals: enough for two decimals, fast enough for a page.
RESAMPLES = 1000


def store_path() -> Path:
    """The store the app was started on: `orchestra app --db` passes it as $ORCHESTRA_DB."""
    return resolve_db_path(os.environ.get("ORCHESTRA_DB") or None).resolve()


def stamp(path: Path) -> int:
    """The store's modification time in ns (0 when it does not exist): the cache key of every read. The
    store is its file and its spool folder, whose time moves when a rank or shard adds a segment
    (`lab.store.spool`) or a compaction removes them."""
    spool = spool_dir(path)
    times = [p.stat().st_mtime_ns for p in (path, spool) if p.exists()]
    return max(times, default=0)


def _store(path: Path) -> Store:
    return Store(path, read_only=True, timeout_s=10.0)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def runs(path: Path, stamp_ns: int) -> pd.DataFrame:
    """Every run with its summary (accuracy, cost, latency, counts) and what its config says."""
    store = _store(path)
    summary = queries.runs_summary_df(store)
    raw = queries.runs_df(store).set_index("run_id")
    configs = raw.config_json.map(lambda text: json.loads(text or "{}"))
    summary["toolkit"] = summary.run_id.map(lambda r: _toolkit_name(raw.toolkit_json.get(r)))
    summary["simulated"] = summary.run_id.map(lambda r: _has_simulated(raw.toolkit_json.get(r), summary, r))
    variants = configs.map(lambda c: c.get("variant") or {})
    summary["preference"] = summary.run_id.map(lambda r: _preference_text(variants.get(r, {})))
    summary["max_turns"] = summary.run_id.map(lambda r: variants.get(r, {}).get("max_turns"))
    summary["train_run_id"] = summary.run_id.map(lambda r: configs.get(r, {}).get("train_run_id"))
    summary["train_step"] = summary.run_id.map(lambda r: configs.get(r, {}).get("train_step"))
    summary["instruction"] = summary.run_id.map(lambda r: configs.get(r, {}).get("preference_instruction") or "")
    summary["privileged"] = summary.orchestrator.isin(list(PRIVILEGED))
    return summary


def _toolkit_name(toolkit_json: str | None) -> str:
    return json.loads(toolkit_json).get("name", "") if toolkit_json else ""


def _has_simulated(toolkit_json: str | None, summary: pd.DataFrame, run_id: str) -> bool:
    """A run is simulated when any tool of its toolkit is a simulated model or its orchestrator is scripted."""
    orchestrator = str(summary.loc[summary.run_id == run_id, "orchestrator"].iloc[0] or "")
    tools = json.loads(toolkit_json).get("tools", []) if toolkit_json else []
    return orchestrator.startswith("scripted:") or any(t.get("simulated") or str(t.get("name", "")).startswith("sim:")
                                                       for t in tools)


def _preference_text(variant: dict) -> str:
    """The run's preference as `name=value,...` (its variant's P; empty when it has none)."""
    value = variant.get("preference")
    if isinstance(value, dict):
        return ",".join(f"{k}={v:g}" for k, v in value.items() if v)
    return str(value or "")


@st.cache_data(ttl=TTL_S, show_spinner=False)
def palette(path: Path, stamp_ns: int) -> tuple[dict[str, str], dict[str, str]]:
    """(run id -> colour, tool -> colour) over the whole store, oldest run first and tools sorted: a run and a
    tool keep one colour on every page and in every chart, whichever runs a page shows."""
    raw = queries.runs_df(_store(path)).sort_values(["started_at", "run_id"])
    tools = {name for toolkit in raw.toolkit_json for name in logged_features(toolkit)}
    return run_colors(list(raw.run_id)), tool_colors(list(tools))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def run_configs(path: Path, stamp_ns: int) -> dict[str, str]:
    """Each run's config as logged (JSON text): what the Playground plays an orchestrator under."""
    raw = queries.runs_df(_store(path))
    return dict(zip(raw.run_id, raw.config_json.fillna("{}")))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def trajectories(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> pd.DataFrame:
    return queries.trajectories_df(_store(path), list(run_ids))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def tool_calls(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> pd.DataFrame:
    """Calls per tool per trajectory, the counts the reward uses (`queries.tool_calls_df`)."""
    return queries.tool_calls_df(_store(path), list(run_ids))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def steps(path: Path, stamp_ns: int, run_id: str, task_id: str | None = None,
          sample_idx: int | None = None) -> pd.DataFrame:
    return queries.steps_df(_store(path), run_id, task_id, sample_idx)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def tasks(path: Path, stamp_ns: int) -> pd.DataFrame:
    return queries.tasks_df(_store(path))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def search(path: Path, stamp_ns: int, run_id: str, text: str, limit: int = 200) -> pd.DataFrame:
    return queries.search_steps(_store(path), run_id, text, limit)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def repriced_trajectories(path: Path, stamp_ns: int, run_ids: tuple[str, ...], pricing: str) -> pd.DataFrame:
    """The runs' trajectories with `cost_usd` re-priced under `pricing`, step by step from the logged
    tokens (the same arithmetic as `orchestra reprice`)."""
    store = _store(path)
    trajs = queries.trajectories_df(store, list(run_ids))
    key = ["run_id", "task_id", "sample_idx", "train_step"]
    costs = repriced_step_costs(store, trajs, list(run_ids), pricing).groupby(key).new_cost_usd.sum()
    return trajs.assign(cost_usd=trajs.set_index(key).index.map(costs).fillna(0.0).to_numpy(float))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def features(path: Path, stamp_ns: int, run_ids: tuple[str, ...], pricing: str = "logged") -> FeatureFrame:
    """The runs' Eq. 2 features, parsed once per store state (the steering sliders only re-weigh them), with
    the columns the report and `orchestra rescore` use: the runs' toolkit features first."""
    trajs = (trajectories(path, stamp_ns, run_ids) if pricing == "logged"
             else repriced_trajectories(path, stamp_ns, run_ids, pricing))
    store = _store(path)
    return FeatureFrame.of(trajs, tools_frame([queries.run(store, r) for r in run_ids]).tool_name)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def feature_models(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> dict[str, str]:
    """Feature (tool or slot) -> the model behind it in these runs' toolkits, e.g. `answer-1` -> `gpt-5`:
    how a slider says which model a slot is, and how a weight that names a model finds its slots."""
    store = _store(path)
    tools = tools_frame([queries.run(store, r) for r in run_ids])
    return {r.tool_name: r.model for r in tools.itertuples() if isinstance(r.model, str) and r.model}


@st.cache_data(ttl=TTL_S, show_spinner=False)
def tool_tables(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The report's tool-call table (paper Table 15) and delegation-bias table (Fig. 3) alone, without
    the rest of the report (its bootstraps cost more than these on a large store)."""
    store = _store(path)
    records = [queries.run(store, r) for r in run_ids]
    calls = tool_calls(path, stamp_ns, run_ids)
    tools, info = tools_frame(records), run_info_frame(records)
    return (metrics.tool_call_table(calls, trajectories(path, stamp_ns, run_ids), list(run_ids), tools),
            metrics.delegation_bias(calls, tools, info, list(run_ids)))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def costs(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> pd.DataFrame:
    """Mean cost and latency per task and totals per run (`metrics.cost_latency_table`)."""
    return metrics.cost_latency_table(trajectories(path, stamp_ns, run_ids), list(run_ids))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def paired(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> pd.DataFrame:
    """Every pair of runs on their shared tasks (`metrics.paired_comparisons`)."""
    return metrics.paired_comparisons(trajectories(path, stamp_ns, run_ids), list(run_ids), n_resamples=RESAMPLES)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def turn_budgets(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> pd.DataFrame:
    """Accuracy and cost against the turn budget for runs that differ only in it (paper Fig. 6)."""
    store = _store(path)
    info = run_info_frame([queries.run(store, r) for r in run_ids])
    return metrics.turn_budget_curves(info, accuracy(path, stamp_ns, run_ids), costs(path, stamp_ns, run_ids))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def accuracy(path: Path, stamp_ns: int, run_ids: tuple[str, ...]) -> pd.DataFrame:
    """Accuracy per run with its bootstrap interval over tasks (`lab.report.metrics.accuracy_table`)."""
    return metrics.accuracy_table(trajectories(path, stamp_ns, run_ids), list(run_ids), n_resamples=RESAMPLES)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def train_metrics(path: Path, stamp_ns: int, run_id: str) -> pd.DataFrame:
    return queries.train_metrics_df(_store(path), run_id)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def learning_curve(path: Path, stamp_ns: int, run_id: str) -> pd.DataFrame:
    """The training run's learning curve (`lab.report.curve.learning_curve_df`); `attrs["scale"]` its scale."""
    return learning_curve_df(_store(path), run_id, n_resamples=RESAMPLES)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def contrast_curve(path: Path, stamp_ns: int, run_id: str) -> pd.DataFrame:
    """Instruction following along the training run (`lab.report.curve.contrast_curve_df`)."""
    return contrast_curve_df(_store(path), run_id, n_resamples=RESAMPLES)
