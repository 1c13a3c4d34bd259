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
