"""The Pareto page (`app/views/pareto.py`) in Streamlit's AppTest: it renders on a store with eval and
training runs, and an empty store says what to do. (A click on a point: `test_selection.py`.)"""

from __future__ import annotations

from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("pareto")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("pareto")


def test_the_default_frontier_leaves_the_privileged_oracle_out(tmp_path, make_run, monkeypatch):
    from lab.store import Store
    from tests.helpers.dashboard import charts, on, problems

    store = Store(tmp_path / "oracle.duckdb")
    specs = (("oracle", "scripted:oracle", "qwen3-32b", {"t1": [1], "t2": [1]}),
             ("cheap", "scripted:cheapest-first", "qwen3-32b", {"t1": [1], "t2": [0]}),
             ("dear", "scripted:always-strongest", "gpt-5", {"t1": [1], "t2": [1]}))
    for name, orchestrator, tool, outcomes in specs:
        run, items = make_run(name, outcomes, tool=tool, orchestrator=orchestrator)
        store.write_run(run)
        store.write_trajectories(items)
        store.finish_run(name)
    monkeypatch.setenv("ORCHESTRA_DB", str(store.path))
    at = on("pareto", runs="oracle,cheap,dear")
    assert problems(at) == []
    table = next(d.value for d in at.dataframe if "on_frontier" in d.value.columns).set_index("run_id")
    assert table.on_frontier.to_dict() == {"oracle": False, "cheap": True, "dear": True}
    (figure, *_) = charts(at)
    markers = {t.customdata[0]: t for t in figure.data if t.customdata is not None}
    assert markers["oracle"].marker.symbol == "diamond" and markers["dear"].error_y.arrayminus is not None
    assert all(text.replace(".", "").isdigit() for text in figure.layout.xaxis.ticktext)  # "0.5", "1", not "4 5 6"
    assert any(c.value.startswith("Area under the non-privileged frontier:") for c in at.caption)
    at.toggle(key="pareto-privileged").set_value(True).run()
    table = next(d.value for d in at.dataframe if "on_frontier" in d.value.columns).set_index("run_id")
    assert table.on_frontier["oracle"] and not table.on_frontier["dear"]  # as accurate, and cheaper
