"""The Playground page (`app/views/playground.py`) in Streamlit's AppTest, and the logic behind it.

What a user would notice: one task run under two instructions renders both rollouts, round by round, with
their costs and a one-line difference, and is stored as a run of kind `playground` that Rollouts opens;
a bad P or an unreachable endpoint is one message and stores nothing; a typed question runs against the
offline world and is not graded; N samples show the routes each instruction took.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from app.cards import CUT_MARK, call_label, fold, marked_prompt
from app.playground_logic import Outcome, difference_line, orchestrator_choices, routes_table
from lab.records import StepRecord
from lab.store import Store, queries
from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, on, problems

SCRIPT = "scripted:cheapest-first"


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("playground")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("playground")


def _set_up(at, spec: str = SCRIPT, toolkit: str = "paper-small"):
    at.selectbox(key="pg-orchestrator").set_value("another orchestrator (type its spec)").run()
    at.text_input(key="pg-spec").set_value(spec).run()
    at.text_input(key="pg-toolkit").set_value(toolkit).run()
    return at


def test_one_task_under_two_instructions_renders_both_rollouts_and_is_stored(app_store):
    at = _set_up(on("playground"))
    at.text_input(key="pg-find").set_value("frames").run()
    task = at.selectbox(key="pg-task").value
    at.button(key="pg-run").click().run()
    assert problems(at) == []
    headers = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert headers == ["#### A: Get the answer right; money is no object.",
                       "#### B: Be accurate but keep the bill as low as you can."]
    line = next(m.value for m in at.markdown if m.value.startswith("**B vs A:"))
    assert "cost" in line and "latency" in line
    runs = queries.runs_summary_df(Store(app_store, read_only=True))
    played = runs[runs.kind == "playground"]
    assert len(played) == 2 and set(played.status) == {"finished"}
    trajs = queries.trajectories_df(Store(app_store, read_only=True), list(played.run_id))
    assert set(trajs.task_id) == {task}
    cards = [m.value for m in at.markdown if m.value.startswith("**round")]
    for cost in trajs.cost_usd:  # each rollout's stored cost is on the page, in its verdict line
        assert any(f"{100 * cost:.3f}¢ ·" in m.value for m in at.markdown if "solved" in m.value), cost
    assert cards and all("¢" in c for c in cards)
    rollouts = on("rollouts", run=played.run_id.iloc[0], task=task)  # Rollouts opens a playground run
    assert problems(rollouts) == [] and rollouts.selectbox(key="pick-run").value == played.run_id.iloc[0]


def _one_message_and_nothing_stored(at, store, says: str) -> None:
    """After Run: one red line saying `says`, no exception, and no playground run in the store."""
    at.button(key="pg-run").click().run()
    assert len(at.error) == 1 and says in at.error[0].value and not at.exception
    assert not (queries.runs_summary_df(Store(store, read_only=True)).kind == "playground").any()


def test_a_bad_free_text_p_is_one_message_and_stores_nothing(app_store):
    at = _set_up(on("playground"))
    at.selectbox(key="pg-preset-B").set_value("free text (give its P)").run()
    at.text_area(key="pg-free-B").set_value("Only use the cheapest model.").run()
    at.text_input(key="pg-p-B").set_value("outcome=1,cheapness=2").run()
    _one_message_and_nothing_stored(at, app_store, "unknown entry 'cheapness'")


def test_an_unreachable_endpoint_is_one_message_before_run_and_stores_nothing(app_store):
    """The endpoint is checked when the spec is typed (`lab.tools.endpoints`): one red line naming it, no Run."""
    at = _set_up(on("playground"), spec="openai:qwen3-8b@http://127.0.0.1:9/v1")
    at.radio(key="pg-sides").set_value("one rollout").run()
    assert len(at.error) == 1 and not at.exception
    assert "--orchestrator: http://127.0.0.1:9/v1: cannot be reached" in at.error[0].value
    assert not (queries.runs_summary_df(Store(app_store, read_only=True)).kind == "playground").any()


def test_two_orchestrators_play_one_task_side_by_side(app_store):
    at = on("playground")
    at.radio(key="pg-sides").set_value("two orchestrators").run()
    at.selectbox(key="pg-orchestrator-A").set_value("another orchestrator (type its spec)").run()
    at.text_input(key="pg-spec-A").set_value(SCRIPT).run()
    at.text_input(key="pg-toolkit").set_value("paper-small").run()
    at.selectbox(key="pg-orchestrator-B").set_value("another orchestrator (type its spec)").run()
    at.text_input(key="pg-spec-B").set_value("scripted:always-strongest").run()
    at.button(key="pg-run").click().run()
    assert problems(at) == []
    headers = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert headers == [f"#### A: {SCRIPT}", "#### B: scripted:always-strongest"]
    assert any(m.value.startswith("**B vs A:") for m in at.markdown)
    played = queries.runs_summary_df(Store(app_store, read_only=True))
    assert sorted(played[played.kind == "playground"].orchestrator) == sorted([SCRIPT, "scripted:always-strongest"])


def test_a_typed_question_runs_and_is_not_graded(app_store):
    at = _set_up(on("playground"))
    at.radio(key="pg-sides").set_value("one rollout").run()
    at.radio(key="pg-mode").set_value("a question I type").run()
    at.text_area(key="pg-question").set_value("Which river runs through the old capital?").run()
    at.button(key="pg-run").click().run()
    assert problems(at) == []
    assert any("not graded (a typed question)" in m.value for m in at.markdown)


def test_samples_show_the_routes_each_instruction_took(app_store):
    at = _set_up(on("playground"), spec="scripted:random")
    at.number_input(key="pg-samples").set_value(3).run()
    at.button(key="pg-run").click().run()
    assert problems(at) == []
    routes = next(d.value for d in at.dataframe if "route" in d.value.columns)
    assert set(routes.instruction) == {"A", "B"}
    assert routes.groupby("instruction").samples.sum().tolist() == [3, 3]


# ---- the logic, directly ------------------------------------------------------------------------


def _step(turn, kind="tool", tool="search", slot="search-2", **extra):
    arguments = json.dumps({"model": slot}) if slot else "{}"
    return StepRecord(run_id="r", task_id="t", turn=turn, kind=kind, tool_name=tool if kind == "tool" else None,
                      arguments_json=arguments if kind == "tool" else "{}", **extra)


def test_identical_calls_fold_and_an_answer_joins_its_call():
    models = {"search-2": "gpt-5-mini", "answer-1": "gpt-5"}
    steps = [_step(0), _step(1), _step(2), _step(3, tool="answer", slot="answer-1"),
             _step(3, kind="answer", observation="Paris")]
    cards = fold(steps, models)
    assert [len(c.steps) for c in cards] == [3, 2]
    assert call_label(cards[0].first, models) == "search · search-2 (gpt-5-mini)"
    erred = [_step(0), _step(1, error="timed out"), _step(2)]
    assert [len(c.steps) for c in fold(erred, models)] == [1, 1, 1]  # an error is never hidden in a fold


def test_a_cut_context_is_marked_and_a_whole_one_is_not():
    question = "Who built the bridge?"
    whole = f"Problem: {question}\n\nDocuments:\nDoc 1: The bridge ...\n\nChoose an appropriate tool."
    cut = f"Problem: {question}\n\nidge was built in 1890 ...\n\nChoose an appropriate tool."
    assert marked_prompt(whole, question) == whole
    from lab.rollout.rounds import round_messages

    for context in ("", "Documents:\nDoc 1: The bridge ..."):  # a round before any context, and a whole one
        prompt = round_messages(question, context, "Keep the bill low.")[1]["content"]
        assert marked_prompt(prompt, question) == prompt
    assert marked_prompt(cut, question) == f"Problem: {question}\n\n{CUT_MARK}idge was built in 1890 ...\n\n" \
                                           "Choose an appropriate tool."


def test_the_difference_line_and_the_routes_table():
    a = Outcome(solved=True, cost_usd=0.02, latency_s=30.0, rounds=3, route="x → y")
    b = Outcome(solved=True, cost_usd=0.01, latency_s=20.0, rounds=2, route="y")
    assert difference_line(a, b) == ("B vs A: solved vs solved · cost -1.000¢ (-50%) · latency -10.0 s · rounds -1 · "
                                     "another route")
    table = routes_table({"A": [a, a, b], "B": [b]})
    assert table.loc[table.instruction == "A", "samples"].tolist() == [2, 1]
    assert table.loc[table.instruction == "B", "share"].tolist() == [1.0]


def test_choices_put_the_trained_model_first_and_the_oracle_last():
    runs = pd.DataFrame({"run_id": ["o", "c", "t"], "kind": ["eval"] * 3, "name": ["oracle", "cascade", "trained"],
                         "orchestrator": ["scripted:oracle", "scripted:cheapest-first", "hf:runs/x"],
                         "started_at": pd.to_datetime(["2026-01-01", "2026-01-02", "2026-01-03"])})
    specs = [c.spec for c in orchestrator_choices(runs, {})]
    assert specs == ["hf:runs/x", "scripted:cheapest-first", "scripted:oracle"]


@pytest.mark.parametrize(("text", "named"), [("outcome=1,nonsense=1", "'nonsense'"), ("outcome=2", "'outcome'"),
                                             ("outcome", "'outcome' is not NAME=VALUE")])
def test_bad_p_text_is_refused_with_the_entry_named(text, named):
    from lab.errors import LabInputError
    from lab.preference import Preference

    with pytest.raises(LabInputError, match=named):
        Preference.parse(text, ["search-1"])


def test_a_model_is_played_with_its_main_evaluations_settings_not_a_sweep_points():
    runs = pd.DataFrame({"run_id": ["t", "s"], "kind": ["eval"] * 2, "name": ["trained", "trained-speed-t50"],
                         "orchestrator": ["hf:runs/x"] * 2,
                         "started_at": pd.to_datetime(["2026-01-01", "2026-01-02"])})
    (choice,) = orchestrator_choices(runs, {"t": '{"max_turns": [20]}', "s": '{"max_turns": [50]}'})
    assert choice.label == "trained · hf:runs/x" and choice.template == '{"max_turns": [20]}'
