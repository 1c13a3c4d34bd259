"""Rollouts: step through one trajectory turn by turn, search a run's text, lay a GRPO group side by side."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app import data
from app.widgets import pick_run, run_page, simulated_badge, store_or_stop

LONG = 600  # observations longer than this start collapsed


def render() -> None:
    st.title("Rollouts")
    path, stamp, runs = store_or_stop()
    run_id = pick_run(runs)
    if run_id is None:
        return
    simulated_badge(runs, [run_id])
    trajs = data.trajectories(path, stamp, (run_id,))
    if trajs.empty:
        st.info("This run has no finished trajectories yet.")
        return
    tab_step, tab_search, tab_group = st.tabs(["Step through", "Search", "GRPO group"])
    with tab_step:
        _stepper(path, stamp, run_id, trajs)
    with tab_search:
        _search(path, stamp, run_id)
    with tab_group:
        _group(path, stamp, run_id, trajs)


def _stepper(path, stamp, run_id: str, trajs: pd.DataFrame) -> None:
    tasks = list(dict.fromkeys(trajs.task_id))
    wanted = st.query_params.get("task")
    task = st.selectbox("Task", tasks, index=tasks.index(wanted) if wanted in tasks else 0, key="pick-task")
    st.query_params["task"] = task
    samples = sorted(trajs[trajs.task_id == task].sample_idx.unique().tolist())
    sample = st.selectbox("Sample", samples, key="pick-sample") if len(samples) > 1 else samples[0]
    traj = trajs[(trajs.task_id == task) & (trajs.sample_idx == sample)].iloc[-1]
    steps = data.steps(path, stamp, run_id, task, int(sample))
    steps = steps[steps.train_step == traj.train_step]
    gold = data.tasks(path, stamp)
    gold = gold[(gold.task_id == task) & (gold.benchmark == traj.benchmark)]
    if not gold.empty:
        with st.expander("Task", expanded=False):
            st.write(gold.iloc[0].question)
    if steps.empty:
        st.info("No steps logged for this trajectory.")
    else:
        turn = st.slider("Turn", 1, len(steps), len(steps), key="turn") if len(steps) > 1 else 1
        shown = steps.iloc[:turn]
        own = shown[shown.kind != "judge"]  # a judge's calls grade the rollout; their cost is apart (below)
        totals = st.columns(4)
        totals[0].metric("turns shown", f"{turn} / {len(steps)}")
        totals[1].metric("tokens so far", int(own.input_tokens.sum() + own.output_tokens.sum()))
        totals[2].metric("cost so far ($)", f"{own.cost_usd.sum():.5f}")
        totals[3].metric("latency so far (s)", f"{own.latency_s.sum():.2f}")
        for step in shown.itertuples():
            _step(step)
    st.subheader("Outcome")
    answer = st.columns(2)
    answer[0].markdown(f"**final answer**\n\n{traj.final_answer if pd.notna(traj.final_answer) else '(none)'}")
    if not gold.empty:
        expected = json.loads(gold.iloc[0].answer_json or "null")
        if isinstance(expected, (dict, list)):  # golden actions, choices: structured
            answer[1].markdown("**gold answer**")
            answer[1].json(expected, expanded=False)
        else:  # st.json would read a plain string as JSON text
            answer[1].markdown(f"**gold answer**\n\n{expected}")
    verdict = "solved" if traj.outcome >= 1 else "not solved"
    st.markdown(f"**verdict: {verdict}** (outcome {traj.outcome:g}) · status {traj.status}"
                + (f" · filtered: {traj.filter_reason}" if pd.notna(traj.filter_reason) else ""))
    if pd.notna(traj.get("judge_correct")):
        st.markdown(f"by exact match: {_said(traj.exact_correct)} · by judge: {_said(traj.judge_correct)} · "
                    f"judge cost ${traj.judge_cost_usd:.5f} (apart from the rollout's cost)")
    if pd.notna(traj.criteria_json) and traj.criteria_json:
        st.json(json.loads(traj.criteria_json), expanded=True)
    if pd.notna(traj.error) and traj.error:
        st.error(traj.error)


def _said(grade: object) -> str:
    return "-" if pd.isna(grade) else ("right" if grade else "wrong")


def _step(step) -> None:
    label = step.tool_name if isinstance(step.tool_name, str) and step.tool_name else step.kind  # NaN for answers
    mark = " · simulated" if getattr(step, "simulated", False) else ""
    with st.container(border=True):
        st.markdown(f"**turn {step.turn + 1} · {step.kind} · {label}**{mark} — "
                    f"{int(step.input_tokens)}+{int(step.output_tokens)} tokens · ${step.cost_usd:.5f} · "
                    f"{step.latency_s:.2f} s")
        prompt = getattr(step, "prompt", "")
        if isinstance(prompt, str) and prompt:  # the round protocol: what the orchestrator read this round
            with st.expander(f"round prompt ({len(prompt)} characters)"):
                st.text(prompt)
        if isinstance(step.reasoning, str) and step.reasoning.strip():
            st.markdown(f"*reasoning:* {step.reasoning}")
        if isinstance(step.arguments_json, str) and step.arguments_json not in ("", "{}", "null"):
            try:
                st.json(json.loads(step.arguments_json))
            except ValueError:
                st.code(step.arguments_json)
        text = step.observation if isinstance(step.observation, str) else ""
        if text:
            if len(text) > LONG:
                with st.expander(f"observation ({len(text)} characters)"):
                    st.text(text)
            else:
                st.text(text)
        if isinstance(step.error, str) and step.error:
            st.error(step.error)


def _search(path, stamp, run_id: str) -> None:
    text = st.text_input("Find in observations, reasoning, arguments and answers", key="search")
    if not text.strip():
        return
    hits = data.search(path, stamp, run_id, text.strip())
    st.caption(f"{len(hits)} matches" + (" (first 200)" if len(hits) == 200 else ""))
    st.dataframe(hits[["task_id", "sample_idx", "turn", "kind", "tool_name", "where", "snippet"]], hide_index=True)


def _group(path, stamp, run_id: str, trajs: pd.DataFrame) -> None:
    """The G rollouts of one task at one training step, with reward, advantage and filter reason."""
    if trajs.reward.isna().all():
        st.info("No rewards logged in this run: GRPO groups are shown for training runs (or "
                "after `orchestra rescore`).")
        return
    groups = trajs.assign(group=trajs.group_id.fillna(trajs.task_id) + " @ step " + trajs.train_step.astype(str))
    names = list(dict.fromkeys(groups.group))
    chosen = st.selectbox("Group", names, key="pick-group")
    members = groups[groups.group == chosen].sort_values("sample_idx")
    best = members.reward.idxmax() if members.reward.notna().any() else None
    for column, row in zip(st.columns(len(members)), members.itertuples()):
        with column:
            title = f"sample {row.sample_idx}" + (" ★" if row.Index == best else "")
            st.markdown(f"**{title}**")
            st.metric("reward", f"{row.reward:.3f}" if pd.notna(row.reward) else "-")
            st.metric("advantage", f"{row.advantage:+.3f}" if pd.notna(row.advantage) else "-")
            st.caption(f"outcome {row.outcome:g} · ${row.cost_usd:.4f} · {row.n_turns} turns"
                       + (f" · filtered: {row.filter_reason}" if pd.notna(row.filter_reason) else ""))
            counts = json.loads(row.tool_counts_json or "{}")
            st.caption(", ".join(f"{k}×{v}" for k, v in counts.items()) or "no tool calls")


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)
