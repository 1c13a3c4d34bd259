"""Preference steering, live: move P and watch rewards, group winners and the ranking of systems move.

Nothing is re-run: `app.steering_logic` rescores the logged features (`lab.scoring`) with `lab.reward`. The vector
lives in the URL (`?p=outcome=1,compute=0.5`), so a steering state is a link.
"""

from __future__ import annotations

import streamlit as st

from app import data
from app.steering_logic import group_rewards, parse_vector, reward_summary, vector_text, zero_ranking_reason
from app.widgets import pick_runs, run_page, simulated_badge, store_or_stop
from lab.preference import preference_pairs
from lab.pricing import providers as price_providers
from lab.report.figures import preference_score_figure
from lab.scoring import FeatureFrame, preference_ranking

ROWS_SHOWN = 200  # of the per-trajectory rewards table; the summary above covers them all


def render() -> None:
    st.title("Preference steering")
    path, stamp, runs = store_or_stop()
    run_ids = pick_runs(runs)
    if not run_ids:
        st.info("Choose at least one evaluation run.")
        return
    simulated_badge(runs, run_ids)
    providers = ["logged", *price_providers()]
    provider = st.selectbox("Prices", providers, key="provider",
                            index=providers.index(st.query_params.get("pricing", "logged"))
                            if st.query_params.get("pricing", "logged") in providers else 0)
    st.query_params["pricing"] = provider
    if provider == "logged":
        trajs = data.trajectories(path, stamp, tuple(run_ids))
    else:  # every cost re-priced from the logged tokens
        trajs = data.repriced_trajectories(path, stamp, tuple(run_ids), provider)
    st.caption(f"total cost of these runs: ${trajs.cost_usd.sum():.4f} ({provider} prices)")
    _steer(data.features(path, stamp, tuple(run_ids), provider), run_ids)


@st.fragment
def _steer(features: FeatureFrame, run_ids: list[str]) -> None:
    """The slider -> rescore -> chart loop, re-run alone when a slider moves (a fragment)."""
    names = features.names
    values = parse_vector(st.query_params.get("p"), names)
    pairs = [p for split in ("train", "eval") for p in preference_pairs(split)]
    preset = st.selectbox("Preset (instruction, P)", ["-", *[p.instruction for p in pairs]], key="preset")
    if preset != "-":
        chosen = next(p for p in pairs if p.instruction == preset)
        values = {n: float(chosen.weights.get(n, chosen.weights.get(n.removeprefix("sim:"), 0.0))) for n in names}
    columns = st.columns(min(6, len(names)))
    for index, name in enumerate(names):
        values[name] = columns[index % len(columns)].slider(name, 0.0, 1.0, values[name], 0.05, key=f"p-{name}")
    st.query_params["p"] = vector_text(values)
    st.caption(f"P = {vector_text(values) or '0'}")

    table = preference_ranking(features, run_ids, values)
    st.markdown("**Ranking:** " + " > ".join(f"{r.run_id} ({r.preference_score:.3f})" for r in table.itertuples()))
    reason = zero_ranking_reason(features, table, values)
    if reason:
        st.caption(reason)
    left, right = st.columns(2)
    left.subheader("Ranking of systems")
    left.dataframe(table, hide_index=True, key="ranking")
    right.plotly_chart(preference_score_figure(table), key="ranking-chart")

    rewards = group_rewards(features, values)
    st.subheader("Rewards and advantages (Eq. 2 within each group)")
    if rewards.groupby(["run_id", "group"]).size().max() < 2:
        st.info("One sample per task: a group has one member, so every reward is 0. Evaluate with --samples 2+ "
                "(or compare runs above, where each task's trajectories of all runs are normalised together).")
    st.dataframe(reward_summary(rewards), hide_index=True, key="reward-summary")
    st.caption(f"first {min(len(rewards), ROWS_SHOWN)} of {len(rewards)} trajectories")
    st.dataframe(rewards.head(ROWS_SHOWN), hide_index=True, key="rewards")


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
