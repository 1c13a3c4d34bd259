"""The rollouts page (`app/views/rollouts.py`) in Streamlit's AppTest.

What a user would notice: a link's query parameters open the run and task they name, with the verdict
and the gold answer; a judged trajectory shows both grades and keeps the judge's cost out of the
rollout's; an empty store says what to do.
"""

from __future__ import annotations

import pytest

from lab.records import StepRecord
from lab.store import Store
from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, on, problems


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("rollouts")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("rollouts")


def test_a_deep_link_opens_a_trajectory(app_store):
    at = on("rollouts", run="eval-b", task="t2")
    assert at.selectbox(key="pick-run").value == "eval-b" and at.selectbox(key="pick-task").value == "t2"
    assert any("verdict" in m.value for m in at.markdown)
    assert any(m.value == "**gold answer**\n\nanswer 2" for m in at.markdown)  # beside the final answer


def test_a_judged_trajectory_shows_both_grades_and_keeps_the_judges_cost_out_of_the_rollouts(tmp_path, make_run,
                                                                                               monkeypatch):
    run, items = make_run("judged", {"t1": [1]}, config={"judge": "sim:gpt-5"})
    traj, steps, tokens = items[0]
    judge = StepRecord(run_id="judged", task_id="t1", turn=3, kind="judge", tool_name="sim:gpt-5", model="gpt-5",
                       input_tokens=300, output_tokens=2000, cost_usd=0.02, observation="<correct>True</correct>",
                       simulated=True)
    traj = traj.model_copy(update={"exact_correct": False, "judge_correct": True, "judge_cost_usd": 0.02})
    store = Store(tmp_path / "judged.duckdb")
    store.write_run(run)
    store.write_trajectories([(traj, [*steps, judge], tokens)])
    store.finish_run("judged")
    monkeypatch.setenv("ORCHESTRA_DB", str(store.path))
    at = on("rollouts", run="judged", task="t1")
    assert not problems(at)
    assert any("by exact match: wrong · by judge: right · judge cost $0.02000" in m.value for m in at.markdown)
    cost = next(m for m in at.metric if m.label == "cost so far ($)")
    assert float(cost.value) == pytest.approx(traj.cost_usd)  # the judge's $0.02 is not the rollout's


def test_two_runs_rollouts_of_one_task_open_side_by_side_with_rounds_from_one(app_store):
    at = on("rollouts", run="eval-a", run2="eval-b", task="t1")
    assert problems(at) == []
    assert [m.value for m in at.markdown if m.value in ("**eval-a**", "**eval-b**")] == ["**eval-a**", "**eval-b**"]
    assert any(m.value.startswith("**round 1 · local_search") for m in at.markdown)
    assert not any(m.value.startswith("**round 0") for m in at.markdown)
    assert any(m.value.startswith("**round 2 · gpt-5") for m in at.markdown)    # the model's own tool
    assert any(m.value.startswith("**round 2 · qwen3-32b") for m in at.markdown)
    assert len([s for s in at.selectbox if s.key.startswith("pick-sample")]) == 2   # one sample picker per side


def test_the_task_picker_marks_solved_tasks_and_shows_the_question(app_store):
    at = on("rollouts", run="eval-a")
    labels = at.selectbox(key="pick-task").options   # as the user reads them
    assert any(label.startswith("✓ t1 · Question 1?") for label in labels)
    assert any(label.startswith("✗ t3 · Question 3?") for label in labels)   # eval-a never solved t3
