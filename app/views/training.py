"""Training: a training run's instruction following first (at each evaluated step, how differently the
policy spends under an accuracy-only and a cost-saving instruction, minus the first evaluated step's: the
paper's claim, which U alone cannot show since U rises for any cheaper policy), then its learning curve
(its policy evaluated on fixed tasks x instructions at step 0, every `lab_eval_steps` and after the last
step: U with its band, accuracy, cost and latency per instruction, and the probe of the best call when
the run logs it) and what each GRPO step trained on (reward, groups carrying gradient, filter reasons,
cost, latency), refreshing while the run writes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data
from app.widgets import pick_run, run_page, store_or_stop
from lab.report.figures import (
    PROBE,
    contrast_curve_figure,
    learning_curve_figure,
    train_metrics_figure,
    training_signals_figure,
)

#: `train_metrics` columns not in the signals figure, one figure per group.
GROUPS = {"loss and KL": ("loss", "kl", "entropy"), "tool shares": ("tools/share/",)}


def render() -> None:
    st.title("Training")
    _page()


@st.fragment(run_every=5)
def _page() -> None:
    path, stamp, runs = store_or_stop()
    run_id = pick_run(runs, "Training run", kinds=("train",))
    if run_id is None:
        return
    status = runs.set_index("run_id").status.get(run_id)
    if status == "running":
        st.caption("This run is training; the page refreshes every 5 s.")
    metrics = data.train_metrics(path, stamp, run_id)
    _following(data.contrast_curve(path, stamp, run_id))
    _curve(data.learning_curve(path, stamp, run_id), metrics)
    st.subheader("Training signals per step")
    if metrics.empty:
        st.info("No optimizer step logged yet.")
        return
    st.plotly_chart(training_signals_figure(metrics), key="signals")
    for title, prefixes in GROUPS.items():
        columns = [c for c in metrics.columns if c not in ("step", "created_at")
                   and any(c.startswith(p) or p in c for p in prefixes)]
        if columns:
            st.plotly_chart(train_metrics_figure(metrics, columns, title), key=f"train-{title}")


def _following(contrast: pd.DataFrame) -> None:
    """Instruction following along the run: the change in contrast per step, its table, and any step left
    out (its runs could not be paired with the first step's)."""
    st.subheader("Instruction following")
    for reason in contrast.attrs.get("skipped", []):
        st.warning(f"Left out of the contrast: {reason}.")
    if contrast.empty:
        st.info("Needs the curve's accuracy-only and cost-saving (or speed) instructions evaluated at two steps: "
                "their contrast is what preference-aware RL should raise.")
        return
    st.caption("Contrast = mean over the fixed tasks of ln(spend under the accuracy-only instruction / spend under "
               "the cost-saving one), and of latency against a speed instruction where the curve has one; "
               "rollouts paired by task and sample seed: 0 for a policy that ignores the instruction, unchanged "
               "for one that got cheaper under both. Plotted: this step's minus the first evaluated step's, 95% "
               "bootstrap band over tasks.")
    st.plotly_chart(contrast_curve_figure(contrast), key="following")
    shown = contrast.rename(columns={"start": "first step", "trained": "this step", "delta": "change"})
    st.dataframe(shown[["step", "pair", "measure", "first step", "this step", "change", "ci_low", "ci_high",
                        "n_tasks"]], hide_index=True)


def _curve(curve: pd.DataFrame, metrics: pd.DataFrame) -> None:
    """The learning curve, how its scale was fixed, and its points as a table."""
    st.subheader("Learning curve")
    probe = PROBE in metrics and metrics[PROBE].notna().any()
    if curve.empty and not probe:
        st.info("No evaluation of this run's policy yet: the first (step 0) runs before the first update.")
        return
    if not curve.empty:
        scale = curve.attrs.get("scale", {})
        st.caption(f"U = w_o·solved − w_c·cost / c_ref − w_l·latency / l_ref per rollout, w = the instruction's P; "
                   f"c_ref = {100 * scale.get('c_ref', float('nan')):.3f}¢ and l_ref = "
                   f"{scale.get('l_ref', float('nan')):.1f} s per task, fixed once for the run "
                   f"({scale.get('basis', '')}). Band: 95% bootstrap over the fixed tasks.")
    st.plotly_chart(learning_curve_figure(curve, metrics), key="curve")
    if not curve.empty:
        st.dataframe(curve.drop(columns="run_id"), hide_index=True,
                     column_config={"cost": st.column_config.NumberColumn("cost (¢/task)", format="%.3f"),
                                    "latency": st.column_config.NumberColumn("latency (s/task)", format="%.1f")})


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
