"""Training: the per-step metrics a training run logs (`train_metrics`) and the held-out accuracy and
cost of the evaluation runs linked to it, refreshing while the run writes."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from app import data
from app.widgets import pick_run, run_page, store_or_stop

GROUPS = {"reward and outcome": ("reward/", "outcome/"), "loss and KL": ("loss", "kl", "entropy"), "filtered": ("filtered/",),
          "tool shares": ("tools/share/",), "cost and latency": ("cost", "latency")}


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
    if metrics.empty:
        st.info("No optimizer step logged yet.")
    else:
        for title, prefixes in GROUPS.items():
            columns = [c for c in metrics.columns if c != "step" and c != "created_at"
                       and any(c.startswith(p) or p in c for p in prefixes)]
            if columns:
                long = metrics.melt(id_vars="step", value_vars=columns, var_name="metric", value_name="value")
                st.plotly_chart(px.line(long, x="step", y="value", color="metric", markers=True, title=title),
                                key=f"train-{title}")
    linked = runs[runs.train_run_id == run_id].sort_values("train_step")
    st.subheader("Held-out evaluation against step")
    if linked.empty:
        st.info("No evaluation run is linked to this training run yet.")
        return
    st.plotly_chart(px.line(linked, x="train_step", y=["accuracy"], markers=True, title="held-out accuracy"),
                    key="eval-accuracy")
    st.plotly_chart(px.line(linked.assign(cost_per_trajectory=linked.cost_usd / linked.trajectories.clip(lower=1)),
                            x="train_step", y="cost_per_trajectory", markers=True, title="held-out cost per trajectory ($)"),
                    key="eval-cost")
    st.dataframe(linked[["run_id", "train_step", "accuracy", "cost_usd", "latency_s", "trajectories"]], hide_index=True)


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
