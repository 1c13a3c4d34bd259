"""Every dashboard page in Streamlit's AppTest, on stores the tests build.

What a user would notice: each page renders without an exception on a store with eval and training
runs; an empty or missing store gives a helpful line, never a traceback; a preference slider
re-ranks the systems; a link's query parameters open the run and the vector they name; a run picked
on one page is in the URL for the next.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import app
from app.navigation import PAGES
from app.selection import clicked_runs
from app.steering_logic import group_rewards, parse_vector
from lab.report.api import load_report
from lab.report.metrics import preference_scores
from lab.reward import rescore
from lab.scoring import FeatureFrame, preference_ranking
from lab.store import Store, queries

MAIN = str(Path(app.__file__).parent / "main.py")


def started() -> AppTest:
    return AppTest.from_file(MAIN, default_timeout=120).run()


def on(page: str, at: AppTest | None = None, **params: str) -> AppTest:
    at = at or started()
    for key, value in params.items():
        at.query_params[key] = value
    return at.switch_page(f"views/{page}.py").run()


def problems(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_renders(app_store, page):
    at = on(page)
    assert problems(at) == []
    assert at.title and at.title[0].value


def test_the_runs_page_lists_every_run(app_store):
    at = started()
    (table,) = at.dataframe
    assert set(table.value.run_id) == {"eval-a", "eval-b", "eval-step1", "eval-step3", "train-x"}
    assert table.value.set_index("run_id").loc["eval-a", "simulated"]  # scripted orchestrator: marked


@pytest.mark.parametrize("page", list(PAGES))
def test_an_empty_store_says_what_to_do(tmp_path, monkeypatch, page):
    Store(tmp_path / "empty.duckdb")
    monkeypatch.setenv("ORCHESTRA_DB", str(tmp_path / "empty.duckdb"))
    at = on(page)
    assert not at.exception and "No runs in" in at.info[0].value


def test_a_run_written_while_the_page_is_open_appears_on_the_next_refresh(app_store, make_run):
    at = started()
    assert "eval-new" not in set(at.dataframe[0].value.run_id)
    store = Store(app_store)
    run, items = make_run("eval-new", {"t1": [1.0]})
    store.write_run(run)
    store.write_trajectories(items)
    at.run()  # what the page's 3 s refresh does; the cache is keyed on the file's mtime, not a timer
    assert "eval-new" in set(at.dataframe[0].value.run_id)


def test_a_missing_store_is_one_line_and_is_not_created(tmp_path, monkeypatch):
    monkeypatch.setenv("ORCHESTRA_DB", str(tmp_path / "none.duckdb"))
    at = started()
    assert not at.exception and "no store here yet" in at.info[0].value
    assert not (tmp_path / "none.duckdb").exists()


def test_a_slider_reranks_the_systems(app_store):
    at = on("steering", runs="eval-a,eval-b", p="outcome=1")
    before = next(m.value for m in at.markdown if m.value.startswith("**Ranking:**"))
    at.slider(key="p-gpt-5").set_value(1.0).run()
    after = next(m.value for m in at.markdown if m.value.startswith("**Ranking:**"))
    assert before.split()[1] == "eval-b" and after.split()[1] == "eval-a"
    assert "gpt-5=1" in at.query_params["p"]  # the state is in the URL


def test_a_ranking_where_every_system_scores_zero_says_why(app_store):
    at = on("steering", runs="eval-a,eval-b", p="latency=0")  # a link naming no nonzero entry: P is all zeros
    assert any("P is all zeros" in c.value for c in at.caption)
    at = on("steering", runs="eval-a,eval-b", p="outcome=1")
    assert not any(c.value.startswith("Every score is 0") for c in at.caption)


def test_pickers_open_on_the_demos_compared_systems_when_the_store_has_them():
    import pandas as pd

    from app.widgets import story_runs

    runs = pd.DataFrame([
        {"run_id": "t-1", "kind": "eval", "name": "trained", "started_at": 1},
        {"run_id": "c-old", "kind": "eval", "name": "cascade", "started_at": 2},
        {"run_id": "x", "kind": "eval", "name": "trained-cost-t10", "started_at": 3},
        {"run_id": "c-new", "kind": "eval", "name": "cascade", "started_at": 4},
        {"run_id": "train", "kind": "train", "name": "strongest", "started_at": 5},
    ])
    assert story_runs(runs) == ["c-new", "t-1"]  # the demo's order, the newest of each name, no sweep or train run
    assert story_runs(runs.assign(name="other")) == []


def test_a_deep_link_opens_its_vector(app_store):
    at = on("steering", runs="eval-a,eval-b", p="outcome=1,gpt-5=1")
    assert at.slider(key="p-gpt-5").value == 1.0 and at.slider(key="p-compute").value == 0.0
    assert next(m.value for m in at.markdown if m.value.startswith("**Ranking:**")).split()[1] == "eval-a"


def test_a_deep_link_opens_a_trajectory(app_store):
    at = on("rollouts", run="eval-b", task="t2")
    assert at.selectbox(key="pick-run").value == "eval-b" and at.selectbox(key="pick-task").value == "t2"
    assert any("verdict" in m.value for m in at.markdown)
    assert any(m.value == "**gold answer**\n\nanswer 2" for m in at.markdown)  # beside the final answer


def test_prices_of_another_provider_reprice_every_cost(app_store):
    at = on("steering", runs="eval-a,eval-b")
    logged = next(c.value for c in at.caption if c.value.startswith("total cost"))
    at.selectbox(key="provider").set_value("deepinfra").run()
    repriced = next(c.value for c in at.caption if c.value.startswith("total cost"))
    expected = load_report(Store(app_store), ["eval-a", "eval-b"], pricing="deepinfra").reprice.repriced_total_usd.sum()
    assert repriced != logged and f"${expected:.4f} (deepinfra prices)" in repriced
    assert at.query_params["pricing"] == "deepinfra"


def test_the_heat_map_splits_by_domain(app_store):
    at = on("tools", runs="eval-a,eval-b")
    at.radio(key="heat-by").set_value("domain").run()
    assert at.selectbox(key="heat-value").options == ["maths", "shop"] and not problems(at)


def test_training_page_plots_the_steps_and_the_linked_evaluations(app_store):
    at = on("training", run="train-x")
    assert problems(at) == [] and len(at.get("plotly_chart")) >= 3
    linked = at.dataframe[-1].value
    assert list(linked.train_step) == [1, 3] and list(linked.accuracy) == [0.5, 1.0]


def test_rewards_follow_lab_reward_within_each_group(app_store):
    trajs = queries.trajectories_df(Store(app_store), ["eval-a"])
    P = {"outcome": 1.0, "compute": 1.0}
    features = FeatureFrame.of(trajs)
    rewards = group_rewards(features, P)
    assert (rewards[rewards.outcome == 0].reward == 0).all()  # gated on the outcome, whatever else
    assert set(rewards.group) == {"t1", "t2", "t3"}  # the logged group ids
    names = features.names
    R, A, _ = rescore([json.loads(t) for t in trajs.tool_counts_json], trajs.outcome, trajs.cost_usd, trajs.latency_s,
                      names[:-3], np.array([P.get(n, 0.0) for n in names]), list(trajs.task_id))
    assert np.allclose(rewards.reward, R) and np.allclose(rewards.advantage, A)  # what `orchestra rescore` computes


def test_a_stale_link_still_opens():
    names = ["gpt-5", "outcome", "compute", "latency"]
    assert parse_vector("outcome=2,nope=1,compute=x,gpt-5=0.5", names) == {
        "gpt-5": 0.5, "outcome": 1.0, "compute": 0.0, "latency": 0.0}
    assert parse_vector(None, names) == {"gpt-5": 0.0, "outcome": 1.0, "compute": 1.0, "latency": 0.0}


def test_a_click_on_a_pareto_point_names_its_run():
    event = {"selection": {"points": [{"customdata": ["eval-a"], "x": 1, "y": 0.5}, {"x": 2, "y": 0.7}]}}
    assert clicked_runs(event) == ["eval-a"] and clicked_runs({"selection": {"points": []}}) == []


def test_ranking_is_best_first(app_store):
    trajs = queries.trajectories_df(Store(app_store), ["eval-a", "eval-b"])
    P = {"outcome": 1.0, "gpt-5": 1.0}
    features = FeatureFrame.of(trajs)
    table = preference_ranking(features, ["eval-a", "eval-b"], P)
    assert list(table["rank"]) == [1, 2] and table.preference_score.is_monotonic_decreasing
    names = features.names
    expected = preference_scores(trajs, ["eval-a", "eval-b"], names[:-3], np.array([P.get(n, 0.0) for n in names]))
    assert dict(zip(table.run_id, table.preference_score)) == pytest.approx(
        dict(zip(expected.run_id, expected.preference_score)))  # the report's preference score


def test_the_app_imports_neither_torch_nor_the_trainer(app_store):
    """Every page rendered in a fresh process: the dashboard must start fast and stay away from the GPU stack."""
    script = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({MAIN!r}, default_timeout=120).run()\n"
        f"for page in {list(PAGES)!r}:\n"
        "    at.switch_page(f'views/{page}.py').run()\n"
        "    assert not at.exception, at.exception\n"
        "print(sorted(m for m in ('torch', 'trainer', 'transformers', 'trl') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_judged_trajectory_shows_both_grades_and_keeps_the_judges_cost_out_of_the_rollouts(tmp_path, make_run,
                                                                                               monkeypatch):
    from lab.records import StepRecord

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
