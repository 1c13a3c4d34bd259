"""Playground: type an instruction and watch an orchestrator route one task live, round by round.

Pick an orchestrator (one the store evaluated, a model a training run wrote, or any `hf:` / `openai:` /
`scripted:` spec), a task of the benchmark (search by id or text) or a question typed against the offline
world's documents, toolkit and prices, and one or two instructions (a preset pair, or free text with the P it
stands for). Each rollout streams in as its rounds end, with a running total; two instructions (or two
orchestrators under one) run side by side with their difference in one line, and N samples show how
routes spread; Stop cancels what is in flight. The rollout is the one an
evaluation would run (`lab.eval.playground` builds it from the newest evaluation of that orchestrator), and
finished plays are stored as runs of kind `playground` (Rollouts shows them; evaluation tables do not).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import streamlit as st

from app import data
from app.cards import fold, render_card
from app.navigation import page
from app.playground_logic import Outcome, difference_line, orchestrator_choices, route, routes_table
from app.widgets import run_page, store_or_stop
from lab.errors import LabInputError
from lab.preference import preference_pairs
from lab.pricing import providers as price_providers
from lab.store import Store

OTHER = "another orchestrator (type its spec)"
TWO_INSTRUCTIONS, TWO_ORCHESTRATORS, ONE = "two instructions", "two orchestrators", "one rollout"
FREE = "free text (give its P)"
#: The demo's two training instructions: the pair a first visit compares.
DEFAULT_INSTRUCTIONS = ("Get the answer right; money is no object.", "Be accurate but keep the bill as low as you can.")
POLL_S = 0.1   # how often a running play is looked at
TASKS_LISTED = 200


@st.cache_resource(show_spinner="Loading the benchmark's tasks and the toolkit's tools (once per server)…")
def _playground(template: str, orchestrator: str, toolkit: str, pricing: str):
    """The Playground for one setting, kept for the server's life (loading the world's indexes takes seconds)."""
    from lab.eval.playground import Playground, template_config

    return Playground(template_config(template, orchestrator, toolkit=toolkit, pricing=pricing))


@dataclass(frozen=True)
class Side:
    """One column of the page: what it plays (its Playground and orchestrator), under which instruction."""

    name: str
    playground: Any
    spec: str
    instruction: str
    weights: str
    header: str


def render() -> None:
    st.title("Playground")
    path, stamp, runs = store_or_stop()
    choices = orchestrator_choices(runs, data.run_configs(path, stamp))
    if not choices:
        st.info("No evaluation in this store to take settings from: run `orchestra demo` or `orchestra eval` first.")
        return
    mode = st.radio("Side by side", [TWO_INSTRUCTIONS, TWO_ORCHESTRATORS, ONE], horizontal=True, key="pg-sides")
    picked = _orchestrator(choices, "A" if mode == TWO_ORCHESTRATORS else "")
    if picked is None:
        return
    choice, spec = picked
    from lab.eval.playground import template_config

    template = template_config(choice.template, spec)
    left, right = st.columns(2)
    toolkit = left.text_input("Toolkit", template.toolkit, key="pg-toolkit",
                              help="A name under configs/toolkits (paper-small, paper, default) or a YAML path.")
    pricings = price_providers()
    pricing = right.selectbox("Prices", pricings, index=pricings.index(template.pricing)
                              if template.pricing in pricings else 0, key="pg-pricing")
    playground = _playground(choice.template, spec, toolkit, pricing)
    task = _task(playground)
    if mode == TWO_ORCHESTRATORS:
        other = _orchestrator(choices, "B")
        if other is None:
            return
        played_b = _playground(other[0].template, other[1], toolkit, pricing)
        ((_, text, weights),) = _instructions(playground, 1)
        sides = [Side("A", playground, spec, text, weights, spec),
                 Side("B", played_b, other[1], text, weights, other[1])]
    else:
        sides = [Side(name, playground, spec, text, weights, text or "(no instruction)")
                 for name, text, weights in _instructions(playground, 2 if mode == TWO_INSTRUCTIONS else 1)]
    left, middle, right = st.columns(3)
    samples = int(left.number_input("Samples per side", 1, 16, 1, key="pg-samples"))
    turns = int(middle.number_input("Round budget", 1, 50, min(template.max_turns or [20]), key="pg-turns"))
    temperature = right.slider("Temperature", 0.0, 1.5, float(template.temperature), 0.05, key="pg-temperature",
                               help="The evaluation's own by default; samples of a greedy model are identical.")
    if samples > 1 and temperature == 0 and not spec.startswith("scripted:"):
        st.caption("Greedy decoding repeats one route: raise the temperature to see routes spread.")
    if st.button("Run", type="primary", key="pg-run"):
        _run(path, task, sides, samples, turns, temperature)
    elif "pg-last" in st.session_state:
        _show(st.session_state["pg-last"], final=True)


def _orchestrator(choices, name: str):
    """(choice whose settings it is played under, spec) picked by the user, or None while a typed spec is empty."""
    labels = [c.label for c in choices]
    suffix = f"-{name}" if name else ""
    picked = st.selectbox(f"Orchestrator {name}".strip(), [*labels, OTHER], key=f"pg-orchestrator{suffix}",
                          index=min(1, len(labels)) if name == "B" else 0)
    if picked != OTHER:
        choice = choices[labels.index(picked)]
        return choice, choice.spec
    spec = st.text_input(f"Orchestrator {name} spec".replace("  ", " "), key=f"pg-spec{suffix}",
                         placeholder="hf:runs/cpu-tiny, openai:qwen3-8b@http://localhost:8000/v1 or "
                                     "scripted:cheapest-first").strip()
    if not spec:
        st.caption(f"Played with the settings of {choices[0].label}.")
        return None
    return choices[0], spec


def _task(playground):
    """A task of the benchmark (searched by id or text) or a typed question."""
    mode = st.radio("Task", ["a benchmark task", "a question I type"], horizontal=True, key="pg-mode")
    if mode == "a question I type":
        question = st.text_area("Question (searched against the offline world's documents; not graded)",
                                key="pg-question")
        return playground.task(question=question) if question.strip() else None
    text = st.text_input("Search tasks by id or text", key="pg-find").strip().lower()
    matches = [t for t in playground.tasks.values()
               if not text or text in t.task_id.lower() or text in t.question.lower()][:TASKS_LISTED]
    if not matches:
        st.caption(f"No task of {playground.config.benchmark} matches '{text}'.")
        return None
    ids = [t.task_id for t in matches]
    wanted = st.query_params.get("task")
    chosen = st.selectbox(f"Task ({len(matches)} shown)", ids, index=ids.index(wanted) if wanted in ids else 0,
                          key="pg-task", format_func=lambda i: f"{i} · {playground.tasks[i].question[:110]}")
    with st.expander("Question", expanded=False):
        st.write(playground.tasks[chosen].question)
    return playground.task(chosen)


def _instructions(playground, count: int) -> list[tuple[str, str, str]]:
    """`count` (name, instruction, P text) the user set: a preset pair, or free text with its P."""
    pairs = [p for split in ("train", "eval") for p in preference_pairs(split, playground.features, playground.models)]
    by_text = {p.instruction: p for p in pairs}
    sides = []
    for index, column in enumerate(st.columns(count)):
        name = "AB"[index]
        presets = [*by_text, FREE]
        default = DEFAULT_INSTRUCTIONS[index] if DEFAULT_INSTRUCTIONS[index] in by_text else presets[0]
        picked = column.selectbox(f"Instruction {name}", presets, index=presets.index(default), key=f"pg-preset-{name}")
        if picked == FREE:
            text = column.text_area(f"Instruction {name} (free text)", key=f"pg-free-{name}")
            weights = column.text_input(f"P of {name} (name=value, ...)", "outcome=1,compute=1", key=f"pg-p-{name}",
                                        help=f"Entries: {', '.join(playground.features)}, outcome, compute, latency; "
                                             "a model's name (gpt-5) weighs every slot it fills.")
        else:
            text = picked
            weights = ",".join(f"{k}={v:g}" for k, v in by_text[picked].weights.items())
            column.caption(f"P: {weights}")
        sides.append((name, text, weights))
    return sides


def _run(path, task, sides: list[Side], samples: int, turns: int, temperature: float) -> None:
    """Start every play, stream them until they end (or Stop is pressed), then store what finished."""
    if task is None:
        st.error("Choose a task or type a question first.")
        return
    try:  # bad input is one line, before any rollout starts
        setups = [(side, side.playground.preference(side.weights, side.instruction),
                   side.playground.task(question=task.question) if task.task_id.startswith("typed-")
                   else side.playground.task(task.task_id)) for side in sides]
    except LabInputError as exc:
        st.error(str(exc))
        return
    plays = {side.name: [side.playground.start(side.spec, mine, preference, sample_idx=s, seed=s, max_turns=turns,
                                               temperature=temperature) for s in range(samples)]
             for side, preference, mine in setups}
    last = {"plays": plays, "sides": {side.name: side for side in sides}, "task": task, "stored": [], "stopped": False}
    st.session_state["pg-last"] = last
    stop, ticker, board = st.empty(), st.empty(), st.empty()
    stop.button("Stop", key="pg-stop", help="Cancel the rollouts in flight; nothing is stored.")
    shown = -1
    started = time.monotonic()
    every = [play for side in plays.values() for play in side]
    try:
        while not all(play.done for play in every):
            # a page element every poll: Streamlit stops a script for Stop only at its next element
            ticker.caption(f"running… {time.monotonic() - started:.1f} s")
            count = sum(len(play.state.steps) for play in every)
            if count != shown:  # redraw only when a round ended
                shown = count
                with board.container():
                    _show(last, final=False, elapsed=time.monotonic() - started)
            time.sleep(POLL_S)
    finally:  # Stop (or leaving the page) interrupts this script: cancel what still runs
        if not all(play.done for play in every):
            for play in every:
                play.cancel()
            last["stopped"] = True
    from lab.eval.playground import store_plays

    if not any(play.failure for play in every):
        last["stored"] = store_plays(Store(path, timeout_s=30.0), every)
    stop.empty()
    ticker.empty()
    with board.container():
        _show(last, final=True, elapsed=time.monotonic() - started)


def _show(last, final: bool, elapsed: float | None = None) -> None:
    """Each instruction's first sample as cards, with running totals; when done the verdicts, the
    one-line difference, and with N samples the routes each instruction took."""
    plays, task = last["plays"], last["task"]
    failures = sorted({p.failure for side in plays.values() for p in side if p.failure})
    if failures:
        st.error(f"No result, nothing stored: {failures[0]}")
        return
    if last.get("stopped"):
        st.warning("Stopped: the rollouts in flight were cancelled and nothing was stored.")
    sides = last["sides"]
    outcomes = {name: [_outcome(p, sides[name].playground.models) for p in side if p.result is not None]
                for name, side in plays.items()}
    if final and len(plays) == 2 and all(outcomes.values()):
        (a_name, a), (b_name, b) = ((n, o[0]) for n, o in outcomes.items())
        st.markdown(f"**{difference_line(a, b, a_name, b_name)}**")
    for column, (name, side) in zip(st.columns(len(plays)), plays.items()):
        with column:
            play, models = side[0], sides[name].playground.models
            st.markdown(f"#### {name}: {sides[name].header}")
            if sides[name].header != (play.preference.instruction or "(no instruction)"):
                st.caption(f"instruction: {play.preference.instruction or '(none)'}")
            state = play.state
            finished = sum(p.done for p in side)
            status = "done" if play.done else f"round {state.turns} running"
            st.caption(f"{status} · {state.input_tokens + state.output_tokens} orchestrator tokens · "
                       f"{100 * state.cost_usd:.3f}¢ · {state.latency_s:.1f} s so far"
                       + (f" · {finished}/{len(side)} samples done" if len(side) > 1 else "")
                       + (f" · {elapsed:.1f} s on the clock" if elapsed is not None else ""))
            for card in fold(list(state.steps), models):
                render_card(card, models, getattr(task, "question", None))
            if play.result is not None:
                _verdict(play)
    if final and any(len(side) > 1 for side in plays.values()):
        st.subheader("Routes over the samples")
        st.dataframe(routes_table(outcomes), hide_index=True, key="pg-routes")
    if final and last["stored"]:
        st.caption("Stored as " + ", ".join(last["stored"]) + " (kind playground).")
        first, *rest = last["stored"]
        st.page_link(page("rollouts"), label="Open in Rollouts",
                     query_params={"run": first, "task": task.task_id, **({"run2": rest[0]} if rest else {})})


def _verdict(play) -> None:
    trajectory = play.result.trajectory
    if not play.graded:
        st.markdown(f"**answer:** {trajectory.final_answer or '(none)'} · not graded (a typed question)")
        return
    verdict = "solved" if trajectory.outcome >= 1 else "not solved"
    st.markdown(f"**{verdict}** · answer {trajectory.final_answer or '(none)'} · reference "
                f"{play.request.task.answer} · {100 * trajectory.cost_usd:.3f}¢ · {trajectory.latency_s:.1f} s · "
                f"{trajectory.n_turns} rounds" + (f" · {trajectory.error}" if trajectory.error else ""))


def _outcome(play, models) -> Outcome:
    trajectory = play.result.trajectory
    return Outcome(solved=(trajectory.outcome >= 1) if play.graded else None, cost_usd=trajectory.cost_usd,
                   latency_s=trajectory.latency_s, rounds=trajectory.n_turns, route=route(play.result.steps, models))


if __name__ == "__main__":  # run as a page of the dashboard
    run_page(render)

