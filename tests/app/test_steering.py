"""The preference-steering page (`app/views/steering.py`) in Streamlit's AppTest.

What a user would notice: a preference slider re-ranks the systems and the vector is in the URL; a link
naming a vector opens it; a ranking where every score is 0 says why; another provider's prices reprice
every cost; the ranking is best first with the report's preference scores; an empty store says what to do.
"""

from __future__ import annotations

import numpy as np
import pytest

from lab.report.api import load_report
from lab.report.metrics import preference_scores
from lab.scoring import FeatureFrame, preference_ranking
from lab.store import Store, queries
from tests.helpers.dashboard import assert_renders, assert_says_the_store_is_empty, on


def test_the_page_renders_on_a_seeded_store(app_store):
    assert_renders("steering")


def test_an_empty_store_says_what_to_do(empty_store):
    assert_says_the_store_is_empty("steering")


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


def test_a_deep_link_opens_its_vector(app_store):
    at = on("steering", runs="eval-a,eval-b", p="outcome=1,gpt-5=1")
    assert at.slider(key="p-gpt-5").value == 1.0 and at.slider(key="p-compute").value == 0.0
    assert next(m.value for m in at.markdown if m.value.startswith("**Ranking:**")).split()[1] == "eval-a"


def test_prices_of_another_provider_reprice_every_cost(app_store):
    at = on("steering", runs="eval-a,eval-b")
    logged = next(c.value for c in at.caption if c.value.startswith("total cost"))
    at.selectbox(key="provider").set_value("deepinfra").run()
    repriced = next(c.value for c in at.caption if c.value.startswith("total cost"))
    expected = load_report(Store(app_store), ["eval-a", "eval-b"],
                           pricing="deepinfra").reprice.repriced_total_usd.sum()
    assert repriced != logged and f"${expected:.4f} (deepinfra prices)" in repriced
    assert at.query_params["pricing"] == "deepinfra"


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


@pytest.mark.parametrize("preset", ["Keep it cheap and quick; I can live with some mistakes.",
                                    "Prefer the open-weight Qwen3-32B model whenever it can do the job.",
                                    "Use the local document search rather than asking large models."])
def test_a_preset_moves_every_slider_to_its_values(app_store, preset):
    from lab.preference import preference_pairs

    at = on("steering", runs="eval-a,eval-b", p="outcome=1,gpt-5=1")
    at.selectbox(key="preset").set_value(preset).run()
    pair = next(p for split in ("train", "eval") for p in preference_pairs(split) if p.instruction == preset)
    sliders = {s.key.removeprefix("p-"): s.value for s in at.slider if s.key.startswith("p-")}
    expected = {name: 0.0 for name in sliders} | {name: value for name, value in pair.weights.items()
                                                  if name in sliders}
    assert sliders == expected  # gpt-5, set by the link, is 0 under every one of these presets
    assert at.query_params["p"] == ",".join(f"{k}={v:g}" for k, v in expected.items() if v)
    # a preset weighing a model none of these runs offers (Llama) is not offered: it would mean something else
    assert not any("Llama" in option for option in at.selectbox(key="preset").options)


def test_a_model_named_weight_reaches_every_slot_that_model_fills():
    from app.steering_logic import preset_values, slider_label
    from lab.preference import PreferencePair

    models = {"search-1": "gpt-5", "answer-1": "gpt-5", "answer-2": "qwen3-32b"}
    names = ["search-1", "answer-1", "answer-2", "outcome", "compute", "latency"]
    pair = PreferencePair(instruction="x", weights={"outcome": 1.0, "gpt-5": 1.0}, split="train")
    assert preset_values(pair, names, models) == {"search-1": 1.0, "answer-1": 1.0, "answer-2": 0.0, "outcome": 1.0,
                                                  "compute": 0.0, "latency": 0.0}
    assert slider_label("answer-2", models) == "answer-2 (qwen3-32b)" and slider_label("compute", models) == "compute"


def test_the_behaviour_panel_lays_an_orchestrators_instructions_side_by_side(tmp_path, make_run, monkeypatch):
    store = Store(tmp_path / "behaviour.duckdb")
    for run_id, outcomes, tool, instruction in (("cheap", [1, 0], "qwen3-32b", "Keep the bill low."),
                                                ("accurate", [1, 1], "gpt-5", "Money is no object.")):
        run, items = make_run(run_id, {"t1": outcomes[:1], "t2": outcomes[1:]}, tool=tool, orchestrator="hf:m",
                              config={"preference_instruction": instruction, "variant": {"preference": "outcome=1"}})
        store.write_run(run)
        store.write_trajectories(items)
        store.finish_run(run_id)
    monkeypatch.setenv("ORCHESTRA_DB", str(store.path))
    at = on("steering")
    table = next(d.value for d in at.dataframe if "instruction" in d.value.columns)
    assert list(table.instruction) == ["Keep the bill low.", "Money is no object."]
    assert list(table.accuracy) == [0.5, 1.0] and "qwen3-32b 50%" in table["top tools"].iloc[0]


def test_one_sample_per_task_folds_the_all_zero_reward_table(app_store):
    at = on("steering", runs="eval-step1,eval-step3")
    fold = next(e for e in at.expander if e.label.startswith("Rewards and advantages"))
    assert any("every reward is 0" in c.value for c in fold.caption)
