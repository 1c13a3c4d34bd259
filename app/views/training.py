"""Training: the per-step metrics a training run logs (`train_metrics`) and the held-out accuracy and
cost of the evaluation runs linked to it, refreshing while the run writes."""

from __future__ import annotations

import streamlit as st

from app import data
from app.widgets import pick_run, run_page, store_or_stop
from lab.report.figures import heldout_figure, train_metrics_figure

GROUPS = {"reward and outcome": ("reward/", "outcome/"), "loss and KL": ("loss", "kl", "entropy"),
          "filtered": ("filtered/",), "tool shares": ("tools/share/",), "cost and latency": ("cost", "latency")}


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
                st.plotly_chart(train_metrics_figure(metrics, columns, title), key=f"train-{title}")
    linked = runs[runs.train_run_id == run_id].sort_values("train_step")
    st.subheader("Held-out evaluation against step")
    if linked.empty:
        st.info("No evaluation run is linked to this training run yet.")
        return
    st.plotly_chart(heldout_figure(linked), key="heldout")
    st.dataframe(linked[["run_id", "train_step", "accuracy", "cost_usd", "latency_s", "trajectories"]], hide_index=True)


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
