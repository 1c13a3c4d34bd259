"""Training examples (`trainer.examples`) randomise the offered tools, their prices and the preference
as the paper's recipe does, the same way for the same seed."""

from __future__ import annotations

from collections import Counter

import pytest

from lab.preference import OBJECTIVES, preference_pairs
from lab.toolkit import load_toolkit
from trainer.examples import draw_examples, training_providers


class Task:
    def __init__(self, i):
        self.task_id, self.question = f"t{i}", f"question {i}"


@pytest.mark.parametrize("toolkit_name", ["paper-small", "default"])
def test_examples_randomise_tools_prices_and_preferences_as_the_paper_does(toolkit_name):
    toolkit = load_toolkit(toolkit_name)
    pricings = training_providers(toolkit_name, lambda p: load_toolkit(toolkit_name, pricing=p), [], "deepinfra")
    assert "deepinfra" not in pricings and len(pricings) >= 2
    examples = draw_examples([Task(i) for i in range(40)], toolkit, pricings, per_task=3, subset_min=0.5, seed=7)
    again = draw_examples([Task(i) for i in range(40)], toolkit, pricings, per_task=3, subset_min=0.5, seed=7)
    assert examples == again  # sha256-seeded: the same config gives the same examples everywhere
    assert len({e.features for e in examples}) > 5 and len(Counter(e.pricing for e in examples)) >= 2
    train_instructions = {p.instruction for p in preference_pairs("train")}
    names = toolkit.feature_names
    for e in examples:
        assert len(e.features) >= round(0.5 * len(names)) and set(e.features) <= set(names)
        for tool in toolkit.tools:  # a slot tool keeps at least one slot
            assert not tool.slots or set(tool.slots) & set(e.features)
        assert e.instruction in train_instructions
        weights = dict(e.preference)
        assert list(weights) == [*names, *OBJECTIVES]
        assert all(weights[n] == 0 for n in names if n not in e.features)  # P never rewards a tool not offered


def test_training_instructions_restrict_the_pairs_drawn_and_the_curve_follows_them(tmp_path):
    """A recipe trained on two kinds of P draws only those (every task sees both over its draws), and the
    learning curve's default instructions are the same two."""
    from trainer.config import OrchestraGRPOConfig
    from trainer.curve import curve_instructions

    chosen = ["Get the answer right; money is no object.", "Be accurate but keep the bill as low as you can."]
    toolkit = load_toolkit("paper-small")
    examples = draw_examples([Task(i) for i in range(30)], toolkit, ["together", "openrouter"], per_task=4,
                             subset_min=1.0, seed=3, instructions=chosen)
    assert Counter(e.instruction for e in examples).keys() == set(chosen)
    unrestricted = draw_examples([Task(i) for i in range(30)], toolkit, ["together", "openrouter"], per_task=4,
                                 subset_min=1.0, seed=3)
    assert len({e.instruction for e in unrestricted}) > 2
    config = OrchestraGRPOConfig(output_dir=str(tmp_path), toolkit="paper-small", training_instructions=chosen)
    assert [c.label for c in curve_instructions(config)] == chosen
