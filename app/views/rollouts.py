"""Rollouts: step through one trajectory round by round (or two runs' rollouts of one task side by side,
`?run=a&run2=b&task=t`), search a run's text, lay a GRPO group side by side. Opens on the demo's trained
model when no run is named."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from app import data
from app.cards import as_steps, fold, render_card
from app.widgets import main_run, pick_run, run_page, simulated_badge, store_or_stop
from lab.report.html import display_names


def render() -> None:
    st.title("Rollouts")
    path, stamp, runs = store_or_stop()
    run_id = pick_run(runs, kinds=("eval", "train", "playground"), default=main_run(runs))
    if run_id is None:
        return
    simulated_badge(runs, [run_id])
    trajs = data.trajectories(path, stamp, (run_id,))
    if trajs.empty:
        st.info("This run has no finished trajectories yet.")
        return
    tab_step, tab_search, tab_group = st.tabs(["Step through", "Search", "GRPO group"])
    with tab_step:
        _stepper(path, stamp, run_id, trajs, runs)
    with tab_search:
        _search(path, stamp, run_id)
    with tab_group:
        _group(path, stamp, run_id, trajs)


def _stepper(path, stamp, run_id: str, trajs: pd.DataFrame, runs: pd.DataFrame) -> None:
    task = _pick_task(path, stamp, trajs)
    other = st.query_params.get("run2")
    if other and other != run_id and other in set(runs.run_id):  # two runs' rollouts of one task, side by side
        names = display_names(runs)
        left, right = st.columns(2)
        with left:
            st.markdown(f"**{names[run_id]}**")
            _trajectory(path, stamp, run_id, trajs, task, "a")
        with right:
            st.markdown(f"**{names[other]}**")
            _trajectory(path, stamp, other, data.trajectories(path, stamp, (other,)), task, "b")
        return
    _trajectory(path, stamp, run_id, trajs, task, "a")


def _pick_task(path, stamp, trajs: pd.DataFrame) -> str:
    """A task of the run, each marked solved (✓: some sample solved it) or not (✗), with its question."""
    solved = trajs.groupby("task_id", sort=False).outcome.max()
    questions = data.tasks(path, stamp).drop_duplicates("task_id").set_index("task_id").question
    tasks = list(solved.index)
    wanted = st.query_params.get("task")

    def label(task_id: str) -> str:
        mark = "✓" if solved[task_id] >= 1 else "✗"
        question = str(questions.get(task_id, "") or "")
        return f"{mark} {task_id} · {question[:100]}{'…' if len(question) > 100 else ''}"

    task = st.selectbox("Task (✓ solved by some sample)", tasks, index=tasks.index(wanted) if wanted in tasks else 0,
                        key="pick-task", format_func=label)
    st.query_params["task"] = task
    return task


def _trajectory(path, stamp, run_id: str, trajs: pd.DataFrame, task: str, side: str) -> None:
    mine = trajs[trajs.task_id == task]
    if mine.empty:
        st.info(f"{run_id} has no rollout of {task}.")
        return
    samples = sorted(mine.sample_idx.unique().tolist())
    sample = (st.selectbox("Sample", samples, key=f"pick-sample-{side}") if len(samples) > 1 else samples[0])
    traj = mine[mine.sample_idx == sample].iloc[-1]
    steps = data.steps(path, stamp, run_id, task, int(sample))
    steps = steps[steps.train_step == traj.train_step]
    gold = data.tasks(path, stamp)
    gold = gold[(gold.task_id == task) & (gold.benchmark == traj.benchmark)]
    question = gold.iloc[0].question if not gold.empty else None
    if question:
        with st.expander("Question", expanded=False):
            st.write(question)
    models = data.feature_models(path, stamp, (run_id,))
    if steps.empty:
        st.info("No steps logged for this trajectory.")
    else:
        rounds = sorted(steps.turn.unique().tolist())
        shown_rounds = (st.slider("Rounds shown", 1, len(rounds), len(rounds), key=f"turn-{side}")
                        if len(rounds) > 1 else 1)
        shown = steps[steps.turn <= rounds[shown_rounds - 1]]
        own = shown[shown.kind != "judge"]  # a judge's calls grade the rollout; their cost is apart (below)
        totals = st.columns(4)
        totals[0].metric("rounds shown", f"{shown_rounds} / {len(rounds)}")
        totals[1].metric("tokens so far", int(own.input_tokens.sum() + own.output_tokens.sum()))
        totals[2].metric("cost so far ($)", f"{own.cost_usd.sum():.5f}")
        totals[3].metric("latency so far (s)", f"{own.latency_s.sum():.2f}")
        for card in fold(as_steps(shown), models):
            render_card(card, models, question)
    _outcome(traj, gold)


def _outcome(traj: pd.Series, gold: pd.DataFrame) -> None:
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
        st.warning(traj.error)


def _said(grade: object) -> str:
    return "-" if pd.isna(grade) else ("right" if grade else "wrong")


def _search(path, stamp, run_id: str) -> None:
    text = st.text_input("Find in observations, reasoning, arguments and answers", key="search")
    if not text.strip():
        return
    hits = data.search(path, stamp, run_id, text.strip())
    st.caption(f"{len(hits)} matches" + (" (first 200)" if len(hits) == 200 else ""))
    hits = hits.assign(round=hits.turn + 1)  # rounds count from 1, as in the stepper
    st.dataframe(hits[["task_id", "sample_idx", "round", "kind", "tool_name", "where", "snippet"]], hide_index=True)


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
