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
from trainer.sft import warm_start_options

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


def unseen_settings(config: OrchestraGRPOConfig, names: tuple[str, ...] = UNSEEN_NAMES,
                    required: bool = True) -> tuple[UnseenSetting, ...]:
    """The settings `names` asks for, in `UNSEEN_NAMES` order. When training offered every tool subset
    there is no held-out one: refused in one line when `required` (the user named it), else left out."""
    settings = []
    if HELD_OUT_PRICES in names:
        settings.append(UnseenSetting(HELD_OUT_PRICES, config.held_out_pricing, None,
                                      f"held-out prices ({config.held_out_pricing})"))
    if HELD_OUT_TOOLS in names:
        environment = TrainingEnvironment(config)
        kept = held_out_tool_subset(environment.toolkit, trained_subsets(config, environment), config.seed)
        if kept is None and required:
            raise LabInputError(f"toolkit '{config.toolkit}': every subset of its tools was offered in training; no "
                                f"held-out tool subset is left (leave out `{HELD_OUT_TOOLS}`)")
        if kept is not None:
            models = environment.toolkit.feature_models()   # a slot's model, so a reader sees what went
            removed = ", ".join(f"{f} ({models[f]})" if models.get(f) else f
                                for f in environment.toolkit.feature_names if f not in kept)
            settings.append(UnseenSetting(HELD_OUT_TOOLS, "default", kept, f"held-out tools (without {removed})"))
    return tuple(settings)


def trained_subsets(config: OrchestraGRPOConfig, environment: TrainingEnvironment) -> set[tuple[str, ...]]:
    """Every tool subset a training example offered, the warm start's included (it draws its own number of
    examples per task, and a task's first draws are the same whatever that number is)."""
    warm = warm_start_options(config)["examples_per_task"] if config.warm_start else 0
    per_task = max(config.examples_per_task, warm)
    return {example.features for example in environment.examples(per_task)}


def held_out_tool_subset(toolkit: Toolkit, drawn: set[tuple[str, ...]], seed: int) -> tuple[str, ...] | None:
    """A subset of the toolkit's features that is none of `drawn` (the training examples' subsets), in
    which the tool with the most slots (`answer` in the slot toolkits: what ends a task) keeps two slots
    or more, so a cost-saving instruction still has a cheaper model to pick. Another tool may go whole,
    which training never does (every slot tool keeps a slot there): the fewest features removed, chosen
    with `seed` among the subsets of that size. None when training drew every such subset."""
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
    return None
