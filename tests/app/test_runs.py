"""The runs page (`app/views/runs.py`, the page the app opens on) in Streamlit's AppTest.

What a user would notice: every logged run is listed, a simulated one marked; an empty store says
what to do.
"""

from __future__ import annotations

from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, started


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("runs")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("runs")


def test_the_runs_page_lists_every_run(app_store):
    at = started()
    (table,) = at.dataframe
    assert set(table.value.run_id) == {"eval-a", "eval-b", "eval-step1", "eval-step3", "train-x"}
    assert table.value.set_index("run_id").loc["eval-a", "simulated"]  # scripted orchestrator: marked


def test_the_compared_systems_come_first_with_their_numbers_and_playground_runs_only_when_asked(tmp_path, make_run,
                                                                                              monkeypatch):
    from lab.store import Store

    store = Store(tmp_path / "story.duckdb")
    specs = [("trained", "hf:m", {"t1": [1], "t2": [0]}),
             ("cascade", "scripted:cheapest-first", {"t1": [0], "t2": [0]}),
             ("trained-cost-t20", "hf:m", {"t1": [1], "t2": [1]}),
             ("trained-speed-t20", "hf:m", {"t1": [0], "t2": [1]})]
    for name, orchestrator, outcomes in specs:
        run, items = make_run(name, outcomes, orchestrator=orchestrator)
        store.write_run(run)
        store.write_trajectories(items)
        store.finish_run(name)
    run, items = make_run("played", {"t1": [1]}, orchestrator="hf:m")
    store.write_run(run.model_copy(update={"kind": "playground"}))
    store.write_trajectories(items)
    monkeypatch.setenv("ORCHESTRA_DB", str(store.path))
    table = started().dataframe[0].value
    assert list(table.name[:2]) == ["cascade", "trained"]  # the demo's compared systems, in the demo's order
    assert set(table.name[2:]) == {"trained-cost-t20", "trained-speed-t20"}
    assert table.group.iloc[2] == table.group.iloc[3] == "2 · sweep of hf:m"
    first = table.iloc[1]
    assert first.accuracy == 0.5 and first.accuracy_ci.startswith("[") and first.cents_per_task > 0
    at = started()
    at.multiselect(key="f-kind").set_value(["playground"]).run()
    assert list(at.dataframe[0].value.name) == ["played"]
