"""Preference steering: what the trained model does under each instruction, and P moved by hand over logged runs.

Two questions, in this order. First, does the model follow instructions? The behaviour panel lays the
evaluation runs of one orchestrator under different preferences side by side (accuracy with its CI, cents
and seconds per task, its tool shares). Second, which system would a user with preference P pick? The
sliders re-weigh the logged runs' Eq. 2 features (`app.steering_logic`, `lab.scoring`, `lab.reward`):
nothing is re-run here; the Playground runs a model live. The vector lives in the URL
(`?p=outcome=1,compute=0.5`), so a steering state is a link.
"""

from __future__ import annotations

import streamlit as st

from app import data
from app.navigation import page
from app.steering_logic import (
    behaviour_runs,
    behaviour_table,
    group_rewards,
    parse_vector,
    preset_values,
    presets_for,
    reward_summary,
    slider_label,
    steered_orchestrators,
    vector_text,
    zero_ranking_reason,
)
from app.widgets import pick_runs, run_page, simulated_badge, store_or_stop
from lab.preference import preference_pairs
from lab.pricing import providers as price_providers
from lab.report.figures import preference_score_figure, tool_share_figure
from lab.scoring import FeatureFrame, preference_ranking

ROWS_SHOWN = 200  # of the per-trajectory rewards table; the summary above covers them all


def render() -> None:
    st.title("Preference steering")
    path, stamp, runs = store_or_stop()
    st.page_link(page("playground"), label="Steer a live orchestrator in the Playground", icon="▶")
    _behaviour(path, stamp, runs)
    st.subheader("Re-weigh logged runs under a preference P")
    run_ids = pick_runs(runs)
    privileged = set(runs[runs.privileged].run_id) & set(run_ids)
    if privileged:
        hide = st.toggle(f"Hide privileged runs ({', '.join(sorted(privileged))}: they read the grader)",
                         key="hide-privileged")
        run_ids = [r for r in run_ids if not (hide and r in privileged)]
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
    _steer(data.features(path, stamp, tuple(run_ids), provider), run_ids,
           data.feature_models(path, stamp, tuple(run_ids)), privileged)


def _behaviour(path, stamp, runs) -> None:
    """One orchestrator's evaluations under different instructions, side by side."""
    orchestrators = steered_orchestrators(runs)
    st.subheader("Does the model follow its instructions?")
    if not orchestrators:
        st.caption("No orchestrator here was evaluated under two or more preferences (`orchestra eval "
                   "--preference ...`, or the demo's sweep).")
        return
    trained = runs[(runs.kind == "eval") & (runs.name == "trained")].sort_values("started_at").orchestrator
    default = trained.iloc[-1] if len(trained) and trained.iloc[-1] in orchestrators else orchestrators[0]
    orchestrator = st.selectbox("Orchestrator", orchestrators, index=orchestrators.index(default), key="behaviour-of")
    chosen = behaviour_runs(runs, orchestrator)
    turns = sorted(int(t) for t in chosen.max_turns.dropna().unique())
    if len(turns) > 1:  # one budget at a time: a longer budget changes behaviour by itself
        budget = st.radio("Turn budget", turns, index=len(turns) - 1 if 20 not in turns else turns.index(20),
                          horizontal=True, key="behaviour-turns")
        chosen = chosen[chosen.max_turns == budget]
    key = tuple(chosen.run_id)
    shares = data.tool_tables(path, stamp, key)[0]
    table = behaviour_table(chosen, data.accuracy(path, stamp, key), data.costs(path, stamp, key), shares)
    st.dataframe(table.drop(columns=["run_id", "turns"]), hide_index=True, key="behaviour", column_config={
        "instruction": st.column_config.TextColumn(width="medium"), "P": st.column_config.TextColumn(width="small"),
        "accuracy": st.column_config.NumberColumn(format="%.3f"),
        "¢/task": st.column_config.NumberColumn(format="%.3f"), "s/task": st.column_config.NumberColumn(format="%.1f")})
    names = dict(zip(table.run_id, table.run))
    st.plotly_chart(tool_share_figure(shares.assign(run_id=shares.run_id.map(names)), list(table.run)),
                    key="behaviour-shares")


@st.fragment
def _steer(features: FeatureFrame, run_ids: list[str], models: dict[str, str], privileged: set[str]) -> None:
    """The slider -> rescore -> chart loop, re-run alone when a slider moves (a fragment)."""
    names = features.names
    start = parse_vector(st.query_params.get("p"), names)
    for name in names:  # the sliders' state starts from the link; afterwards it is theirs (and a preset's)
        st.session_state.setdefault(f"p-{name}", start[name])
    pairs = presets_for([p for split in ("train", "eval") for p in preference_pairs(split)], names, models)
    by_text = {p.instruction: p for p in pairs}

    def apply_preset() -> None:  # before the sliders are drawn: a keyed slider reads its value from the state
        chosen = by_text.get(st.session_state["preset"])
        if chosen is not None:
            for name, value in preset_values(chosen, names, models).items():
                st.session_state[f"p-{name}"] = value

    st.selectbox("Preset (instruction -> P)", ["-", *by_text], key="preset", on_change=apply_preset,
                 help="Training and held-out instruction pairs (lab/data/preferences.yaml) whose weights these "
                      "runs' tools can carry; a model's weight goes to every slot it fills.")
    columns = st.columns(min(6, len(names)))
    values = {name: columns[index % len(columns)].slider(slider_label(name, models), 0.0, 1.0, step=0.05,
                                                         key=f"p-{name}")
              for index, name in enumerate(names)}
    st.query_params["p"] = vector_text(values)
    st.caption(f"P = {vector_text(values) or '0'}")

    table = preference_ranking(features, run_ids, values)
    mark = {r: " (privileged)" for r in privileged}
    st.markdown("**Ranking:** " + " > ".join(f"{r.run_id}{mark.get(r.run_id, '')} ({r.preference_score:.3f})"
                                             for r in table.itertuples()))
    reason = zero_ranking_reason(features, table, values)
    if reason:
        st.caption(reason)
    left, right = st.columns(2)
    left.dataframe(table.assign(privileged=table.run_id.isin(privileged)), hide_index=True, key="ranking")
    right.plotly_chart(preference_score_figure(table), key="ranking-chart")

    rewards = group_rewards(features, values)
    single = rewards.groupby(["run_id", "group"]).size().max() < 2
    with st.expander("Rewards and advantages (Eq. 2 within each group)", expanded=not single):
        if single:
            st.caption("One sample per task: every group has one member, so every reward is 0. Evaluate with "
                       "--samples 2+ (the ranking above normalises each task across the runs instead).")
        st.dataframe(reward_summary(rewards), hide_index=True, key="reward-summary")
        st.caption(f"first {min(len(rewards), ROWS_SHOWN)} of {len(rewards)} trajectories")
        st.dataframe(rewards.head(ROWS_SHOWN), hide_index=True, key="rewards")


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
