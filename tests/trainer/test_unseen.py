"""The configurations training never drew: the held-out tool subset is none of the training examples'
subsets, keeps a cheaper model to pick, removes as few tools as it can, and is refused in one line when
training drew every subset; the held-out prices are the config's held-out provider."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.errors import LabInputError
from lab.toolkit import load_toolkit
from tests.conftest import TINY_MODEL
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.unseen import HELD_OUT_PRICES, HELD_OUT_TOOLS, held_out_tool_subset, trained_subsets, unseen_settings

TOOLKIT = load_toolkit("paper-small")
FEATURES = TOOLKIT.feature_names
ANSWER_SLOTS = [name for tool in TOOLKIT.tools if tool.name == "answer" for name in tool.slots]
#: Every proper subset of the features, as training would hold them (in the toolkit's order): a held-out
#: subset removes at least one tool.
SUBSETS = [tuple(f for f in FEATURES if f in chosen)
           for size in range(1, len(FEATURES)) for chosen in itertools.combinations(FEATURES, size)]


@settings(max_examples=60, deadline=None)
@given(drawn=st.sets(st.sampled_from([*SUBSETS, tuple(FEATURES)])), seed=st.integers(0, 3))
def test_the_held_out_subset_was_never_drawn_and_keeps_a_cheaper_answer(drawn, seed):
    kept = held_out_tool_subset(TOOLKIT, drawn, seed)
    if kept is None:   # only when training drew every subset with two answer slots
        assert all(s in drawn for s in SUBSETS if sum(a in s for a in ANSWER_SLOTS) >= 2)
        return
    assert kept not in drawn and sum(a in kept for a in ANSWER_SLOTS) >= 2
    assert list(kept) == [f for f in FEATURES if f in kept]
    # as few tools removed as any subset that qualifies
    fewer = [s for s in SUBSETS if len(s) > len(kept) and s not in drawn and sum(a in s for a in ANSWER_SLOTS) >= 2]
    assert not fewer, fewer
    assert held_out_tool_subset(TOOLKIT, drawn, seed) == kept   # the same seed, the same subset


def test_when_training_offers_every_tool_one_is_removed_and_the_seed_picks_which():
    picked = {held_out_tool_subset(TOOLKIT, {tuple(FEATURES)}, seed=seed) for seed in range(20)}
    assert all(len(kept) == len(FEATURES) - 1 for kept in picked) and len(picked) > 1


def test_the_settings_follow_the_config(tmp_path, world):
    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), model="tiny-qwen3", tiny_model=TINY_MODEL,
                                 toolkit="paper-small", families=["frames", "hle"], tool_subset_min=0.5,
                                 examples_per_task=4, held_out_pricing="deepinfra", report_to="none", seed=0)
    prices, tools = unseen_settings(config)
    assert (prices.name, prices.pricing, prices.features) == (HELD_OUT_PRICES, "deepinfra", None)
    drawn = {example.features for example in TrainingEnvironment(config).examples()}
    assert tools.name == HELD_OUT_TOOLS and tools.features not in drawn and tools.pricing == "default"
    (removed,) = [f for f in FEATURES if f not in tools.features]
    assert tools.description == f"held-out tools (without {removed} ({TOOLKIT.feature_models()[removed]}))"
    assert unseen_settings(config, (HELD_OUT_PRICES,)) == (prices,)


def test_no_subset_left_is_refused_when_asked_for_and_left_out_otherwise(tmp_path, world, monkeypatch):
    """paper-small always leaves one (training keeps a slot of every tool), so training is made to have
    drawn them all."""
    assert held_out_tool_subset(TOOLKIT, {*SUBSETS, tuple(FEATURES)}, seed=0) is None
    monkeypatch.setattr("trainer.unseen.held_out_tool_subset", lambda toolkit, drawn, seed: None)
    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), model="tiny-qwen3", tiny_model=TINY_MODEL,
                                 toolkit="paper-small", families=["frames"], report_to="none")
    with pytest.raises(LabInputError, match="every subset of its tools was offered in training") as info:
        unseen_settings(config)
    assert "\n" not in str(info.value)
    assert [s.name for s in unseen_settings(config, required=False)] == [HELD_OUT_PRICES]


def test_the_warm_starts_subsets_count_as_seen(tmp_path, world):
    """The warm start draws more examples per task than GRPO: the subsets it trained on are not unseen."""
    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), model="tiny-qwen3", tiny_model=TINY_MODEL,
                                 toolkit="paper-small", families=["frames"], tool_subset_min=0.5, examples_per_task=1,
                                 warm_start={"orchestrators": ["scripted:random"], "examples_per_task": 6},
                                 report_to="none", seed=0)
    environment = TrainingEnvironment(config)
    seen = trained_subsets(config, environment)
    assert {e.features for e in environment.examples(6)} == seen > {e.features for e in environment.examples(1)}
    (_, tools) = unseen_settings(config)
    assert tools.features not in seen
