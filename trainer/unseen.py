"""Configurations training never drew, for the paper's generalisation question (its unseen-tools and
unseen-pricing tables): does what GRPO taught hold when the prices or the offered tools change?

Training randomises, per example, the provider whose prices the catalog shows and the subset of tools
offered (`trainer.examples.draw_examples`). Two settings are held out of that:

- `HELD_OUT_PRICES`: the config's `held_out_pricing`, a provider table training never draws;
- `HELD_OUT_TOOLS`: a tool subset no training example was offered, the fewest tools removed, chosen by
  the config's seed among those (`held_out_tool_subset`).

`trainer.evidence` runs the start and the trained model under each, with the cost-saving and the
accuracy-only training instructions, and reports their contrast beside the one at the evaluation's own
prices and tools.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from lab.errors import LabInputError
from lab.toolspec import Toolkit
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment

#: The names `instructions=` (and `orchestra train evidence --instruction`) take for the two settings.
HELD_OUT_PRICES, HELD_OUT_TOOLS = "held-out-prices", "held-out-tools"
UNSEEN_NAMES = (HELD_OUT_PRICES, HELD_OUT_TOOLS)


@dataclass(frozen=True)
class UnseenSetting:
    """Prices and tools an evaluation runs with: `features` None offers every tool of the toolkit."""

    name: str                              # HELD_OUT_PRICES or HELD_OUT_TOOLS
    pricing: str                           # provider table of the tools' prices
    features: tuple[str, ...] | None       # the tools (slots) offered, None for all
    description: str                       # what changed, as tables print it

    def label(self, instruction: str) -> str:
        """The run label of an instruction under this setting ("<model> | <label>" in the evidence's runs)."""
        return f"{self.description}: {instruction}"


def unseen_settings(config: OrchestraGRPOConfig, names: tuple[str, ...] = UNSEEN_NAMES) -> tuple[UnseenSetting, ...]:
    """The settings `names` asks for, in `UNSEEN_NAMES` order."""
    settings = []
    if HELD_OUT_PRICES in names:
        settings.append(UnseenSetting(HELD_OUT_PRICES, config.held_out_pricing, None,
                                      f"held-out prices ({config.held_out_pricing})"))
    if HELD_OUT_TOOLS in names:
        environment = TrainingEnvironment(config)
        kept = held_out_tool_subset(environment.toolkit, {e.features for e in environment.examples()}, config.seed)
        removed = ", ".join(f for f in environment.toolkit.feature_names if f not in kept)
        settings.append(UnseenSetting(HELD_OUT_TOOLS, "default", kept, f"held-out tools (without {removed})"))
    return tuple(settings)


def held_out_tool_subset(toolkit: Toolkit, drawn: set[tuple[str, ...]], seed: int) -> tuple[str, ...]:
    """A subset of the toolkit's features that is none of `drawn` (the training examples' subsets), in
    which the tool with the most slots (`answer` in the slot toolkits: what ends a task) keeps two slots
    or more, so a cost-saving instruction still has a cheaper model to pick. Another tool may go whole,
    which training never does (every slot tool keeps a slot there): the fewest features removed, chosen
    with `seed` among the subsets of that size."""
    features = toolkit.feature_names
    widest = max((list(tool.slots) for tool in toolkit.tools if tool.slots), key=len, default=[])
    for removed in range(1, len(features)):
        candidates = []
        for dropped in itertools.combinations(features, removed):
            kept = tuple(f for f in features if f not in dropped)
            if kept in drawn or (len(widest) >= 2 and sum(s in kept for s in widest) < 2):
                continue
            candidates.append(kept)
        if candidates:
            return random.Random(seed).choice(candidates)
    raise LabInputError(f"toolkit '{toolkit.name}': every subset of its tools was offered in training; no held-out "
                        "tool subset is left (run the evidence without `held-out-tools`)")
