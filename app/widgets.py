"""Widgets the pages share: the store banner, run and task pickers bound to the URL, page links.

Why URL-bound pickers: a run, a task or a preference vector chosen on one page is a link another
user can open (`/rollouts?run=...&task=...`), and the pages link to each other by setting the same
query parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from app import data
from lab.errors import LabInputError

SIMULATED_NOTE = "simulated models or a scripted orchestrator (the offline world): not a measurement of real models"


def store_or_stop() -> tuple[Path, int, pd.DataFrame]:
    """(store path, stamp, runs), or a helpful message and `st.stop()` when there is nothing to show."""
    path = data.store_path()
    st.sidebar.caption(f"store: `{path}`")
    try:
        runs = data.runs(path, data.stamp(path))
    except LabInputError as exc:
        st.info(f"{exc}")
        st.stop()
    if runs.empty:
        st.info(f"No runs in {path} yet. Run `orchestra demo`, or `orchestra eval --db {path}`, then refresh.")
        st.stop()
    return path, data.stamp(path), runs


def run_label(row: Any) -> str:
    """`trained · eval-20261205-... · hf:runs/cpu-tiny [simulated]`: the name first, as people call runs."""
    mark = " [simulated]" if getattr(row, "simulated", False) else ""
    mark += " [privileged]" if getattr(row, "privileged", False) else ""
    name = getattr(row, "name", "")
    head = f"{name} · {row.run_id}" if isinstance(name, str) and name and name != row.run_id else row.run_id
    return f"{head} · {row.kind} · {row.orchestrator}{mark}"


def main_run(runs: pd.DataFrame) -> str | None:
    """The run a page opens on without a link: the demo's trained model (its newest `trained` evaluation)."""
    trained = runs[(runs.kind == "eval") & (runs.name == "trained")].sort_values("started_at")
    return trained.run_id.iloc[-1] if len(trained) else None


def pick_run(runs: pd.DataFrame, label: str = "Run", kinds: tuple[str, ...] = ("eval", "train"),
             key: str = "run", default: str | None = None) -> str | None:
    """A run chosen in a select box whose value lives in the URL's `?run=`; without one, `default`."""
    choices = runs[runs.kind.isin(kinds)]
    if choices.empty:
        st.info(f"No {' or '.join(kinds)} runs in this store yet.")
        return None
    ids = list(choices.run_id)
    wanted = st.query_params.get(key) or default
    index = ids.index(wanted) if wanted in ids else 0
    labels = {r.run_id: run_label(r) for r in choices.itertuples()}
    chosen = st.selectbox(label, ids, index=index, format_func=labels.get, key=f"pick-{key}")
    st.query_params[key] = chosen
    return chosen


def story_runs(runs: pd.DataFrame) -> list[str]:
    """The demo's compared systems (baselines, best-route, warm start, trained), the newest run of each
    name, in the demo's order; [] in a store the demo did not write."""
    from orchestra.demo.plan import COMPARED  # the demo plan sits below the app (layers: tests/test_imports.py)

    evals = runs[runs.kind == "eval"].sort_values("started_at")
    newest = evals.drop_duplicates("name", keep="last").set_index("name").run_id
    return [newest[name] for name in COMPARED if name in newest.index]


def pick_runs(runs: pd.DataFrame, label: str = "Runs", key: str = "runs", default: int = 4) -> list[str]:
    """Several eval runs, kept in the URL as `?runs=a,b`. Without a link, the demo's compared systems
    when the store has them (the story the demo tells), else the first `default` runs."""
    ids = list(runs[runs.kind == "eval"].run_id)
    wanted = [r for r in (st.query_params.get(key) or "").split(",") if r in ids]
    labels = {r.run_id: run_label(r) for r in runs.itertuples()}
    chosen = st.multiselect(label, ids, default=wanted or story_runs(runs) or ids[:default], format_func=labels.get,
                            key=f"pick-{key}")
    st.query_params[key] = ",".join(chosen)
    return chosen


def simulated_badge(runs: pd.DataFrame, run_ids: list[str]) -> None:
    if runs[runs.run_id.isin(run_ids)].simulated.any():
        st.caption(f"⚠ {SIMULATED_NOTE}")


def run_page(render: Any) -> None:
    """Render a page; bad input or a locked store becomes one red line on the page, not a traceback
    (any other exception is a bug and keeps Streamlit's traceback)."""
    try:
        render()
    except LabInputError as exc:
        st.error(str(exc))
