"""What training rolls out in: the tasks, their grader, and the tools of each randomised example.

The same `EvalSource` evaluation uses (`lab.eval.sources`), so training and evaluation grade with one
grader and call one set of tool implementations. Tools are built per (provider, feature subset) and
cached: simulated models and the sandbox are cheap to build, the search index is shared.
"""

from __future__ import annotations

from typing import Any

from lab.eval.config import EvalConfig
from lab.eval.sources import EvalSource, load_source
from lab.toolkit import build_tools, load_toolkit, with_retrieval_top_k
from lab.tools.base import Tool
from lab.toolspec import Toolkit
from trainer.config import OrchestraGRPOConfig
from trainer.examples import Example, draw_examples, training_providers


class TrainingEnvironment:
    """Tasks by id, the grader, toolkits per provider and tools per example.

    Without `split` it is the training environment: the train split, cut to `task_limit`. With a split it
    serves an evaluation, which sees the whole split even when that split is the train split.
    """

    def __init__(self, config: OrchestraGRPOConfig, split: str | None = None) -> None:
        self.config = config
        self.source: EvalSource = load_source(EvalConfig.build(benchmark=config.benchmark,
                                                               split=split or config.train_split,
                                                               toolkit=config.toolkit))
        # `families` selects among the offline world's tasks, the only ones that have a family
        tasks = [t for t in self.source.tasks
                 if not config.families or getattr(t, "family", None) in config.families]
        if config.task_limit and split is None:
            tasks = tasks[: config.task_limit]
        self.tasks = {t.task_id: t for t in tasks}
        self._toolkits: dict[str, Toolkit] = {}
        self._tools: dict[tuple[str, tuple[str, ...]], dict[str, Tool]] = {}
        self.toolkit = self.toolkit_for("default")  # column order of the reward features

    @property
    def features(self) -> list[str]:
        return self.toolkit.feature_names

    def toolkit_for(self, pricing: str) -> Toolkit:
        if pricing not in self._toolkits:
            toolkit = load_toolkit(self.config.toolkit, pricing=pricing)
            if self.config.retrieval_top_k is not None:  # the released training's 30 documents per search
                toolkit = with_retrieval_top_k(toolkit, self.config.retrieval_top_k) or toolkit
            self._toolkits[pricing] = toolkit
        return self._toolkits[pricing]

    def examples(self, per_task: int | None = None) -> list[Example]:
        """The randomised examples (`per_task` each, default `examples_per_task`); the first draws of a
        task are the same whatever `per_task` is."""
        config = self.config
        pricings = training_providers(config.toolkit, self.toolkit_for, list(config.pricing_providers),
                                      config.held_out_pricing)
        return draw_examples(list(self.tasks.values()), self.toolkit, pricings, per_task or config.examples_per_task,
                             config.tool_subset_min, config.seed, list(config.training_instructions),
                             cycle=config.paired_instructions)

    def tools_for(self, example: Example) -> dict[str, Tool]:
        """The example's tools (its subset at its prices) plus the task's own (a domain's functions)."""
        key = (example.pricing, example.features)
        if key not in self._tools:
            self._tools[key] = build_tools(self.toolkit_for(example.pricing).subset_features(list(example.features)))
        task_tools = self.source.tools_for(self.tasks[example.task_id])
        return {**self._tools[key], **task_tools} if task_tools else self._tools[key]

    def task(self, task_id: str) -> Any:
        return self.tasks[task_id]
